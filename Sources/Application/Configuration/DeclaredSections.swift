// The configuration sections declared with `ConfigurationSection` (one member a line: key,
// environment variable, kind and range, and where its value goes). docs/CONFIGURATION.md is
// tested against these (ConfigurationDocumentTests).

extension ServerSettings {
    /// `"server"`, with the `ENTITLE_*` variables that override it.
    package static let section = ConfigurationSection<ServerSettings>(
        "server",
        [
            .init("host", environment: "ENTITLE_HOST", .text) { $0.host = $1.text ?? $0.host },
            .init("port", environment: "ENTITLE_PORT", .integer(0...65535)) { $0.port = $1.integer ?? $0.port },
            .init("eventLoops", environment: "ENTITLE_EVENT_LOOPS", .integer(0...256)) { $0.eventLoops = $1.integer ?? $0.eventLoops },
            .init("maxBodyBytes", environment: "ENTITLE_MAX_BODY_BYTES", .integer(1...(1 << 30))) {
                $0.maxBodyBytes = $1.integer ?? $0.maxBodyBytes
            },
            .init("maxConnections", environment: "ENTITLE_MAX_CONNECTIONS", .integer(1...1_000_000)) {
                $0.maxConnections = $1.integer ?? $0.maxConnections
            },
            .init("blockingThreads", environment: "ENTITLE_BLOCKING_THREADS", .integer(0...1024)) {
                $0.blockingThreads = $1.integer ?? $0.blockingThreads
            },
            .init("outboundThreads", environment: "ENTITLE_OUTBOUND_THREADS", .integer(0...1024)) {
                $0.outboundThreads = $1.integer ?? $0.outboundThreads
            },
            .init("shutdownGraceSeconds", .seconds(maximum: 3600)) { $0.shutdownGraceSeconds = $1.seconds ?? $0.shutdownGraceSeconds },
            .init("headerTimeoutSeconds", .seconds(maximum: 3600)) { $0.headerTimeoutSeconds = $1.seconds ?? $0.headerTimeoutSeconds },
            .init("idleTimeoutSeconds", .seconds(maximum: 3600)) { $0.idleTimeoutSeconds = $1.seconds ?? $0.idleTimeoutSeconds },
        ])
}

extension DeliverySettings {
    /// `"delivery"`: webhook and forwarding deliveries (see docs/EVENTS.md).
    package static let section = ConfigurationSection<DeliverySettings>(
        "delivery",
        [
            .init("timeoutSeconds", .seconds(maximum: 300)) { $0.timeoutSeconds = $1.seconds ?? $0.timeoutSeconds },
            .init("firstRetrySeconds", .seconds(maximum: 86_400)) { $0.firstRetrySeconds = $1.seconds ?? $0.firstRetrySeconds },
            .init("maxRetrySeconds", .seconds(maximum: 86_400)) { $0.maxRetrySeconds = $1.seconds ?? $0.maxRetrySeconds },
            .init("retryWindowSeconds", .seconds(maximum: 30 * 86_400)) { $0.retryWindowSeconds = $1.seconds ?? $0.retryWindowSeconds },
            .init("concurrencyPerEndpoint", .integer(1...64)) { $0.concurrencyPerEndpoint = $1.integer ?? $0.concurrencyPerEndpoint },
            .init("caFile", .file) { $0.caFile = $1.text ?? $0.caFile },
        ])
}

extension ConsoleSettings {
    /// `"console"`: the support console at `/console` (docs/CONSOLE.md).
    package static let section = ConfigurationSection<ConsoleSettings>(
        "console",
        [
            .init("enabled", .flag) { $0.enabled = $1.flag ?? $0.enabled },
            .init("sessionHours", .integer(1...720)) { $0.sessionHours = $1.integer ?? $0.sessionHours },
            .init("sessionSecretFile", .secretFile(minimumBytes: 32)) { $0.sessionSecret = $1.bytes ?? $0.sessionSecret },
            .init("secureCookies", .flag) { $0.secureCookies = $1.flag ?? $0.secureCookies },
        ])
}
