import Foundation
import JSON

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

/// `"storage"`'s members as written: `StorageSettings(members:)` joins them (the password into
/// the URL, the default SQLite file beside the configuration).
package struct StorageMembers: Sendable {
    var sqlite: String?
    var postgresql: String?
    var password: [UInt8]?
    var poolSize: Int?

    /// `"storage"` (docs/OPERATIONS.md, "Several instances on PostgreSQL").
    package static let section = ConfigurationSection<StorageMembers>(
        "storage",
        [
            .init("sqlite", environment: "ENTITLE_SQLITE", .path) { $0.sqlite = $1.text },
            .init("postgresql", environment: "ENTITLE_STORAGE_POSTGRESQL", .text) { members, value in
                guard let url = value.text, url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
                    throw ConfigurationValueError("expected a postgresql:// URL")
                }
                members.postgresql = url
            },
            .init("passwordFile", environment: "ENTITLE_STORAGE_POSTGRESQL_PASSWORD_FILE", .secretFile(minimumBytes: 1)) {
                $0.password = $1.bytes
            },
            .init("poolSize", .integer(1...256)) { $0.poolSize = $1.integer },
        ])
}

extension MetricsSettings {
    /// `"metrics"` (docs/METRICS.md): whether the writer keeps the figures, and the exchange rates
    /// MRR and ARR are also converted with.
    package static let section = ConfigurationSection<MetricsSettings>(
        "metrics",
        [
            .init("enabled", .flag) { $0.enabled = $1.flag ?? $0.enabled },
            .init("exchangeRatesFile", .file) { settings, value in
                settings.exchangeRates = try ExchangeRates.read(file: value.text ?? "")
            },
        ])
}

extension RateLimitSettings {
    /// `"rateLimits"`: on or off, and each class's `{"perSecond", "burst"}` (`RateLimit.section`).
    package static let section = ConfigurationSection<RateLimitSettings>(
        "rateLimits",
        [
            .init("enabled", .flag) { $0.enabled = $1.flag ?? $0.enabled },
            .init("client", .object) { $0.client = try RateLimit.parse($1.object ?? [:], path: "rateLimits.client") },
            .init("server", .object) { $0.server = try RateLimit.parse($1.object ?? [:], path: "rateLimits.server") },
            .init("admin", .object) { $0.admin = try RateLimit.parse($1.object ?? [:], path: "rateLimits.admin") },
            .init("address", .object) { $0.address = try RateLimit.parse($1.object ?? [:], path: "rateLimits.address") },
            .init("failedVerification", .object) {
                $0.failedVerification = try RateLimit.parse($1.object ?? [:], path: "rateLimits.failedVerification")
            },
        ])
}

extension RateLimit {
    /// One class's limit, both members required. Bounded so the bucket's token count always
    /// converts to a whole number (the RateLimit headers).
    static let section = ConfigurationSection<(perSecond: Double?, burst: Double?)>(
        "rateLimits.<class>",
        [
            .init("perSecond", .number(0...RateLimit.maximum, above: true)) { $0.perSecond = $1.number },
            .init("burst", .number(1...RateLimit.maximum, above: false)) { $0.burst = $1.number },
        ])

    /// The limit `object` sets; its problems, each with its member's path, thrown as one.
    static func parse(_ object: JSONObject, path: String) throws(ConfigurationValueError) -> RateLimit {
        var reader = ConfigurationReader()
        var members: (perSecond: Double?, burst: Double?) = (nil, nil)
        let section = ConfigurationSection(path, Self.section.members)
        section.parse(object, into: &members, reader: &reader)
        if !reader.problems.isEmpty { throw ConfigurationValueError(nested: reader.problems) }
        guard let perSecond = members.perSecond, let burst = members.burst else {
            throw ConfigurationValueError("expected {\"perSecond\": a number above 0, \"burst\": at least 1}")
        }
        return RateLimit(perSecond: perSecond, burst: burst)
    }
}

extension StorageSettings {
    /// The settings `members` describe: SQLite beside the configuration unless PostgreSQL is named;
    /// a password file's content (one line) joined to the URL, so the file holds no secret.
    init(_ members: StorageMembers, folder: String, reader: inout ConfigurationReader) {
        self.init(sqlitePath: members.sqlite ?? ConfigurationLoader.resolve("entitle.sqlite3", in: folder))
        guard let url = members.postgresql else {
            if members.password != nil || members.poolSize != nil {
                reader.problem("storage", "\"passwordFile\" and \"poolSize\" need \"postgresql\"")
            }
            return
        }
        var settings = PostgreSQLSettings(url: url, poolSize: members.poolSize ?? 8)
        if let password = members.password {
            var components = URLComponents(string: url)
            let line = String(decoding: password, as: UTF8.self).trimmingCharacters(in: .newlines)
            let query = (components?.queryItems ?? []) + [URLQueryItem(name: "password", value: line)]
            components?.queryItems = query
            guard let joined = components?.string else {
                reader.problem("storage.postgresql", "is not a URL the password can be added to")
                return
            }
            settings.url = joined
        }
        postgresql = settings
    }
}
