/// A request's query string (`a=1&b=%20`) as name–value pairs, percent-decoded by the same strict
/// rule as path parameters. Pure, so the fuzzer can run it on its own. The last of a repeated
/// name wins; a name without `=` has the empty value.
package struct QueryString: Sendable, Equatable {
    package private(set) var values: [String: String] = [:]

    /// Why a query string is refused: the name whose value is not valid percent-encoded UTF-8.
    package struct MalformedParameter: Error, Sendable, Equatable {
        package let name: String
    }

    package init(_ text: String?) throws(MalformedParameter) {
        for pair in (text ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard let value = parts.count > 1 ? String(parts[1]).percentDecoded() : "" else { throw MalformedParameter(name: name) }
            values[name] = value
        }
    }

    package subscript(name: String) -> String? { values[name] }
}

extension String {
    /// Percent-decodes; nil for a malformed escape or bytes that are not UTF-8.
    package func percentDecoded() -> String? {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
}
