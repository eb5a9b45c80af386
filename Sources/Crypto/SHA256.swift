internal import COpenSSL
package import Foundation

/// SHA-256 (FIPS 180-4).
package enum SHA256 {
    package static let byteCount = 32

    /// The digest of `data`.
    ///
    /// OpenSSL 3's one-shot `SHA256()` looks the algorithm up in the provider tables and makes a
    /// digest context on every call, which costs more than hashing a short message (an API key,
    /// a v1 offer payload). The algorithm is fetched once and contexts are reused from a pool.
    package static func hash(_ data: some ContiguousBytes) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        guard let context = contexts.take() ?? EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        data.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                var length: UInt32 = 0
                let hashed =
                    EVP_DigestInit_ex2(context, algorithm.raw, nil) == 1
                    && EVP_DigestUpdate(context, input.baseAddress, input.count) == 1
                    && EVP_DigestFinal_ex(context, output.baseAddress, &length) == 1
                // Only allocation failure inside OpenSSL gets here: fall back to the one-shot call.
                if !hashed { _ = EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, algorithm.raw, nil) }
            }
        }
        contexts.give(context)
        return digest
    }

    /// The digest of `first` followed by `second`, without joining them.
    package static func hash(_ first: some ContiguousBytes, _ second: some ContiguousBytes) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        guard let context = contexts.take() ?? EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        let hashed = first.withUnsafeBytes { one in
            second.withUnsafeBytes { two in
                digest.withUnsafeMutableBufferPointer { output in
                    var length: UInt32 = 0
                    return EVP_DigestInit_ex2(context, algorithm.raw, nil) == 1
                        && EVP_DigestUpdate(context, one.baseAddress, one.count) == 1
                        && EVP_DigestUpdate(context, two.baseAddress, two.count) == 1
                        && EVP_DigestFinal_ex(context, output.baseAddress, &length) == 1
                }
            }
        }
        contexts.give(context)
        // Only allocation failure inside OpenSSL gets here.
        guard hashed else { fatalError("SHA-256 failed") }
        return digest
    }

    /// `EVP_MD_fetch(NULL, "SHA256", NULL)`, held for the process (a fetched EVP_MD is immutable
    /// and may be shared between threads).
    private static let algorithm = FetchedDigest(name: "SHA256")
    private static let contexts = ContextPool { EVP_MD_CTX_free($0) }

    /// The digest as lower-case hex (fingerprints).
    package static func hexDigest(_ data: some ContiguousBytes) -> String {
        Hex.encode(hash(data))
    }
}

/// A fetched digest implementation. Invariant for `@unchecked Sendable`: it is never modified
/// after the fetch and OpenSSL documents fetched algorithms as shareable.
final class FetchedDigest: @unchecked Sendable {
    let raw: OpaquePointer

    init(name: String) {
        guard let fetched = EVP_MD_fetch(nil, name, nil) else { fatalError("OpenSSL has no \(name)") }
        raw = fetched
    }

    deinit { EVP_MD_free(raw) }
}

/// Lower-case hexadecimal text.
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Bytes from hex text (either case, no separators); nil when the text is not hex.
    package static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
