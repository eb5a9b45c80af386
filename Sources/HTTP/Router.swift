/// Maps method and path to a handler. Patterns are literal segments and `{name}` parameters,
/// e.g. `/v1/subscribers/{appAccountToken}`. A path that matches with another method answers
/// 405 with `Allow`; no match at all answers 404. `HEAD` is served by the `GET` route.
package struct Router: Sendable {
    private struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Segment]
        let handler: HTTPHandler
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private var entries: [Route] = []

    package init() {}

    package mutating func add(_ method: String, _ pattern: String, _ handler: @escaping HTTPHandler) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part -> Segment in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        entries.append(Route(method: method, pattern: pattern, segments: Array(segments), handler: handler))
    }

    /// Every route as `(method, pattern)`, in the order added (for documentation and tests that
    /// walk the whole API).
    package var routes: [(method: String, pattern: String)] { entries.map { ($0.method, $0.pattern) } }

    /// Finds the route, records its pattern and parameters on the context, and runs it.
    package func handle(_ context: HTTPRequestContext) {
        // Split on the byte `/` (see `HTTPRequest.path`): the segments are the same Substrings.
        let pathSegments = context.request.path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .dropFirst().map { Substring($0) }
        let method = context.request.method == "HEAD" ? "GET" : context.request.method
        var allowed: [String] = []
        for route in entries {
            guard let parameters = match(route.segments, pathSegments) else { continue }
            guard route.method == method else {
                allowed.append(route.method)
                continue
            }
            context.route = route.pattern
            context.pathParameters = parameters
            route.handler(context)
            return
        }
        if allowed.isEmpty {
            context.respond(.error(404, code: "NOT_FOUND", message: "no such endpoint"))
        } else {
            if allowed.contains("GET") { allowed.append("HEAD") }
            var response = HTTPResponse.error(
                405, code: "METHOD_NOT_ALLOWED",
                message: "use \(allowed.joined(separator: ", "))")
            response.headers.append(("Allow", allowed.joined(separator: ", ")))
            context.respond(response)
        }
    }

    private func match(_ segments: [Segment], _ path: [Substring]) -> [String: String]? {
        guard segments.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, path) {
            switch segment {
            case .literal(let literal):
                guard part == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty, let decoded = String(part).percentDecoded() else { return nil }
                parameters[name] = decoded
            }
        }
        return parameters
    }
}
