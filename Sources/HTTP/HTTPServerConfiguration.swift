/// Everything the HTTP server needs to know; built once by the composition layer.
public struct HTTPServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port; `HTTPServer.port` tells which.
    public var port = 8080
    /// Event-loop threads; 0 means one per core.
    public var eventLoops = 0
    public var limits = HTTPParserLimits()
    public var maxConnections = 10_000
    /// From the first byte of a request until its head is complete (and between body reads).
    public var headerTimeout = 10.0
    /// Between requests on a keep-alive connection, and for a stalled write.
    public var idleTimeout = 60.0
    /// How long graceful shutdown lets in-flight requests finish.
    public var shutdownGrace = 10.0

    public init() {}
}

/// One finished request, for access logs and metrics (never the body).
public struct HTTPRequestRecord: Sendable {
    public let method: String
    public let route: String
    public let status: Int
    public let durationSeconds: Double
    public let bytesSent: Int
    public let requestID: String
}

/// Receives what the server does. Calls come on event-loop threads; `loop` identifies which, so an
/// observer can keep per-loop state without locks.
public protocol HTTPServerObserver: Sendable {
    func requestCompleted(_ record: HTTPRequestRecord, loop: Int)
    /// After each batch of events: the moment to flush anything buffered for this loop.
    func loopIterationEnded(loop: Int)
}
