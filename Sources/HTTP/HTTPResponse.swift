/// An answer to serialize. `Content-Length`, `Date`, `Connection` and the request id are added by
/// the server; handlers set status, content type, extra headers and the body.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// Fields for the access-log line only, never sent: the error code, reason, app…
    package var logAnnotations: [(key: String, value: String)]

    package init(
        status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        logAnnotations: [(key: String, value: String)] = []
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.logAnnotations = logAnnotations
    }

    /// A JSON answer from bytes that already are JSON.
    package static func json(_ status: Int, _ body: [UInt8], headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// A minimal error body `{"error":{"code","message"}}` for errors the HTTP layer answers itself.
    package static func error(_ status: Int, code: String, message: String) -> HTTPResponse {
        var body = Array(#"{"error":{"code":""#.utf8)
        body += code.utf8
        body += Array(#"","message":""#.utf8)
        for byte in message.utf8 where byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte >= 0x20 {
            body.append(byte)
        }
        body += Array(#""}}"#.utf8)
        var response = HTTPResponse.json(status, body)
        response.logAnnotations = [("code", code)]
        return response
    }

    package func header(_ name: String) -> String? {
        headers.first(where: { $0.name.lowercased() == name.lowercased() })?.value
    }
}

/// Reason phrases for the statuses Entitle uses.
enum HTTPStatusText {
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
