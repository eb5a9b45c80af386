internal import COpenSSL
import Foundation

/// SHA-256 (FIPS 180-4).
public enum SHA256 {
    public static let byteCount = 32

    /// The digest of `data`.
    public static func hash(_ data: some ContiguousBytes) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        data.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                _ = COpenSSL.SHA256(
                    input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                    output.baseAddress)
            }
        }
        return digest
    }

    /// The digest as lower-case hex (fingerprints).
    public static func hexDigest(_ data: some ContiguousBytes) -> String {
        Hex.encode(hash(data))
    }
}

/// Lower-case hexadecimal text.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Bytes from hex text (either case, no separators); nil when the text is not hex.
    public static func decode(_ text: String) -> [UInt8]? {
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
