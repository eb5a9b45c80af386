internal import COpenSSL
import Foundation

/// HMAC-SHA256 (RFC 2104), for webhook signatures (Standard Webhooks `v1`).
public enum HMACSHA256 {
    public static let byteCount = 32

    public static func authenticationCode(key: [UInt8], message: some ContiguousBytes) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let done = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { input in
                code.withUnsafeMutableBufferPointer { output in
                    HMAC(
                        EVP_sha256(), keyBytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(keyBytes.count),
                        input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, output.baseAddress, &length) != nil
                }
            }
        }
        // HMAC() fails only when OpenSSL cannot allocate.
        guard done, length == byteCount else { fatalError("HMAC-SHA256 failed") }
        return code
    }
}
