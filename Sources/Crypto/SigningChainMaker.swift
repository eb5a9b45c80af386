internal import COpenSSL
package import Foundation

/// Makes a private signing chain shaped like Apple's App Store chain: a P-256 root, an
/// intermediate with Apple's WWDR marker extension and a leaf with the App Store receipt-signing
/// marker (docs/APP_STORE.md §3.4), so what the leaf signs passes the same chain checks as
/// Apple's data. For the test store and examples only: nothing trusts it unless configured to.
package enum SigningChainMaker {
    package struct Chain: Sendable {
        package let root: Certificate
        package let intermediate: Certificate
        package let leaf: Certificate
        package let leafKey: P256.Signing.PrivateKey
    }

    /// A fresh chain valid from `yearsBack` before `now` until `years` after it; `name` goes into
    /// each subject. Valid in the past too: Entitle checks signed data at its signing date, and a
    /// population (`entitle test-store populate`) signs months back on the moved clock.
    package static func make(name: String, now: Date, years: Int = 30, yearsBack: Int = 10) throws(CryptoError) -> Chain {
        let rootKey = try P256.Signing.PrivateKey()
        let intermediateKey = try P256.Signing.PrivateKey()
        let leafKey = try P256.Signing.PrivateKey()
        let notBefore = now.addingTimeInterval(-Double(yearsBack) * 365 * 86_400 - 86_400)
        let seconds = Double(years + yearsBack) * 365 * 86_400
        let root = try certificate(
            subject: "\(name) Root", issuer: nil, key: rootKey, signer: rootKey, serial: 1, notBefore: notBefore,
            notAfter: notBefore.addingTimeInterval(seconds), kind: .root)
        let intermediate = try certificate(
            subject: "\(name) Intermediate", issuer: root, key: intermediateKey, signer: rootKey, serial: 2, notBefore: notBefore,
            notAfter: notBefore.addingTimeInterval(seconds - 86_400), kind: .intermediate)
        let leaf = try certificate(
            subject: "\(name) Signing Leaf", issuer: intermediate, key: leafKey, signer: intermediateKey, serial: 3,
            notBefore: notBefore, notAfter: notBefore.addingTimeInterval(seconds - 2 * 86_400), kind: .leaf)
        return Chain(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }

    private enum Kind {
        case root, intermediate, leaf

        /// `nid` extensions take OpenSSL's configuration syntax; an `oid` one is Apple's marker, an ASN.1 NULL.
        var extensions: [(nid: Int32?, oid: String?, value: String)] {
            switch self {
            // Key identifiers too: verifiers in strict mode (Apple's Python library's) require them.
            case .root:
                [
                    (NID_basic_constraints, nil, "critical,CA:TRUE"), (NID_key_usage, nil, "critical,keyCertSign,cRLSign"),
                    (NID_subject_key_identifier, nil, "hash"),
                ]
            case .intermediate:
                [
                    (NID_basic_constraints, nil, "critical,CA:TRUE,pathlen:0"), (NID_key_usage, nil, "critical,keyCertSign,cRLSign"),
                    (NID_subject_key_identifier, nil, "hash"), (NID_authority_key_identifier, nil, "keyid:always"),
                    (nil, "1.2.840.113635.100.6.2.1", ""),
                ]
            case .leaf:
                [
                    (NID_basic_constraints, nil, "critical,CA:FALSE"), (NID_key_usage, nil, "critical,digitalSignature"),
                    (NID_subject_key_identifier, nil, "hash"), (NID_authority_key_identifier, nil, "keyid:always"),
                    (nil, "1.2.840.113635.100.6.11.1", ""),
                ]
            }
        }
    }

    private static func certificate(
        subject: String, issuer: Certificate?, key: P256.Signing.PrivateKey, signer: P256.Signing.PrivateKey, serial: Int,
        notBefore: Date, notAfter: Date, kind: Kind
    ) throws(CryptoError) -> Certificate {
        guard let x509 = X509_new() else { throw .internalFailure("X509_new") }
        defer { X509_free(x509) }
        func check(_ result: Int32, _ what: String) throws(CryptoError) {
            guard result == 1 else { throw .internalFailure(drainOpenSSLErrors(what)) }
        }
        try check(X509_set_version(x509, 2), "X509_set_version")
        try check(ASN1_INTEGER_set(X509_get_serialNumber(x509), serial), "serial")
        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.timeIntervalSince1970)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.timeIntervalSince1970)) != nil
        else { throw .internalFailure(drainOpenSSLErrors("validity")) }
        guard let name = X509_NAME_new() else { throw .internalFailure("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        try check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, subject, -1, -1, 0), "subject CN")
        try check(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, "Entitle test store (not Apple)", -1, -1, 0), "subject O")
        try check(X509_set_subject_name(x509, name), "subject")
        try check(X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.raw) } ?? name), "issuer")
        try check(X509_set_pubkey(x509, key.key.raw), "public key")
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.raw ?? x509, x509, nil, nil, 0)
        for (nid, oid, value) in kind.extensions {
            let created: OpaquePointer?
            if let nid {
                created = X509V3_EXT_conf_nid(nil, &context, nid, value)
            } else {
                created = try marker(oid: oid ?? "")
            }
            guard let created else { throw .internalFailure(drainOpenSSLErrors("extension \(value)")) }
            defer { X509_EXTENSION_free(created) }
            try check(X509_add_ext(x509, created, -1), "add extension")
        }
        guard X509_sign(x509, signer.key.raw, EVP_sha256()) > 0 else { throw .internalFailure(drainOpenSSLErrors("X509_sign")) }
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(x509, &der)
        guard length > 0, let der else { throw .internalFailure(drainOpenSSLErrors("i2d_X509")) }
        defer { CRYPTO_free(der, #file, #line) }
        return try Certificate(derEncoded: UnsafeBufferPointer(start: der, count: Int(length)))
    }

    /// A non-critical extension of `oid` whose value is an ASN.1 NULL (Apple's markers).
    private static func marker(oid: String) throws(CryptoError) -> OpaquePointer? {
        guard let object = OBJ_txt2obj(oid, 1) else { throw .internalFailure(drainOpenSSLErrors("OID \(oid)")) }
        defer { ASN1_OBJECT_free(object) }
        let null: [UInt8] = [0x05, 0x00]
        guard let octets = ASN1_OCTET_STRING_new() else { throw .internalFailure("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(octets) }
        guard ASN1_OCTET_STRING_set(octets, null, Int32(null.count)) == 1 else { throw .internalFailure("octet string") }
        return X509_EXTENSION_create_by_OBJ(nil, object, 0, octets)
    }
}
