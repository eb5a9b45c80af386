/// Base64 (RFC 4648 §4, `+` `/`, padded output) and base64url (§5, `-` `_`, unpadded output).
///
/// Decoding tolerates missing padding, accepts correct padding, and rejects anything else:
/// a character outside the alphabet (including the other variant's), whitespace, a length that
/// cannot be base64, or non-zero leftover bits (which would let two texts decode to the same bytes).
package enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardTable = decodingTable(standardAlphabet)
    private static let urlTable = decodingTable(urlAlphabet)

    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        encode(Array(bytes), alphabet: standardAlphabet, pad: true)
    }

    package static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        encode(Array(bytes), alphabet: urlAlphabet, pad: false)
    }

    package static func decode(_ text: some StringProtocol) throws(CryptoError) -> [UInt8] {
        try decode(Array(text.utf8), table: standardTable)
    }

    package static func decodeURL(_ text: some StringProtocol) throws(CryptoError) -> [UInt8] {
        try decode(Array(text.utf8), table: urlTable)
    }

    /// Decodes a slice of base64url text (used by the JWS parser without copying segments out first).
    package static func decodeURL(_ characters: ArraySlice<UInt8>) throws(CryptoError) -> [UInt8] {
        try decode(characters, table: urlTable)
    }

    // MARK: - Implementation

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            output.append(alphabet[Int(chunk >> 6 & 63)])
            output.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            let second = remaining == 2 ? UInt32(bytes[index + 1]) : 0
            let chunk = UInt32(bytes[index]) << 16 | second << 8
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            if remaining == 2 { output.append(alphabet[Int(chunk >> 6 & 63)]) }
            if pad { output.append(contentsOf: Array(repeating: UInt8(ascii: "="), count: 3 - remaining)) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func decodingTable(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }

    private static func decode(_ characters: [UInt8], table: [UInt8]) throws(CryptoError) -> [UInt8] {
        try decode(characters[...], table: table)
    }

    private static func decode(_ characters: ArraySlice<UInt8>, table: [UInt8]) throws(CryptoError) -> [UInt8] {
        try characters.withUnsafeBufferPointer { buffer throws(CryptoError) in
            try table.withUnsafeBufferPointer { table throws(CryptoError) in try decode(buffer, table: table) }
        }
    }

    private static func decode(
        _ characters: UnsafeBufferPointer<UInt8>,
        table: UnsafeBufferPointer<UInt8>
    ) throws(CryptoError) -> [UInt8] {
        var end = characters.endIndex
        var padding = 0
        while end > characters.startIndex, characters[end - 1] == UInt8(ascii: "=") {
            end -= 1
            padding += 1
        }
        let count = end - characters.startIndex
        guard padding <= 2 else { throw CryptoError.invalidBase64("too much padding") }
        guard count % 4 != 1 else { throw CryptoError.invalidBase64("impossible length \(count)") }
        if padding > 0 && (count + padding) % 4 != 0 { throw CryptoError.invalidBase64("wrong padding") }

        var output: [UInt8] = []
        output.reserveCapacity(count * 3 / 4 + 1)
        var accumulator: UInt32 = 0
        var bits = 0
        var index = characters.startIndex
        while index < end {
            let value = table[Int(characters[index])]
            guard value != 0xFF else {
                throw CryptoError.invalidBase64("character outside the alphabet at position \(index - characters.startIndex)")
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
            index += 1
        }
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else {
            throw CryptoError.invalidBase64("non-zero trailing bits")
        }
        return output
    }
}
