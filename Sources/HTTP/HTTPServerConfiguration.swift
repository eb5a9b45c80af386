/// Everything the HTTP server needs to know; built once by the composition layer.
package struct HTTPServerConfiguration: Sendable {
    package var host = "127.0.0.1"
    /// 0 picks a free port; `HTTPServer.port` tells which.
    package var port = 8080
    /// Event-loop threads; 0 means one per core.
    package var eventLoops = 0
    package var limits = HTTPParserLimits()
    /// Clamped at start-up to what `RLIMIT_NOFILE` leaves (see `HTTPServer.warnings`).
    package var maxConnections = 10_000
    /// The whole request (head and body) must arrive within this many seconds plus one second per
    /// `minimumReceiveRate` bytes received: a slow-trickle client cannot hold a connection forever.
    package var headerTimeout = 10.0
    package var minimumReceiveRate = 8 * 1024.0
    /// Between requests on a keep-alive connection.
    package var idleTimeout = 60.0
    /// Queued answers must drain within this many seconds plus one second per `minimumSendRate`
    /// bytes queued since the queue was last empty (a one-byte-a-second reader is cut off).
    package var writeTimeout = 10.0
    package var minimumSendRate = 8 * 1024.0
    /// After an answer that closes the connection while the client may still be sending (413, 431…),
    /// what arrives is read and discarded for up to `lingerTimeout` seconds (or until the client
    /// is silent for a second), so the client reads the answer instead of a reset (nginx's
    /// lingering close).
    package var lingerTimeout = 5.0
    /// How long graceful shutdown lets in-flight requests finish.
    package var shutdownGrace = 10.0
    /// Sent on every answer whose handler did not set a header of the same name, including the
    /// ones the HTTP layer makes itself (400, 404, 405, 408, 413, 431…): security headers belong on
    /// every answer, not only on those a handler remembered.
    package var defaultHeaders: [(name: String, value: String)] = []

    package init() {}

    /// Answers queued beyond this stop the parsing of further pipelined requests and reading.
    var maxQueuedOutputBytes: Int { 256 * 1024 }
    /// Input buffered beyond one whole request (head, body, one read) stops reading.
    var maxBufferedInputBytes: Int { limits.maxHeaderBytes + limits.maxBodyBytes + 64 * 1024 }
}

/// One finished request, for access logs and metrics (never the body).
package struct HTTPRequestRecord: Sendable {
    package let method: String
    package let route: String
    package let status: Int
    package let durationSeconds: Double
    package let bytesSent: Int
    package let requestID: String
    /// What the handler attached for the log line: error code, reason, app… (empty for most 2xx).
    package let annotations: [(key: String, value: String)]
    /// The request path, for answers that matched no route (404 lines say what was asked for).
    package let path: String?
}

/// Receives what the server does. Calls come on event-loop threads; `loop` identifies which, so an
/// observer can keep per-loop state without locks.
package protocol HTTPServerObserver: Sendable {
    func requestCompleted(_ record: HTTPRequestRecord, loop: Int)
    /// After each batch of events: the moment to flush anything buffered for this loop.
    func loopIterationEnded(loop: Int)
}
