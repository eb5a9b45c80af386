import AppStore
import Entitlements
import Foundation
import HTTP
import JSON
import Storage

/// The composition: configuration → signers, authentication, routes, logging and metrics → the
/// HTTP server. `entitle serve` builds one; tests build one on port 0 or call `handle` in-process.
public final class EntitleServer: Sendable {
    public let configuration: EntitleConfiguration
    public let metrics: Metrics
    public let logger: Logger
    public let verification: [String: VerificationService]
    public let store: any FactStore
    private let router: Router
    private let httpServer: HTTPServer

    /// `logOutput` is the file descriptor for JSON log lines (standard output by default; nil discards).
    /// `store` defaults to the SQLite file of the configuration.
    public init(configuration: EntitleConfiguration, logOutput: Int32? = 1,
                revocationChecker: (any RevocationChecker)? = nil, store: (any FactStore)? = nil) throws {
        self.configuration = configuration
        let store = try store ?? SQLiteFactStore(path: configuration.storage.sqlitePath)
        self.store = store
        let loops = configuration.server.eventLoops > 0 ? configuration.server.eventLoops
            : max(1, ProcessInfo.processInfo.activeProcessorCount)
        metrics = Metrics(loops: loops)
        logger = Logger(loops: loops, metrics: metrics, output: logOutput)
        let needsOCSP = configuration.apps.contains { $0.verification.onlineChecks }
        let checker = revocationChecker ?? (needsOCSP ? OCSPRevocationChecker() : nil)
        var verification: [String: VerificationService] = [:]
        for app in configuration.apps {
            verification[app.id] = try VerificationService(app: app, revocationChecker: checker)
        }
        self.verification = verification
        var subscribers: [String: SubscriberService] = [:]
        for app in configuration.apps {
            subscribers[app.id] = SubscriberService(app: app, store: store, verification: verification[app.id]!)
        }
        router = Self.makeRouter(configuration: configuration, verification: verification, subscribers: subscribers,
                                 store: store, metrics: metrics)

        var http = HTTPServerConfiguration()
        http.host = configuration.server.host
        http.port = configuration.server.port
        http.eventLoops = loops
        http.limits.maxBodyBytes = configuration.server.maxBodyBytes
        http.maxConnections = configuration.server.maxConnections
        http.headerTimeout = configuration.server.headerTimeoutSeconds
        http.idleTimeout = configuration.server.idleTimeoutSeconds
        http.shutdownGrace = configuration.server.shutdownGraceSeconds
        let router = self.router
        httpServer = try HTTPServer(configuration: http, handler: { router.handle($0) }, observer: logger)
        metrics.attach(httpServer.statistics)
    }

    /// The bound port (useful with port 0).
    public var port: Int { httpServer.port }

    public func start() {
        httpServer.start()
        logger.log("info", "listening", ["host": .string(configuration.server.host), "port": .int(Int64(port)),
                                         "eventLoops": .int(Int64(httpServer.configuration.eventLoops)),
                                         "apps": .array(configuration.apps.map { .string($0.id) })])
    }

    public func shutdown() { httpServer.shutdown() }

    public func waitUntilStopped() { httpServer.waitUntilStopped() }

    /// Serves one request without a socket (in-process tests).
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let box = ResponseBox()
        router.handle(HTTPRequestContext(testing: request) { box.set($0) })
        return box.get()
    }

    // MARK: - Routes

    static func makeRouter(configuration: EntitleConfiguration, verification: [String: VerificationService],
                           subscribers: [String: SubscriberService], store: any FactStore, metrics: Metrics) -> Router {
        let authenticator = APIKeyAuthenticator(apps: configuration.apps)
        // Work that waits on disk runs here, never on an event loop.
        let storageQueue = DispatchQueue(label: "entitle.storage", attributes: .concurrent)
        let verify = VerifyHandler(authenticator: authenticator, services: verification, metrics: metrics)
        let offers = OfferHandlers(authenticator: authenticator,
                                   services: Dictionary(uniqueKeysWithValues: configuration.apps.map { ($0.id, OfferService(app: $0)) }),
                                   subscribers: subscribers, metrics: metrics, storageQueue: storageQueue)
        var syncs: [String: SyncService] = [:]
        for (id, service) in subscribers { syncs[id] = try? SyncService(subscribers: service) }
        let sync = SyncHandlers(authenticator: authenticator, syncs: syncs, subscribers: subscribers,
                                queue: DispatchQueue(label: "entitle.sync", attributes: .concurrent))
        let facts = SubscriberHandlers(authenticator: authenticator, subscribers: subscribers,
                                       appsByBundle: Dictionary(uniqueKeysWithValues: configuration.apps.map { ($0.bundleId, $0.id) }),
                                       metrics: metrics, storageQueue: storageQueue)
        var router = Router()
        router.add("GET", "/healthz") { $0.respond(.json(200, Array(#"{"status":"ok"}"#.utf8))) }
        router.add("GET", "/readyz") { context in
            storageQueue.async {
                let storageReady = (try? store.checkHealth()) != nil
                context.respond(.json(storageReady ? 200 : 503,
                                      readiness(configuration, verification: verification, storageReady: storageReady)))
            }
        }
        router.add("GET", "/metrics") { context in
            context.respond(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                                         body: Array(metrics.render().utf8)))
        }
        router.add("POST", "/v1/promotional-offers/sign") { offers.signPromotionalOffer($0) }
        router.add("POST", "/v1/verify") { verify.handle($0) }
        router.add("POST", "/v1/introductory-offers/eligibility") { offers.introductoryOfferEligibility($0) }
        router.add("POST", "/v1/transactions") { facts.postTransaction($0) }
        router.add("POST", "/v1/notifications/apple") { facts.postNotification($0) }
        router.add("GET", "/v1/notifications") { facts.listNotifications($0) }
        router.add("GET", "/v1/subscribers/by-transaction/{originalTransactionId}") { facts.getSubscriberByTransaction($0) }
        router.add("GET", "/v1/subscribers/{appAccountToken}") { facts.getSubscriber($0) }
        router.add("POST", "/v1/subscribers/{appAccountToken}/sync") { sync.syncSubscriber($0) }
        router.add("POST", "/v1/transactions/{transactionId}/sync") { sync.syncTransaction($0) }
        router.add("POST", "/v1/notifications/apple/backfill") { sync.backfill($0) }
        return router
    }

    /// Ready when every app's signing key is loaded (the configuration guarantees it at start-up).
    /// Missing Apple roots are reported (verification then answers 503) without failing readiness,
    /// so offer signing keeps being served. Storage joins these checks when it exists.
    private static func readiness(_ configuration: EntitleConfiguration, verification: [String: VerificationService],
                                  storageReady: Bool) -> JSONValue {
        var roots = JSONObject()
        for app in configuration.apps {
            let names = app.verification.rootCertificates.map { AppleRootCertificates.appleRootName(of: $0) ?? "private root" }
            roots[app.id] = .string(verification[app.id]?.isMissingRoots == true
                ? "no Apple root configured: verification answers 503 (run entitle fetch-apple-roots)"
                : names.isEmpty ? "not needed" : names.joined(separator: ", "))
        }
        return .object(["status": storageReady ? "ready" : "not ready",
                        "checks": .object(["signingKeys": .string("\(configuration.apps.count) loaded"),
                                           "storage": .string(storageReady ? "ok" : "the database does not answer"),
                                           "rootCertificates": .object(roots)])])
    }
}

/// Holds the answer of an in-process request.
private final class ResponseBox: @unchecked Sendable {
    private let lock = NSLock()
    private var response: HTTPResponse?
    private let ready = DispatchSemaphore(value: 0)

    func set(_ value: HTTPResponse) {
        lock.lock()
        response = value
        lock.unlock()
        ready.signal()
    }

    func get() -> HTTPResponse {
        ready.wait()
        lock.lock()
        defer { lock.unlock() }
        return response!
    }
}
