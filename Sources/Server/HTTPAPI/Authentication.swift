import Application
import Foundation
import HTTP
import Instants

/// Who a request comes from: an API key (`Authorization: Bearer`), else the console's session
/// cookie. A request that changes something on the strength of the cookie must carry the
/// session's CSRF token in `X-CSRF-Token`: the cookie alone (`SameSite=Strict` already keeps other
/// sites from sending it) never suffices.
extension EntitleApplication {
    static let sessionCookie = "entitle_session"

    func caller(_ context: HTTPRequestContext) throws(ServiceError) -> Caller {
        let request = context.request
        if let caller = context.authenticated as? Caller { return caller }
        if let header = request.header("authorization") { return try authenticator.authenticate(authorization: header) }
        guard let token = Self.cookie(Self.sessionCookie, in: request) else {
            return try authenticator.authenticate(authorization: nil)
        }
        guard configuration.console.enabled, let session = console.session(token: token, now: clock.now()) else {
            throw ServiceError(status: 401, code: "UNAUTHORIZED", message: "the console session has ended; sign in again")
        }
        if !["GET", "HEAD"].contains(request.method), !console.acceptsCSRF(request.header("x-csrf-token"), for: session) {
            throw ServiceError(status: 403, code: "CSRF_TOKEN_INVALID", message: "missing or wrong X-CSRF-Token")
        }
        return session.caller
    }

    /// The console session of a request, when its cookie carries a valid one.
    func consoleSession(_ request: HTTPRequest) -> ConsoleSessions.Session? {
        Self.cookie(Self.sessionCookie, in: request).flatMap { console.session(token: $0, now: clock.now()) }
    }

    /// A cookie's value from the `Cookie` header (`a=1; b=2`).
    static func cookie(_ name: String, in request: HTTPRequest) -> String? {
        guard let header = request.header("cookie") else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}
