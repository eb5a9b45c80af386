import AppStore
import Foundation
import HTTP
import JSON

/// The composition: configuration → signers, authentication, routes, logging and metrics → the
/// HTTP server. `entitle serve` builds one; tests build one on port 0 or call `handle` in-process.
public final class EntitleServer: Sendable {
    public let configuration: EntitleConfiguration
    public let metrics: Metrics
    public let logger: Logger
    public let verification: [String: VerificationService]
    private let router: Router
    private let httpServer: HTTPServer

    /// `logOutput` is the file descriptor for JSON log lines (standard output by default; nil discards).
    public init(configuration: EntitleConfiguration, logOutput: Int32? = 1,
                revocationChecker: (any RevocationChecker)? = nil) throws {
        self.configuration = configuration
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
        router = Self.makeRouter(configuration: configuration, verification: verification, metrics: metrics)

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
                           metrics: Metrics) -> Router {
        let authenticator = APIKeyAuthenticator(apps: configuration.apps)
        let verify = VerifyHandler(authenticator: authenticator, services: verification, metrics: metrics)
        let offers = OfferHandlers(authenticator: authenticator,
                                   services: Dictionary(uniqueKeysWithValues: configuration.apps.map { ($0.id, OfferService(app: $0)) }),
                                   metrics: metrics)
        var router = Router()
        router.add("GET", "/healthz") { $0.respond(.json(200, Array(#"{"status":"ok"}"#.utf8))) }
        router.add("GET", "/readyz") { context in
            context.respond(.json(200, readiness(configuration, verification: verification)))
        }
        router.add("GET", "/metrics") { context in
            context.respond(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                                         body: Array(metrics.render().utf8)))
        }
        router.add("POST", "/v1/promotional-offers/sign") { context in
            context.respond(answer { () throws(ServiceError) in try offers.signPromotionalOffer(context.request) })
        }
        router.add("POST", "/v1/verify") { verify.handle($0) }
        router.add("POST", "/v1/introductory-offers/eligibility") { context in
            context.respond(answer { () throws(ServiceError) in try offers.introductoryOfferEligibility(context.request) })
        }
        return router
    }

    private static func answer(_ body: () throws(ServiceError) -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch { return .error(error) }
    }

    /// Ready when every app's signing key is loaded (the configuration guarantees it at start-up).
    /// Missing Apple roots are reported (verification then answers 503) without failing readiness,
    /// so offer signing keeps being served. Storage joins these checks when it exists.
    private static func readiness(_ configuration: EntitleConfiguration,
                                  verification: [String: VerificationService]) -> JSONValue {
        var roots = JSONObject()
        for app in configuration.apps {
            let names = app.verification.rootCertificates.map { AppleRootCertificates.appleRootName(of: $0) ?? "private root" }
            roots[app.id] = .string(verification[app.id]?.isMissingRoots == true
                ? "no Apple root configured: verification answers 503 (run entitle fetch-apple-roots)"
                : names.isEmpty ? "not needed" : names.joined(separator: ", "))
        }
        return .object(["status": "ready",
                        "checks": .object(["signingKeys": .string("\(configuration.apps.count) loaded"),
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
