import Crypto
package import Foundation
import JSON
import Synchronization

/// Sign-in to the console with an admin key, and the sessions it opens.
///
/// A session is a signed token (kept by the browser in an HttpOnly cookie), not a row anywhere:
/// every instance holding the same `console.sessionSecretFile` accepts it, so instances behind a
/// load balancer need no shared session store. It names the key it was opened with and that
/// key's digest is part of what is signed, so removing or changing the key ends its sessions.
/// Sign-out forgets the token on this instance; the expiry bounds it everywhere.
package final class ConsoleSessions: Sendable {
    package let settings: ConsoleSettings
    private let authenticator: APIKeyAuthenticator
    private let secret: [UInt8]
    private let limiter = SignInLimiter()
    /// Signed-out tokens' nonces, until they would have expired anyway.
    private let signedOut = Mutex<[String: Int64]>([:])

    /// An open session.
    package struct Session: Sendable {
        package let caller: Caller
        /// The cookie's value.
        package let token: String
        /// To be sent back in `X-CSRF-Token` with every request that changes something.
        package let csrfToken: String
        /// Epoch seconds.
        package let expiresAt: Int64
        let nonce: String
    }

    package init(settings: ConsoleSettings, authenticator: APIKeyAuthenticator) {
        self.settings = settings
        self.authenticator = authenticator
        secret = settings.sessionSecret ?? SecureRandom.bytes(32)
    }

    /// Opens a session for an admin key. `client` is the address guesses are counted against.
    package func signIn(key: String, client: String, now: Date) throws(ServiceError) -> Session {
        let seconds = Int64(now.timeIntervalSince1970)
        // The limit is asked before the key is looked at: past it, the right key and a wrong one
        // get the same 429, so the answer tells a guesser nothing (see SignInLimiter for how
        // support still gets in while others' failures fill the overall limit).
        if let wait = limiter.retryAfter(client: client, now: seconds) {
            throw ServiceError(
                status: 429, code: "TOO_MANY_ATTEMPTS", message: "too many failed sign-ins; try again in \(wait) seconds",
                details: ["retryAfterSeconds": .int(wait)])
        }
        // `identify` throws only "unknown key": nil says exactly that, so nothing is lost here.
        let identified = try? authenticator.identify(key: Array(key.utf8))
        guard let found = identified, found.caller.role == .admin else {
            limiter.failed(client: client, now: seconds)
            throw identified == nil
                ? ServiceError(status: 401, code: "UNAUTHORIZED", message: "unknown API key")
                : ServiceError.forbidden("the console needs an admin key")
        }
        limiter.succeeded(client: client, now: seconds)
        let nonce = Hex.encode(SecureRandom.bytes(16))
        let expiresAt = seconds + Int64(settings.sessionHours) * 3600
        let payload = "\(found.index).\(expiresAt).\(nonce)"
        let token = payload + "." + Hex.encode(mac(payload, keyDigest: authenticator.entry(at: found.index)?.digest ?? []))
        return Session(caller: found.caller, token: token, csrfToken: csrf(nonce), expiresAt: expiresAt, nonce: nonce)
    }

    /// The session a cookie's token stands for, nil when it is forged, expired, signed out, or its
    /// key is no longer configured.
    package func session(token: String, now: Date) -> Session? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let index = Int(parts[0]), let expiresAt = Int64(parts[1]),
            let presented = Hex.decode(String(parts[3])), let entry = authenticator.entry(at: index)
        else { return nil }
        let nonce = String(parts[2])
        let expected = mac("\(parts[0]).\(parts[1]).\(nonce)", keyDigest: entry.digest)
        guard APIKeyAuthenticator.constantTimeEqual(presented, expected), expiresAt > Int64(now.timeIntervalSince1970),
            entry.caller.role == .admin, signedOut.withLock({ $0[nonce] == nil })
        else { return nil }
        return Session(caller: entry.caller, token: token, csrfToken: csrf(nonce), expiresAt: expiresAt, nonce: nonce)
    }

    /// Whether `presented` is the session's CSRF token (compared in constant time).
    package func acceptsCSRF(_ presented: String?, for session: Session) -> Bool {
        guard let presented else { return false }
        return APIKeyAuthenticator.constantTimeEqual(Array(presented.utf8), Array(session.csrfToken.utf8))
    }

    package func signOut(_ session: Session, now: Date) {
        let seconds = Int64(now.timeIntervalSince1970)
        signedOut.withLock { signedOut in
            signedOut = signedOut.filter { $0.value > seconds }
            signedOut[session.nonce] = session.expiresAt
        }
    }

    private func mac(_ payload: String, keyDigest: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(key: secret, message: Array(("session." + payload + "." + Hex.encode(keyDigest)).utf8))
    }

    private func csrf(_ nonce: String) -> String {
        Hex.encode(HMACSHA256.authenticationCode(key: secret, message: Array(("csrf." + nonce).utf8)))
    }
}
