/// Why a byte sequence is not the JSON document it should be; `offset` is a byte offset.
package struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String
    package let offset: Int
    package var description: String { "\(message) at byte \(offset)" }
}

/// A strict RFC 8259 parser: one value, no trailing garbage, no duplicate member names,
/// valid UTF-8, bounded nesting. Pure: bytes in, value or a precise error out.
package struct JSONParser {
    package static let maximumDepth = 64

    /// Parses one document. With `rejectDuplicateKeys` false, repeated member names are kept in
    /// `JSONObject.members` (lookups see the first) so a caller can report them in its own words.
    package static func parse(
        _ bytes: some Collection<UInt8>,
        rejectDuplicateKeys: Bool = true
    ) throws(JSONParseError) -> JSONValue {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var parser = Cursor(bytes: buffer, rejectDuplicateKeys: rejectDuplicateKeys)
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.position == buffer.count else { throw parser.error("unexpected data after the JSON value") }
            return value
        }
    }

    package static func parse(_ text: String, rejectDuplicateKeys: Bool = true) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), rejectDuplicateKeys: rejectDuplicateKeys)
    }
}

private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let rejectDuplicateKeys: Bool
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, rejectDuplicateKeys: Bool) {
        self.bytes = bytes
        self.rejectDuplicateKeys = rejectDuplicateKeys
    }

    func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: position) }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(byte)))'")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count,
            memcmpEqual(bytes.baseAddress! + position, literal.utf8Start, count)
        else { throw error("invalid literal") }
        position += count
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        position += 1
        var object = JSONObject()
        var seen = Set<String>()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let memberStart = position
            let key = try parseString()
            let isDuplicate = !seen.insert(key).inserted
            if isDuplicate && rejectDuplicateKeys {
                throw JSONParseError(message: "duplicate member \"\(key)\"", offset: memberStart)
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth + 1)
            if isDuplicate { object.appendDuplicate(key: key, value: value) } else { object.append(key: key, value: value) }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(object)
            case nil: throw error("unexpected end of input in an object")
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            case nil: throw error("unexpected end of input in an array")
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        var isInteger = true
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { throw error("invalid number") }
        if first == UInt8(ascii: "0") {
            position += 1
            if let next = current, isDigit(next) { throw error("leading zero in a number") }
        } else {
            while let digit = current, isDigit(digit) { position += 1 }
        }
        if current == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let digit = current, isDigit(digit) else { throw error("expected a digit after '.'") }
            while let digit = current, isDigit(digit) { position += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard let digit = current, isDigit(digit) else { throw error("expected a digit in the exponent") }
            while let digit = current, isDigit(digit) { position += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(message: "number out of range", offset: start)
        }
        return .double(value)
    }

    mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        let start = position
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw JSONParseError(message: "invalid UTF-8 in a string", offset: start)
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("unescaped control character in a string") }
            position += 1
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while true {
            guard let byte = current else { throw error("unterminated string") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: scratch, as: UTF8.self) else {
                    throw JSONParseError(message: "invalid UTF-8 in a string", offset: start)
                }
                return text
            case UInt8(ascii: "\\"):
                try parseEscape(into: &scratch)
            case 0..<0x20:
                position -= 1
                throw error("unescaped control character in a string")
            default:
                scratch.append(byte)
            }
        }
    }

    mutating func parseEscape(into scratch: inout [UInt8]) throws(JSONParseError) {
        guard let escaped = current else { throw error("unterminated escape") }
        position += 1
        switch escaped {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("unpaired surrogate in a \\u escape") }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("unpaired surrogate in a \\u escape")
            }
            scratch.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            position -= 1
            throw error("invalid escape")
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}

@inline(__always) private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

private func memcmpEqual(_ lhs: UnsafePointer<UInt8>, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    for index in 0..<count where lhs[index] != rhs[index] { return false }
    return true
}

extension JSONParser {
    /// The object in JSON text Entitle wrote itself (a stored column): nil when there is none or
    /// it is damaged, so a damaged copy reads as missing rather than failing a customer's whole read.
    package static func storedObject(_ text: String?) -> JSONObject? {
        guard let text, !text.isEmpty, case .object(let object)? = try? parse(Array(text.utf8)) else { return nil }
        return object
    }
}
