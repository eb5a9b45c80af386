import Application
import Crypto
import Dispatch
import HTTP
import JSON

/// Admits each request under its caller's rate limit before it is routed: per server or admin
/// key, per client key and address (a client key ships in every copy of the app: it is many
/// callers), per client address for what no key authenticates (the console's page and script,
/// an unknown key). Apple's and Google's notifications and Apple's realtime retention requests
/// are never refused: their senders retry, but a refused notification is a delayed customer; nor
/// are the operators' probes (`/healthz`, `/readyz`, `/metrics`), nor sign-in, whose own limiter
/// slows failures by address and never refuses the right admin key. Every answer under a limit says where it
/// stands (IETF `RateLimit-Policy` and `RateLimit`); over it, 429 `RATE_LIMITED` with
/// `Retry-After`. Counted by each instance on its own.
struct RateLimitGate: Sendable {
    let application: EntitleApplication
    let settings: RateLimitSettings
    let metrics: Metrics
    private let limiter = RateLimiter()
    /// Each scope's `RateLimit-Policy` value, made once.
    private let policies: [String: String]

    init(application: EntitleApplication, settings: RateLimitSettings, metrics: Metrics) {
        self.application = application
        self.settings = settings
        self.metrics = metrics
        var policies: [String: String] = [:]
        for role in [APIKeyRole.client, .server, .admin, nil] {
            let limit = settings.limit(for: role)
            let name = role?.rawValue ?? "address"
            policies[name] = "\"\(name)\";q=\(Int(limit.burst));w=\(Int((limit.burst / limit.perSecond).rounded(.up)))"
        }
        self.policies = policies
    }

    static let unlimited: Set<String> = [
        "/v1/notifications/apple", "/v1/notifications/google", "/v1/retention/apple", "/healthz", "/readyz", "/metrics",
        "/console/session",
    ]

    /// Nil: route the request (its answer will carry the headers); else the 429 to answer.
    func refusal(_ context: HTTPRequestContext) -> HTTPResponse? {
        guard settings.enabled, !Self.unlimited.contains(String(context.request.path)) else { return nil }
        let (role, key) = identify(context)
        let limit = settings.limit(for: role)
        let verdict = limiter.take(key, limit: limit, now: Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
        let name = role?.rawValue ?? "address"
        context.extraHeaders = [
            ("RateLimit-Policy", policies[name] ?? ""), ("RateLimit", "\"\(name)\";r=\(verdict.remaining);t=\(verdict.resetSeconds)"),
        ]
        guard !verdict.allowed else { return nil }
        metrics.rateLimited(scope: name)
        var response = ErrorAnswer.response(
            for: ServiceError(
                status: 429, code: "RATE_LIMITED", message: "too many requests for this \(role == nil ? "address" : "key"); slow down",
                details: ["retryAfterSeconds": .int(Int64(verdict.retryAfter))]),
            app: nil, requestID: context.requestID)
        response.headers.append(("Retry-After", String(verdict.retryAfter)))
        return response
    }

    /// Whose bucket: the key's (by its place among the configured keys, never its text), the console session's, or the
    /// address's (behind a proxy on this machine, the address it forwarded, as sign-in counts). An
    /// unknown key counts against its address, so guessing keys is slowed too.
    private func identify(_ context: HTTPRequestContext) -> (APIKeyRole?, String) {
        if let header = context.request.header("authorization") {
            // A key that does not authenticate is limited by address; the handler refuses it.
            if let (caller, index) = try? application.authenticator.identify(authorization: header) {
                context.authenticated = caller
                let key = "key \(index)"
                return (caller.role, caller.role == .client ? key + "@" + ConsoleHandlers.client(context) : key)
            }
        } else if let session = application.consoleSession(context.request) {
            return (session.caller.role, "session:" + Base64.encodeURL(SHA256.hash(Array(session.token.utf8))))
        }
        return (nil, "address:" + ConsoleHandlers.client(context))
    }
}
