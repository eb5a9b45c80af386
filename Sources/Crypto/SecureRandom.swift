internal import COpenSSL
package import Foundation
import Synchronization

/// Randomness from OpenSSL's DRBG (seeded by the kernel, no system call per use).
///
/// Foundation's `UUID()` on Linux opens `/dev/urandom` for every UUID, which costs more than
/// formatting a whole offer answer; nonces are made here instead.
package enum SecureRandom {
    package static func bytes(_ count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&output, Int32(count)) == 1 else {
            // The DRBG failing means the process cannot make secrets at all; do not go on.
            fatalError(drainOpenSSLErrors("RAND_bytes failed"))
        }
        return output
    }

    /// A random (version 4) UUID. Offer nonces are public (they are in the answer), so 16 bytes
    /// are taken from a buffer refilled from the DRBG 4 KiB at a time: one `RAND_bytes` (and its
    /// lock) per 256 nonces instead of one per nonce.
    package static func uuid() -> UUID {
        var bytes = nonceBytes.take16()
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// DRBG output handed out 16 bytes at a time (each byte once).
private final class NonceBuffer: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var offset = 0
    }
    private let state = Mutex(State())

    func take16() -> [UInt8] {
        state.withLock { state in
            if state.offset + 16 > state.bytes.count {
                state.bytes = SecureRandom.bytes(4096)
                state.offset = 0
            }
            defer { state.offset += 16 }
            return Array(state.bytes[state.offset..<state.offset + 16])
        }
    }
}

extension SecureRandom {
    fileprivate static let nonceBytes = NonceBuffer()
}

extension UUID {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The canonical 36-character text in lower case, as Apple's signatures expect.
    package var lowercasedString: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { output in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        output[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    output[position] = Self.hexDigits[Int(byte >> 4)]
                    output[position + 1] = Self.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return 36
            }
        }
    }
}

extension UUID {
    /// True for the canonical 8-4-4-4-12 hex form in either case (what `UUID(uuidString:)`
    /// accepts), checked without Foundation's `sscanf`-based parser, which is slow on Linux.
    package static func isCanonicalText(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            switch count {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                guard (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66) else { return false }
            }
            count += 1
            if count > 36 { return false }
        }
        return count == 36
    }
}
