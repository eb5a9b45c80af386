internal import COpenSSL
internal import CShims
import Synchronization

/// Owns one `EVP_PKEY`.
///
/// Invariant that makes it `Sendable`: the key is loaded or generated once and never mutated
/// afterwards; OpenSSL 3 allows concurrent signing and verification with one immutable key.
/// Per-operation state (`EVP_PKEY_CTX`) is created per call and never shared.
final class EVPKey: @unchecked Sendable {
    let raw: OpaquePointer
    /// Initialised `EVP_PKEY_CTX`s ready for sign or verify. Creating and initialising one costs
    /// about as much as half a signature in OpenSSL 3, so they are reused; each is lent to one
    /// caller at a time (taken out of the pool while in use).
    private let signingContexts = ContextPool { EVP_PKEY_CTX_free($0) }
    private let verifyingContexts = ContextPool { EVP_PKEY_CTX_free($0) }

    init(taking raw: OpaquePointer) { self.raw = raw }

    deinit { EVP_PKEY_free(raw) }

    enum Operation { case sign, verify }

    /// Lends an initialised context for `operation`; returns nil when OpenSSL cannot make one.
    func withContext<T>(_ operation: Operation, _ body: (OpaquePointer) -> T) -> T? {
        let pool = operation == .sign ? signingContexts : verifyingContexts
        var context = pool.take()
        if context == nil {
            guard let fresh = EVP_PKEY_CTX_new(raw, nil) else { return nil }
            let initialised = operation == .sign ? EVP_PKEY_sign_init(fresh) : EVP_PKEY_verify_init(fresh)
            guard initialised == 1 else {
                EVP_PKEY_CTX_free(fresh)
                return nil
            }
            context = fresh
        }
        let result = body(context!)
        pool.give(context!)
        return result
    }

    /// Fails unless this is an EC key on P-256; the error names what it is instead.
    func requireP256() throws(CryptoError) {
        let baseID = EVP_PKEY_get_base_id(raw)
        guard baseID == EVP_PKEY_EC else {
            let name = baseID == EVP_PKEY_RSA ? "RSA" : OBJ_nid2sn(baseID).map { String(cString: $0) } ?? "type \(baseID)"
            throw CryptoError.unsupportedKey("\(name) key")
        }
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(raw, "group", &buffer, buffer.count, &length) == 1 else {
            clearOpenSSLErrors()
            throw CryptoError.unsupportedKey("EC key without a named curve")
        }
        let curve = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard curve == "prime256v1" else { throw CryptoError.unsupportedKey("EC key on curve \(curve)") }
    }

    /// SubjectPublicKeyInfo DER of the (public part of the) key.
    func spkiDER() throws(CryptoError) -> [UInt8] {
        let length = i2d_PUBKEY(raw, nil)
        guard length > 0 else { throw CryptoError.internalFailure(drainOpenSSLErrors("i2d_PUBKEY failed")) }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var pointer = buffer.baseAddress
            return i2d_PUBKEY(raw, &pointer)
        }
        guard written == length else { throw CryptoError.internalFailure(drainOpenSSLErrors("i2d_PUBKEY failed")) }
        return output
    }

    /// The private key as PKCS#8 PEM (`BEGIN PRIVATE KEY`), unencrypted.
    func privateKeyPEM() throws(CryptoError) -> String {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.raw, raw, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.internalFailure(drainOpenSSLErrors("PEM_write_bio_PrivateKey failed"))
        }
        return String(decoding: bio.writtenBytes, as: UTF8.self)
    }

    /// SubjectPublicKeyInfo DER as a `BEGIN PUBLIC KEY` PEM.
    static func publicKeyPEM(_ der: [UInt8]) -> String { pem(der, label: "PUBLIC KEY") }

    /// DER as a PEM block of `label`, 64 characters a line (RFC 7468).
    static func pem(_ der: [UInt8], label: String) -> String {
        let body = Base64.encode(der)
        var lines = ["-----BEGIN \(label)-----"]
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses SubjectPublicKeyInfo DER into a key of any type.
    static func fromSPKI(_ der: [UInt8]) throws(CryptoError) -> EVPKey {
        let key = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var pointer = buffer.baseAddress
            let key = d2i_PUBKEY(nil, &pointer, buffer.count)
            // Trailing bytes after the structure mean the input was not exactly one key.
            if key != nil, pointer != buffer.baseAddress.map({ $0 + buffer.count }) {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else { throw CryptoError.invalidKey(drainOpenSSLErrors("not a SubjectPublicKeyInfo DER")) }
        return EVPKey(taking: key)
    }
}

/// Up to 16 idle OpenSSL contexts of one kind (`EVP_PKEY_CTX` of one key and operation,
/// `EVP_MD_CTX`); each is used by one caller at a time, and freed with `free` when not kept.
final class ContextPool: Sendable {
    /// A context parked in the pool; only the caller that takes it out uses it.
    private struct Idle: @unchecked Sendable { let context: OpaquePointer }

    private let idle = Mutex<[Idle]>([])
    private let free: @Sendable (OpaquePointer) -> Void
    private static let limit = 16

    init(free: @escaping @Sendable (OpaquePointer) -> Void) { self.free = free }

    func take() -> OpaquePointer? { idle.withLock { $0.popLast()?.context } }

    func give(_ context: OpaquePointer) {
        let parked = Idle(context: context)
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < Self.limit else { return false }
            idle.append(parked)
            return true
        }
        if !kept { free(context) }
    }

    deinit {
        for parked in idle.withLock({ $0 }) { free(parked.context) }
    }
}
