import Synchronization

/// Handles one request: inspect `context.request`, then call `context.respond(_:)` exactly once,
/// right away (CPU-bound work, on the event loop) or later from any thread (work that waits).
package typealias HTTPHandler = @Sendable (HTTPRequestContext) -> Void

/// One request in flight: the request, what routing learned, and the way to answer it.
///
/// Invariant that makes it `Sendable`: `route` and `pathParameters` are written by the router
/// before the handler runs and read by the server after `respond`; `respond` itself is safe from
/// any thread (the first call wins and hops to the connection's event loop).
package final class HTTPRequestContext: @unchecked Sendable {
    package let request: HTTPRequest
    package let requestID: String
    /// The matched route pattern (for logs and metrics), `unmatched` when none.
    package var route = "unmatched"
    package var pathParameters: [String: String] = [:]
    /// The connected client's address (the proxy's, behind one), "" when unknown.
    package let peer: String
    /// Monotonic start time, seconds.
    let startedAt: Double
    /// Headers every answer to this request carries (set before routing: the rate limit's).
    package var extraHeaders: [(name: String, value: String)] = []
    /// Who the request was authenticated as before routing (the rate limit reads it first), for
    /// the handler not to authenticate it again.
    package var authenticated: (any Sendable)?
    /// Told the status of the answer as it is sent (set before routing: the failed-verification
    /// limit counts what the handler answered).
    package var answered: (@Sendable (Int) -> Void)?
    /// Last touches to the answer before it is sent, whoever made it (set before the handler
    /// runs: response signing covers the body the handler answered, an error's too).
    package var finishing: (@Sendable (HTTPResponse) -> HTTPResponse)?
    private let responded = Atomic<Bool>(false)
    /// What to stop when the client goes away before its answer (nil once it has).
    private let abandonHandlers = Mutex<[@Sendable () -> Void]?>([])
    private let deliver: @Sendable (HTTPRequestContext, HTTPResponse) -> Void

    init(
        request: HTTPRequest, requestID: String, startedAt: Double, peer: String = "",
        deliver: @escaping @Sendable (HTTPRequestContext, HTTPResponse) -> Void
    ) {
        self.peer = peer
        self.request = request
        self.requestID = requestID
        self.startedAt = startedAt
        self.deliver = deliver
    }

    /// Public for tests that drive a router in-process.
    package convenience init(testing request: HTTPRequest, deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.init(request: request, requestID: "test", startedAt: 0) { _, response in deliver(response) }
    }

    /// Runs `handler` once if the client goes away before this request is answered (it closed
    /// the connection, or its sending side, as nginx counts a client abort), at once when it
    /// already has: work done only for this answer, a call to Apple say, stops there.
    package func onAbandon(_ handler: @escaping @Sendable () -> Void) {
        let registered = abandonHandlers.withLock { handlers -> Bool in
            guard handlers != nil else { return false }
            handlers!.append(handler)
            return true
        }
        if !registered { handler() }
    }

    /// The connection saw its client leave with this request in flight.
    func abandon() {
        let handlers = abandonHandlers.withLock { handlers in
            defer { handlers = nil }
            return handlers ?? []
        }
        for handler in handlers { handler() }
    }

    /// Sends the answer. Later calls are ignored.
    package func respond(_ response: HTTPResponse) {
        guard !responded.exchange(true, ordering: .acquiringAndReleasing) else { return }
        answered?(response.status)
        var response = finishing?(response) ?? response
        response.headers += extraHeaders
        deliver(self, response)
    }
}
