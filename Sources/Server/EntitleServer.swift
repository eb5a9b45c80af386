package import AppStore
package import Application
package import Entitlements
import Foundation
package import HTTP
package import Instants
import JSON
import Storage

/// The composition: configuration → store, blocking pool, application, routes, logging and
/// metrics → the HTTP server. `entitle serve` builds one; tests build one on port 0 or call
/// `handle` in-process.
package final class EntitleServer: Sendable {
    package let configuration: EntitleConfiguration
    package let metrics: Metrics
    package let logger: Logger
    package let application: EntitleApplication
    private let router: Router
    /// The test store, in a deployment that enables it.
    private let testStore: TestStoreComposition?
    private let gate: RateLimitGate
    private let httpServer: HTTPServer

    /// `logOutput` is the file descriptor for JSON log lines (standard output by default; nil discards).
    /// `store` defaults to the SQLite file of the configuration; `clock` is the server's one clock
    /// (the machine's, unless a test moves it; with the test store, a `MovableClock` it moves,
    /// made from `clock` at real speed when `clock` is not one already).
    package init(
        configuration: EntitleConfiguration, logOutput: Int32? = 1,
        revocationChecker: (any RevocationChecker)? = nil, store: (any FactStore)? = nil, clock: any WallClock = SystemClock()
    ) throws {
        self.configuration = configuration
        let loops =
            configuration.server.eventLoops > 0
            ? configuration.server.eventLoops
            : max(1, ProcessInfo.processInfo.activeProcessorCount)
        metrics = Metrics(loops: loops)
        logger = Logger(loops: loops, metrics: metrics, output: logOutput)
        let logger = self.logger
        PostgreSQLNotices.forward { logger.log("info", "postgresql notice", ["message": .string($0)]) }
        let instrumentation = ServerInstrumentation(metrics: metrics, logger: logger)
        var clock = clock
        if let chain = configuration.testStore.chain {
            let movable = clock as? MovableClock ?? MovableClock(at: clock.now())
            if !(clock is MovableClock) { movable.run(speed: 1) }
            clock = movable
            testStore = TestStoreComposition(configuration: configuration, chain: chain, clock: movable, logger: logger)
        } else {
            testStore = nil
        }
        application = try EntitleApplication(
            configuration: configuration,
            store: try store ?? configuration.storage.openStore(instrumentation: instrumentation),
            revocationChecker: revocationChecker, instrumentation: instrumentation, clock: clock, machineClock: SystemClock(),
            newId: IdSource.random,
            outboundClients: testStore.map { testStore in
                .sandboxCallingTheTestStore(at: { testStore.appleAPIURL }, google: { testStore.googleURLs })
            } ?? .live)
        router = Routes.make(application, metrics: metrics, testStore: testStore)

        var http = HTTPServerConfiguration()
        http.host = configuration.server.host
        http.port = configuration.server.port
        http.eventLoops = loops
        http.limits.maxBodyBytes = configuration.server.maxBodyBytes
        http.maxConnections = configuration.server.maxConnections
        http.headerTimeout = configuration.server.headerTimeoutSeconds
        http.idleTimeout = configuration.server.idleTimeoutSeconds
        http.shutdownGrace = configuration.server.shutdownGraceSeconds
        http.defaultHeaders = SecurityHeaders.api
        let router = self.router
        let gate = RateLimitGate(application: application, settings: configuration.rateLimits, metrics: metrics)
        self.gate = gate
        httpServer = try HTTPServer(
            configuration: http,
            handler: { context in
                switch gate.admit(context) {
                case .route: router.handle(context)
                case .refuse(let refusal): context.respond(refusal)
                case .deferred: break
                }
            }, observer: logger)
        metrics.attach(httpServer.statistics, pool: application.pool, outbound: application.outbound)
    }

    /// The test store's App Store, in a deployment with one (`entitle test-store populate`
    /// drives it in-process).
    package var testStoreService: TestStoreService? { testStore?.service }

    /// The bound port (useful with port 0).
    package var port: Int { httpServer.port }

    package func start() {
        httpServer.start()
        testStore?.start(host: configuration.server.host, port: port)
        let abandoned = application.startDeliveries()
        logger.log(
            "info", "listening",
            [
                "host": .string(configuration.server.host), "port": .int(Int64(port)),
                "eventLoops": .int(Int64(httpServer.configuration.eventLoops)),
                "blockingThreads": .int(Int64(application.pool.threadCount)),
                "outboundThreads": .int(Int64(application.outbound.threadCount)),
                "version": .string(EntitleVersion.current), "storage": .string(configuration.storage.summary),
                "apps": .array(configuration.apps.map { .string($0.id) }),
            ])
        for warning in httpServer.warnings + application.warnings + abandoned { logger.log("warn", warning) }
        for (id, services) in application.apps.sorted(by: { $0.key < $1.key }) {
            let missing = services.verification.environmentsMissingRoots
            if !missing.isEmpty {
                logger.log(
                    "warn",
                    "app \(id): no trusted root for \(missing.map(\.rawValue).joined(separator: ", ")); its signed "
                        + "data answers 503 until roots are added to apple-roots/ and the server gets SIGHUP (or restarts)")
            }
        }
    }

    /// SIGHUP: trust the roots the configuration names now, and sell what its offerings say now.
    package func reload() {
        let (replaced, withoutRoots, offerings, problems) = application.reload()
        for problem in problems { logger.log("error", "configuration not reloaded", ["problem": .string(problem)]) }
        for app in withoutRoots {
            logger.log(
                "warn", "no root certificates found on reload",
                [
                    "app": .string(app), "code": "NO_ROOT_CERTIFICATES",
                    "hint": "run entitle fetch-apple-roots (or set verification.rootCertificates), then send SIGHUP again",
                ])
        }
        if !replaced.isEmpty { logger.log("info", "roots reloaded", ["apps": .array(replaced.map(JSONValue.string))]) }
        if !offerings.isEmpty { logger.log("info", "offerings reloaded", ["apps": .array(offerings.map(JSONValue.string))]) }
    }

    package func shutdown() { httpServer.shutdown() }

    /// Blocks until the HTTP server has stopped, then cancels the queued work's calls to Apple and
    /// Google, lets queued blocking work finish and stops the deliverers (what they have not
    /// delivered or called stays pending in the store).
    package func waitUntilStopped() {
        httpServer.waitUntilStopped()
        application.stopDueWork()
        application.pool.stop()
        application.outbound.stop()
        application.stopDeliveries()
    }

    /// Every route the server answers, `(method, pattern)`.
    package var routes: [(method: String, pattern: String)] { router.routes }

    /// Serves one request without a socket (in-process tests; blocks the calling thread).
    package func handle(_ request: HTTPRequest) -> HTTPResponse {
        let box = ResponseBox()
        router.handle(HTTPRequestContext(testing: request) { box.set($0) })
        return box.get()
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
