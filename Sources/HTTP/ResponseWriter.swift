#if canImport(Glibc)
import Glibc
#endif

/// Serializes responses: status line, the handler's headers, then the ones the server owns.
struct ResponseSerializer {
    private var cachedDateSecond = -1
    private var cachedDate: [UInt8] = []
    private let defaultHeaders: [(lowercasedName: String, line: [UInt8])]

    init(defaultHeaders: [(name: String, value: String)] = []) {
        self.defaultHeaders = defaultHeaders.map { ($0.name.lowercased(), Array("\($0.name): \($0.value)\r\n".utf8)) }
    }

    /// `Date:` in IMF-fixdate, recomputed at most once a second.
    mutating func dateHeader() -> [UInt8] {
        var now = time(nil)
        if Int(now) != cachedDateSecond {
            cachedDateSecond = Int(now)
            var parts = tm()
            gmtime_r(&now, &parts)
            var buffer = [CChar](repeating: 0, count: 64)
            let length = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
            cachedDate = Array("Date: ".utf8) + buffer.prefix(length).map { UInt8(bitPattern: $0) } + [0x0D, 0x0A]
        }
        return cachedDate
    }

    mutating func serialize(
        _ response: HTTPResponse, requestID: String, version: HTTPVersion, keepAlive: Bool,
        omitBody: Bool, into output: inout [UInt8]
    ) {
        output.append(contentsOf: version == .http1_0 ? "HTTP/1.0 ".utf8 : "HTTP/1.1 ".utf8)
        output.append(contentsOf: String(response.status).utf8)
        output.append(0x20)
        output.append(contentsOf: HTTPStatusText.reason(response.status).utf8)
        output.append(contentsOf: [0x0D, 0x0A])
        for (name, value) in response.headers {
            output.append(contentsOf: name.utf8)
            output.append(contentsOf: [0x3A, 0x20])
            output.append(contentsOf: value.utf8)
            output.append(contentsOf: [0x0D, 0x0A])
        }
        for header in defaultHeaders where !Self.has(response, header.lowercasedName) {
            output.append(contentsOf: header.line)
        }
        // A 204 or 304 has no body by definition: a Content-Length there would claim the length
        // of a representation (RFC 9110 §8.6), not announce a body.
        if response.status != 204 && response.status != 304 {
            output.append(contentsOf: "Content-Length: ".utf8)
            output.append(contentsOf: String(response.body.count).utf8)
            output.append(contentsOf: [0x0D, 0x0A])
        }
        output.append(contentsOf: dateHeader())
        output.append(contentsOf: "X-Request-Id: ".utf8)
        output.append(contentsOf: requestID.utf8)
        output.append(contentsOf: [0x0D, 0x0A])
        if !keepAlive {
            output.append(contentsOf: "Connection: close\r\n".utf8)
        } else if version == .http1_0 {
            output.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        output.append(contentsOf: [0x0D, 0x0A])
        if !omitBody { output.append(contentsOf: response.body) }
    }

    /// Whether the handler set a header of this (lower-case) name; the length test first keeps
    /// the common case free of lower-casing.
    private static func has(_ response: HTTPResponse, _ lowercasedName: String) -> Bool {
        response.headers.contains { $0.name.utf8.count == lowercasedName.utf8.count && $0.name.lowercased() == lowercasedName }
    }
}
