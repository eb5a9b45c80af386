/// An ECDSA P-256 signature, held as the fixed-length raw `r‖s` (64 bytes, JOSE form) and
/// convertible to and from the ASN.1 DER `ECDSA-Sig-Value` that OpenSSL and the v1 offer use.
package struct ECDSASignature: Sendable, Equatable {
    package static let rawByteCount = 64
    private static let scalarByteCount = 32

    /// `r‖s`, each a 32-byte big-endian integer, left-padded with zeros.
    package let rawRepresentation: [UInt8]

    package init(rawRepresentation raw: some Collection<UInt8>) throws(CryptoError) {
        guard raw.count == Self.rawByteCount else { throw CryptoError.invalidSignatureLength(raw.count) }
        rawRepresentation = Array(raw)
    }

    /// Parses strict DER: one SEQUENCE of two positive, minimally encoded INTEGERs of at most
    /// 32 bytes each, and nothing after it. Anything else is `malformedSignature`.
    package init(derRepresentation der: some Collection<UInt8>) throws(CryptoError) {
        var reader = DERReader(bytes: Array(der))
        let sequence = try reader.readElement(tag: 0x30, name: "SEQUENCE")
        guard reader.isAtEnd else { throw CryptoError.malformedSignature("trailing bytes after the SEQUENCE") }
        var inner = DERReader(bytes: sequence)
        let r = try inner.readPositiveInteger(name: "r", maximumBytes: Self.scalarByteCount)
        let s = try inner.readPositiveInteger(name: "s", maximumBytes: Self.scalarByteCount)
        guard inner.isAtEnd else { throw CryptoError.malformedSignature("more than two INTEGERs") }
        rawRepresentation = Self.leftPad(r) + Self.leftPad(s)
    }

    /// Canonical DER (70–72 bytes typically).
    package var derRepresentation: [UInt8] {
        let r = Self.derInteger(rawRepresentation[0..<32])
        let s = Self.derInteger(rawRepresentation[32..<64])
        return [0x30, UInt8(r.count + s.count)] + r + s
    }

    private static func leftPad(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8](repeating: 0, count: scalarByteCount - bytes.count) + bytes
    }

    private static func derInteger(_ magnitude: ArraySlice<UInt8>) -> [UInt8] {
        var content = Array(magnitude.drop { $0 == 0 })
        if content.isEmpty { content = [0] }
        if content[0] & 0x80 != 0 { content.insert(0, at: 0) }
        return [0x02, UInt8(content.count)] + content
    }
}

/// Just enough DER to read an `ECDSA-Sig-Value` strictly.
private struct DERReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }

    mutating func readElement(tag: UInt8, name: String) throws(CryptoError) -> [UInt8] {
        guard position < bytes.count else { throw CryptoError.malformedSignature("missing \(name)") }
        guard bytes[position] == tag else { throw CryptoError.malformedSignature("expected \(name)") }
        position += 1
        guard position < bytes.count else { throw CryptoError.malformedSignature("truncated \(name) length") }
        var length = Int(bytes[position])
        position += 1
        if length & 0x80 != 0 {
            // Long form is only canonical for lengths ≥ 128, and needs exactly one length byte here.
            guard length == 0x81, position < bytes.count, bytes[position] >= 0x80 else {
                throw CryptoError.malformedSignature("non-canonical length of \(name)")
            }
            length = Int(bytes[position])
            position += 1
        }
        guard length <= bytes.count - position else { throw CryptoError.malformedSignature("truncated \(name)") }
        defer { position += length }
        return Array(bytes[position..<position + length])
    }

    mutating func readPositiveInteger(name: String, maximumBytes: Int) throws(CryptoError) -> [UInt8] {
        var content = try readElement(tag: 0x02, name: "INTEGER \(name)")
        guard !content.isEmpty else { throw CryptoError.malformedSignature("empty INTEGER \(name)") }
        guard content[0] & 0x80 == 0 else { throw CryptoError.malformedSignature("negative INTEGER \(name)") }
        guard content != [0] else { throw CryptoError.malformedSignature("zero INTEGER \(name)") }
        if content[0] == 0 {
            guard content.count > 1, content[1] & 0x80 != 0 else {
                throw CryptoError.malformedSignature("non-minimal INTEGER \(name)")
            }
            content.removeFirst()
        }
        guard content.count <= maximumBytes else { throw CryptoError.malformedSignature("INTEGER \(name) too large") }
        return content
    }
}
