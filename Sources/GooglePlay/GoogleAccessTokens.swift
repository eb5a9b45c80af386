import Crypto
package import Foundation
package import HTTPClient
import JSON
import Synchronization

/// OAuth 2.0 for a service account (RFC 7523): a JWT signed RS256 with the account's key is
/// exchanged at the token endpoint for a bearer token, which is kept until shortly before it
/// expires (Google's last an hour), so a busy server asks once an hour, not once a call.
package final class GoogleAccessTokens: Sendable {
    package static let androidPublisherScope = "https://www.googleapis.com/auth/androidpublisher"
    package static let defaultTokenURL = "https://oauth2.googleapis.com/token"

    let key: ServiceAccountKey
    /// Read at each exchange (a test store's endpoint is known once the server listens).
    let locateTokenURL: @Sendable () -> String
    var tokenURL: String { locateTokenURL() }
    let scope: String
    private let http: HTTPClient
    /// The token and when to stop using it (epoch seconds).
    private let cached = Mutex<(token: String, until: Int64)?>(nil)
    /// A token is renewed this long before Google's expiry.
    static let margin: Int64 = 300

    /// Tokens from the endpoint `locatedBy` names when asked.
    package init(key: ServiceAccountKey, locatedBy tokenURL: @escaping @Sendable () -> String, http: HTTPClient) {
        self.key = key
        locateTokenURL = tokenURL
        scope = Self.androidPublisherScope
        self.http = http
    }

    package init(key: ServiceAccountKey, tokenURL: String? = nil, scope: String = androidPublisherScope, http: HTTPClient) {
        self.key = key
        let url = tokenURL ?? key.tokenURL ?? Self.defaultTokenURL
        locateTokenURL = { url }
        self.scope = scope
        self.http = http
    }

    /// A valid bearer token, fetched when none is kept or it is about to expire.
    package func token(now: Date = Date()) async throws(GooglePlayAPIError) -> String {
        let seconds = Int64(now.timeIntervalSince1970)
        if let cached = cached.withLock({ $0 }), cached.until > seconds { return cached.token }
        let (token, lifetime) = try await fetch(now: seconds)
        cached.withLock { $0 = (token, seconds + max(60, lifetime - Self.margin)) }
        return token
    }

    /// Forgets the kept token (Google answered 401 to it).
    package func invalidate() { cached.withLock { $0 = nil } }

    /// The signed assertion: issuer the account, audience the token endpoint, one hour at most.
    func assertion(now: Int64) throws(GooglePlayAPIError) -> String {
        var header: JSONObject = ["alg": "RS256", "typ": "JWT"]
        if let id = key.privateKeyId { header["kid"] = .string(id) }
        do {
            return try JWSSigner.sign(
                header: header,
                payload: [
                    "iss": .string(key.clientEmail), "scope": .string(scope), "aud": .string(tokenURL), "iat": .int(now),
                    "exp": .int(now + 3600),
                ], with: key.privateKey)
        } catch {
            throw .auth("cannot sign the OAuth assertion: \(error)")
        }
    }

    private func fetch(now: Int64) async throws(GooglePlayAPIError) -> (String, Int64) {
        let form =
            "grant_type=" + Self.formEscape("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion="
            + Self.formEscape(try assertion(now: now))
        let response: HTTPClientResponse
        do {
            response = try await http.send(
                HTTPClientRequest(
                    method: "POST", url: tokenURL,
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                    body: Array(form.utf8)))
        } catch {
            throw .transport(error.description)
        }
        let json = (try? JSONParser.parse(response.body))?.objectValue
        guard response.status == 200, let token = json?["access_token"]?.stringValue, !token.isEmpty else {
            let reason = json?["error_description"]?.stringValue ?? json?["error"]?.stringValue ?? "HTTP \(response.status)"
            // 5xx and 429 may pass; a refused assertion will not.
            if response.status >= 500 || response.status == 429 { throw .unavailable(status: response.status, message: reason) }
            throw .auth("the token endpoint refused the service account: \(reason)")
        }
        return (token, json?["expires_in"]?.integer(in: 1...31_536_000) ?? 3600)
    }

    static func formEscape(_ text: String) -> String { URLBuilder.escape(text) }
}
