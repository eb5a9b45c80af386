/// One parsed HTTP/1.x request. Header names are stored lower-cased; values as sent, trimmed.
package struct HTTPRequest: Sendable {
    package var method: String
    /// The request target as sent (origin form: path and optional query).
    package var target: String
    package var version: HTTPVersion
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(
        method: String, target: String, version: HTTPVersion = .http1_1,
        headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The target without its query. (The `?` is found among the bytes: a search by Character
    /// would break graphemes on every request for nothing, an ASCII byte ends no grapheme.)
    package var path: Substring {
        guard let mark = queryMark else { return target[...] }
        return target[..<mark]
    }

    /// The query string without `?`, if any.
    package var query: Substring? {
        guard let mark = queryMark else { return nil }
        return target[target.utf8.index(after: mark)...]
    }

    private var queryMark: String.Index? { target.utf8.firstIndex(of: UInt8(ascii: "?")) }

    /// The first value of a header; `name` must be lower-case.
    package func header(_ name: String) -> String? {
        headers.first(where: { $0.name == name })?.value
    }

    /// The last line of a header that may be repeated and is read as one comma-separated list
    /// (RFC 9110 §5.3), where the last element is the newest: `X-Forwarded-For`.
    package func lastHeader(_ name: String) -> String? {
        headers.last(where: { $0.name == name })?.value
    }

    /// Whether the connection stays open after the answer (HTTP/1.1 default on, 1.0 default off).
    package var keepAlive: Bool {
        let connection = header("connection")?.lowercased()
        switch version {
        case .http1_1: return !(connection?.contains("close") ?? false)
        case .http1_0: return connection?.contains("keep-alive") ?? false
        }
    }
}

package enum HTTPVersion: String, Sendable {
    case http1_0 = "HTTP/1.0"
    case http1_1 = "HTTP/1.1"
}
