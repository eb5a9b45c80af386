internal import COpenSSL

/// Every failure of the Crypto module. Messages name what was wrong, never key material.
package enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The PEM or DER could not be read as a key (detail from OpenSSL's error queue).
    case invalidKey(String)
    /// A key of another type or curve than P-256 (the detail names what it is).
    case unsupportedKey(String)
    /// A DER ECDSA signature that is not a canonical `SEQUENCE { INTEGER r, INTEGER s }`.
    case malformedSignature(String)
    /// A raw `r‖s` signature whose length is not 64 bytes.
    case invalidSignatureLength(Int)
    /// A certificate that is not valid DER or PEM X.509.
    case invalidCertificate(String)
    /// Text that is not valid base64 / base64url.
    case invalidBase64(String)
    /// OpenSSL failed at an operation that should not fail (out of memory, internal error).
    case internalFailure(String)

    package var description: String {
        switch self {
        case .invalidKey(let detail): "invalid key: \(detail)"
        case .unsupportedKey(let detail): "unsupported key: \(detail)"
        case .malformedSignature(let detail): "malformed DER ECDSA signature: \(detail)"
        case .invalidSignatureLength(let length): "raw ES256 signature must be 64 bytes, got \(length)"
        case .invalidCertificate(let detail): "invalid certificate: \(detail)"
        case .invalidBase64(let detail): "invalid base64: \(detail)"
        case .internalFailure(let detail): "OpenSSL failure: \(detail)"
        }
    }
}

/// Drains OpenSSL's thread-local error queue into one line, so a stale error never leaks into
/// the next operation's report.
func drainOpenSSLErrors(_ fallback: String) -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.isEmpty ? fallback : "\(fallback) (\(messages.joined(separator: "; ")))"
}

/// Clears OpenSSL's error queue without reporting it.
func clearOpenSSLErrors() { ERR_clear_error() }
