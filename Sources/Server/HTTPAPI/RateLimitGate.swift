import Application
import Crypto
import Dispatch
import HTTP
import JSON

/// Admits each request under its caller's rate limit before it is routed: per server or admin
/// key, per client key and address (a client key ships in every copy of the app: it is many
/// callers), per client address for what no key authenticates (the console's page and script,
/// an unknown key). Apple's and Google's notifications and Apple's realtime retention requests
/// are never refused while they verify: their senders retry, but a refused notification is a
/// delayed customer. Posts to them that fail verification (400, 422) take from their address's
/// `failedVerification` bucket, and an address whose bucket is empty is refused before its body
/// is read, the answer held a second (a forged flood cut everyone else's throughput to a tenth); nor
/// are the operators' probes (`/healthz`, `/readyz`, `/metrics`), nor sign-in, whose own limiter
/// slows failures by address and never refuses the right admin key. Every answer under a limit says where it
/// stands (IETF `RateLimit-Policy` and `RateLimit`); over it, 429 `RATE_LIMITED` with
/// `Retry-After`. Counted by each instance on its own.
struct RateLimitGate: Sendable {
    let application: EntitleApplication
    let settings: RateLimitSettings
    let metrics: Metrics
    private let limiter = RateLimiter<Caller>()
    /// Failed verifications, by address.
    private let failures = RateLimiter<String>()
    /// Each scope's name, limit and `RateLimit-Policy` value, made once.
    private let client, server, admin, address, failedVerification: Scope

    /// Whose bucket a request takes from; built without formatting text, as it is for every request.
    private enum Caller: Hashable, Sendable {
        /// A server or admin key, by its place among the configured keys (never its text).
        case key(Int)
        /// A client key from one address: it ships in every copy of the app.
        case clientKey(Int, address: String)
        /// A console session, by the SHA-256 of its token.
        case session(String)
        case address(String)
    }

    private struct Scope: Sendable {
        let name: String
        let limit: RateLimit
        let policy: String

        init(_ role: APIKeyRole?, _ settings: RateLimitSettings) {
            self.init(name: role?.rawValue ?? "address", limit: settings.limit(for: role))
        }

        init(name: String, limit: RateLimit) {
            self.name = name
            self.limit = limit
            policy = "\"\(name)\";q=\(Int(limit.burst));w=\(Int((limit.burst / limit.perSecond).rounded(.up)))"
        }
    }

    init(application: EntitleApplication, settings: RateLimitSettings, metrics: Metrics) {
        self.application = application
        self.settings = settings
        self.metrics = metrics
        client = Scope(.client, settings)
        server = Scope(.server, settings)
        admin = Scope(.admin, settings)
        address = Scope(nil, settings)
        failedVerification = Scope(name: "failed_verification", limit: settings.failedVerification)
    }

    /// The routes whose posts are authenticated by their signature alone.
    static func isVerifiedBySignature(_ path: Substring) -> Bool {
        path == "/v1/notifications/apple" || path == "/v1/notifications/google" || path == "/v1/retention/apple"
    }

    /// Never limited by a key's or address's bucket (a literal match on the path, without copying
    /// it); the routes a signature authenticates are `admit`'s, before this is asked.
    static func isUnlimited(_ path: Substring) -> Bool {
        switch path {
        case "/healthz", "/readyz", "/metrics", "/console/session":
            true
        default: isServedByTheTestStore(path)
        }
    }

    /// The App Store Server API and Play Developer API a test store serves stand in for Apple's
    /// and Google's servers, called by Entitle's own clients (a population makes thousands of
    /// calls a minute from this server's address): Entitle does not limit itself. They answer
    /// only their stores' tokens.
    static func isServedByTheTestStore(_ path: Substring) -> Bool {
        path.hasPrefix("/v1/test-store/apple/api/") || path.hasPrefix("/v1/test-store/google/api/")
            || path == "/v1/test-store/google/token"
    }

    /// How long a refused post of a failed-verification flood waits for its answer.
    static let refusalPause: DispatchTimeInterval = .seconds(1)

    /// Whether a request is routed, or refused (answered now, or later by the gate itself).
    enum Admission {
        case route
        case refuse(HTTPResponse)
        case deferred
    }

    func admit(_ context: HTTPRequestContext) -> Admission {
        guard settings.enabled else { return .route }
        if Self.isVerifiedBySignature(context.request.path) { return failedVerificationRefusal(context) }
        return refusal(context).map(Admission.refuse) ?? .route
    }

    /// Nil: route the request (its answer will carry the headers); else the 429 to answer.
    private func refusal(_ context: HTTPRequestContext) -> HTTPResponse? {
        guard settings.enabled, !Self.isUnlimited(context.request.path) else { return nil }
        let (role, caller) = identify(context)
        let scope = self.scope(role)
        let verdict = limiter.take(caller, limit: scope.limit, now: Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
        context.extraHeaders = [
            ("RateLimit-Policy", scope.policy), ("RateLimit", "\"\(scope.name)\";r=\(verdict.remaining);t=\(verdict.resetSeconds)"),
        ]
        guard !verdict.allowed else { return nil }
        return limited(context, scope: scope, retryAfter: verdict.retryAfter, what: "requests for this \(role == nil ? "address" : "key")")
    }

    /// A post by an address whose failed verifications have used up its bucket: refused unread,
    /// the 429 sent after `refusalPause`. Otherwise routed, and its answer, when it says the post
    /// did not verify, takes a token.
    private func failedVerificationRefusal(_ context: HTTPRequestContext) -> Admission {
        let address = ConsoleHandlers.client(context)
        let limit = failedVerification.limit
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        guard failures.hasToken(address, limit: limit, now: now) else {
            let verdict = failures.take(address, limit: limit, now: now)
            let refusal = limited(
                context, scope: failedVerification, retryAfter: verdict.retryAfter, what: "failed verifications from this address")
            // Answered after a pause, on a timer (no thread waits): a sender that posts again as soon
            // as it is answered, as a flood does, is slowed to one post a second per connection,
            // where answering at once let 32 connections take half the server.
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.refusalPause) { context.respond(refusal) }
            return .deferred
        }
        let failures = self.failures
        context.answered = { status in
            guard status == 400 || status == 422 else { return }
            _ = failures.take(address, limit: limit, now: Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
        }
        return .route
    }

    private func limited(_ context: HTTPRequestContext, scope: Scope, retryAfter: Int, what: String) -> HTTPResponse {
        metrics.record(.rateLimited(scope: scope.name))
        var response = ErrorAnswer.response(
            for: ServiceError(
                status: 429, code: "RATE_LIMITED", message: "too many \(what); slow down",
                details: ["retryAfterSeconds": .int(Int64(retryAfter))]),
            app: nil, requestID: context.requestID)
        response.headers.append(("Retry-After", String(retryAfter)))
        return response
    }

    private func scope(_ role: APIKeyRole?) -> Scope {
        switch role {
        case .client: client
        case .server: server
        case .admin: admin
        case nil: address
        }
    }

    /// Whose bucket: the key's, the console session's, or the address's (behind a proxy on this
    /// machine, the address it forwarded, as sign-in counts). An unknown key counts against its
    /// address, so guessing keys is slowed too.
    private func identify(_ context: HTTPRequestContext) -> (APIKeyRole?, Caller) {
        if let header = context.request.header("authorization") {
            // A key that does not authenticate is limited by address; the handler refuses it.
            if let (caller, index) = try? application.authenticator.identify(authorization: header) {
                context.authenticated = caller
                return (caller.role, caller.role == .client ? .clientKey(index, address: ConsoleHandlers.client(context)) : .key(index))
            }
        } else if let session = application.consoleSession(context.request) {
            return (session.caller.role, .session(Base64.encodeURL(SHA256.hash(Array(session.token.utf8)))))
        }
        return (nil, .address(ConsoleHandlers.client(context)))
    }
}
