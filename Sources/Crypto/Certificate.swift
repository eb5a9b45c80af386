internal import COpenSSL
internal import CShims
package import Foundation

/// An X.509 certificate.
///
/// Invariant that makes it `Sendable`: the `X509` is parsed once and never mutated; the
/// properties read it only. OpenSSL may cache computed values inside it under its own lock.
package final class Certificate: @unchecked Sendable, Equatable, CustomStringConvertible {
    let raw: OpaquePointer
    /// The exact DER bytes, kept for fingerprints and cache keys.
    package let derRepresentation: [UInt8]

    /// Parses one DER certificate; trailing bytes are an error.
    package init(derEncoded der: some Collection<UInt8>) throws(CryptoError) {
        let bytes = Array(der)
        let parsed = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var pointer = buffer.baseAddress
            guard let certificate = d2i_X509(nil, &pointer, buffer.count) else { return nil }
            if pointer != buffer.baseAddress! + buffer.count {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else { throw CryptoError.invalidCertificate(drainOpenSSLErrors("not a DER X.509 certificate")) }
        raw = parsed
        derRepresentation = bytes
    }

    /// Parses the first certificate of a PEM text.
    package convenience init(pemEncoded pem: String) throws(CryptoError) {
        guard let first = try Certificate.allFromPEM(pem).first else {
            throw CryptoError.invalidCertificate("no PEM certificate found")
        }
        try self.init(derEncoded: first.derRepresentation)
    }

    /// Reads a file holding DER or PEM (one or more certificates).
    package static func load(contentsOf path: String) throws(CryptoError) -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CryptoError.invalidCertificate("cannot read \(path)")
        }
        let bytes = [UInt8](data)
        if let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN") {
            return try allFromPEM(text)
        }
        return [try Certificate(derEncoded: bytes)]
    }

    /// The certificate as one PEM block.
    package var pemRepresentation: String { EVPKey.pem(derRepresentation, label: "CERTIFICATE") }

    /// Every `BEGIN CERTIFICATE` block of a PEM text, in order.
    package static func allFromPEM(_ pem: String) throws(CryptoError) -> [Certificate] {
        let bio = try MemoryBIO(reading: Array(pem.utf8))
        var certificates: [Certificate] = []
        while let x509 = PEM_read_bio_X509(bio.raw, nil, nil, nil) {
            var pointer: UnsafeMutablePointer<UInt8>?
            let length = i2d_X509(x509, &pointer)
            defer {
                entitle_openssl_free(pointer)
                X509_free(x509)
            }
            guard length > 0, let pointer else { throw CryptoError.invalidCertificate(drainOpenSSLErrors("i2d_X509 failed")) }
            certificates.append(try Certificate(derEncoded: UnsafeBufferPointer(start: pointer, count: Int(length))))
        }
        // Reaching the end of the text leaves a "no start line" error behind; it is not a failure.
        clearOpenSSLErrors()
        if certificates.isEmpty { throw CryptoError.invalidCertificate("no PEM certificate found") }
        return certificates
    }

    deinit { X509_free(raw) }

    package static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derRepresentation == rhs.derRepresentation }

    // MARK: - Fields

    /// Subject distinguished name in RFC 2253 form, e.g. `CN=Apple Root CA - G3,OU=…,O=Apple Inc.,C=US`.
    package var subject: String { Self.format(X509_get_subject_name(raw)) }
    package var issuer: String { Self.format(X509_get_issuer_name(raw)) }

    /// Serial number as upper-case hex without leading zeros (as `openssl x509 -serial` prints it).
    package var serialNumberHex: String {
        guard let integer = X509_get0_serialNumber(raw), let bignum = ASN1_INTEGER_to_BN(integer, nil) else { return "" }
        defer { BN_free(bignum) }
        guard let hex = BN_bn2hex(bignum) else { return "" }
        defer { entitle_openssl_free(hex) }
        return String(cString: hex)
    }

    package var notBefore: Date { Self.date(X509_get0_notBefore(raw)) }
    package var notAfter: Date { Self.date(X509_get0_notAfter(raw)) }

    /// SHA-256 of the DER, lower-case hex.
    package var sha256Fingerprint: String { SHA256.hexDigest(derRepresentation) }

    /// True when the certificate carries an extension with this dotted OID (critical or not).
    package func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else {
            clearOpenSSLErrors()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(raw, object, -1) >= 0
    }

    /// SubjectPublicKeyInfo DER of the certificate's key, whatever its algorithm.
    package var publicKeyDER: [UInt8] {
        guard let key = X509_get0_pubkey(raw) else { return [] }
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: Int(length))
        output.withUnsafeMutableBufferPointer { buffer in
            var pointer = buffer.baseAddress
            _ = i2d_PUBKEY(key, &pointer)
        }
        return output
    }

    /// The key as a P-256 verification key, or nil when it is another algorithm or curve. It shares
    /// the key OpenSSL decoded with the certificate (decoding it again costs more than a verify).
    package var p256PublicKey: P256.Signing.PublicKey? {
        guard let key = X509_get0_pubkey(raw), EVP_PKEY_up_ref(key) == 1 else { return nil }
        let owned = EVPKey(taking: key)
        guard (try? owned.requireP256()) != nil else { return nil }
        return P256.Signing.PublicKey(validated: owned)
    }

    package var description: String { "Certificate(subject: \(subject), serial: \(serialNumberHex))" }

    // MARK: - Helpers

    private static func format(_ name: OpaquePointer?) -> String {
        guard let name, let bio = try? MemoryBIO() else { return "" }
        guard entitle_x509_name_print_rfc2253(bio.raw, name) >= 0 else { return "" }
        return String(decoding: bio.writtenBytes, as: UTF8.self)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var components = tm()
        guard let time, ASN1_TIME_to_tm(time, &components) == 1 else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
    }
}
