package import Foundation

/// HMAC-SHA256 (RFC 2104), for webhook signatures (Standard Webhooks `v1`).
///
/// Built on `SHA256` (a fetched digest and pooled contexts): OpenSSL 3's one-shot `HMAC()` looks
/// the algorithm up and allocates a MAC context on every call, which costs more than signing a
/// webhook body.
package enum HMACSHA256 {
    package static let byteCount = 32
    private static let blockSize = 64

    package static func authenticationCode(key: [UInt8], message: some ContiguousBytes) -> [UInt8] {
        var block = key.count > blockSize ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 }, message)
        return SHA256.hash(block.map { $0 ^ 0x5c }, inner)
    }
}
