/// Parses the request line and header fields of one request head (without the final CRLFCRLF).
enum HTTPHeadParser {
    static func parse(_ head: ArraySlice<UInt8>, limits: HTTPParserLimits) throws(HTTPParseError) -> HTTPRequest {
        var lines = LineIterator(head)
        guard let requestLine = try lines.next() else { throw .badRequest("empty request line") }
        var request = try parseRequestLine(requestLine)
        while let line = try lines.next() {
            guard request.headers.count < limits.maxHeaderCount else {
                throw HTTPParseError(
                    status: 431, code: "TOO_MANY_HEADERS",
                    message: "more than \(limits.maxHeaderCount) header fields")
            }
            request.headers.append(try parseField(line))
        }
        let hosts = request.headers.count { $0.name == "host" }
        if request.version == .http1_1 && hosts == 0 { throw .badRequest("HTTP/1.1 requests need a Host header") }
        if hosts > 1 { throw .badRequest("more than one Host header") }  // RFC 9112 §3.2
        return request
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .badRequest("malformed request line")
        }
        guard parts[0].allSatisfy(isTokenCharacter) else { throw .badRequest("invalid method") }
        let target = parts[1]
        guard target.first == UInt8(ascii: "/") || (target.count == 1 && target.first == UInt8(ascii: "*")),
            target.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw .badRequest("invalid request target") }
        let version: HTTPVersion
        switch String(decoding: parts[2], as: UTF8.self) {
        case "HTTP/1.1": version = .http1_1
        case "HTTP/1.0": version = .http1_0
        case let other where other.hasPrefix("HTTP/") && other.count == 8:
            throw HTTPParseError(
                status: 505, code: "HTTP_VERSION_NOT_SUPPORTED",
                message: "\(other) is not supported (HTTP/1.0 and HTTP/1.1 are)")
        default: throw .badRequest("invalid HTTP version")
        }
        return HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self),
            target: String(decoding: target, as: UTF8.self), version: version)
    }

    static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (name: String, value: String) {
        guard let first = line.first, first != 0x20, first != 0x09 else {
            throw .badRequest("folded header lines are not allowed")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .badRequest("header line without ':'") }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else { throw .badRequest("invalid header name") }
        var value = line[(colon + 1)...]
        while let byte = value.first, byte == 0x20 || byte == 0x09 { value = value.dropFirst() }
        while let byte = value.last, byte == 0x20 || byte == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 >= 0x20 || $0 == 0x09 }), !value.contains(0x7F) else {
            throw .badRequest("control character in a header value")
        }
        return (lowercasedASCII(name), String(decoding: value, as: UTF8.self))
    }

    private static func lowercasedASCII(_ bytes: ArraySlice<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { output in
            for (offset, byte) in bytes.enumerated() {
                output[offset] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            }
            return bytes.count
        }
    }

    /// RFC 9110 `tchar`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}

/// CRLF-separated lines; a bare CR or LF inside a line is an error (request smuggling vector).
struct LineIterator {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    mutating func next() throws(HTTPParseError) -> ArraySlice<UInt8>? {
        guard position < bytes.endIndex else { return nil }
        var index = position
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x0D {
                guard index + 1 < bytes.endIndex, bytes[index + 1] == 0x0A else { throw .badRequest("bare CR in the head") }
                let line = bytes[position..<index]
                position = index + 2
                return line
            }
            if byte == 0x0A { throw .badRequest("bare LF in the head") }
            if byte == 0 { throw .badRequest("NUL in the head") }
            index += 1
        }
        let line = bytes[position..<bytes.endIndex]
        position = bytes.endIndex
        return line
    }
}
