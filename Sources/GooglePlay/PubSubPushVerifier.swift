package import Crypto
package import Foundation
package import HTTPClient
import JSON
import Synchronization

/// Google's signing keys for OIDC tokens, as a JWK set: read from a file or fetched from a URL
/// (`https://www.googleapis.com/oauth2/v3/certs`). Keys are looked up by `kid`. The set is read
/// again when a `kid` is unknown (Google rotates its keys) or the set is an hour old — but never
/// sooner than `minimumRefreshInterval` after the last read, so forged tokens with made-up ids
/// cannot make Entitle hammer the source.
package final class GoogleJWKS: Sendable {
    package enum Source: Sendable {
        case file(String)
        case url(String)
    }

    let source: Source
    private let http: HTTPClient?
    private let state = Mutex<(keys: [String: RSA.PublicKey], readAt: Int64?)>(([:], nil))
    let minimumRefreshInterval: Int64
    static let maximumAge: Int64 = 3600

    package init(source: Source, http: HTTPClient?, minimumRefreshInterval: Int64 = 10) {
        self.source = source
        self.http = http
        self.minimumRefreshInterval = minimumRefreshInterval
    }

    /// The key `kid` names, nil when the set does not have it (even after reading it again).
    func key(_ kid: String, now: Int64) -> RSA.PublicKey? {
        let (known, readAt) = state.withLock { ($0.keys[kid], $0.readAt) }
        let age = readAt.map { now - $0 } ?? Int64.max
        if let known, age < Self.maximumAge { return known }
        guard age >= minimumRefreshInterval else { return known }
        let fresh = (try? read()) ?? [:]
        state.withLock { state in
            if !fresh.isEmpty { state.keys = fresh }
            state.readAt = now
        }
        return fresh[kid] ?? (fresh.isEmpty ? known : nil)
    }

    /// Reads and parses the set; RSA signing keys only.
    package func read() throws(GooglePlayAPIError) -> [String: RSA.PublicKey] {
        let bytes: [UInt8]
        switch source {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else { throw .decoding("cannot read \(path)") }
            bytes = Array(data)
        case .url(let url):
            guard let http else { throw .transport("no HTTP client") }
            do {
                let response = try http.send(HTTPClientRequest(url: url, headers: [("Accept", "application/json")]))
                guard response.status == 200 else { throw GooglePlayAPIError.unavailable(status: response.status, message: "JWKS") }
                bytes = response.body
            } catch let error as GooglePlayAPIError {
                throw error
            } catch {
                throw .transport("\(error)")
            }
        }
        return try Self.parse(bytes)
    }

    static func parse(_ bytes: [UInt8]) throws(GooglePlayAPIError) -> [String: RSA.PublicKey] {
        guard let keys = (try? JSONParser.parse(bytes))?["keys"]?.arrayValue else { throw .decoding("not a JWK set") }
        var found: [String: RSA.PublicKey] = [:]
        for case .object(let jwk) in keys where jwk["kty"] == "RSA" && (jwk["use"] == nil || jwk["use"] == "sig") {
            guard let kid = jwk["kid"]?.stringValue, let n = jwk["n"]?.stringValue, let e = jwk["e"]?.stringValue,
                let modulus = try? Base64.decodeURL(n), let exponent = try? Base64.decodeURL(e),
                let key = try? RSA.PublicKey(modulus: modulus, exponent: exponent)
            else { continue }
            found[kid] = key
        }
        return found
    }
}

/// Whether a Pub/Sub push comes from Google on behalf of the configured subscription: its
/// `Authorization: Bearer` OIDC token must be RS256-signed by one of Google's keys, issued by
/// accounts.google.com, for the configured audience, to the configured service account (with a
/// verified e-mail), and not expired.
package struct PubSubPushVerifier: Sendable {
    package let jwks: GoogleJWKS
    package let audience: String
    package let serviceAccountEmail: String

    package init(jwks: GoogleJWKS, audience: String, serviceAccountEmail: String) {
        self.jwks = jwks
        self.audience = audience
        self.serviceAccountEmail = serviceAccountEmail
    }

    /// Why a push was refused; the message is safe to log and answer.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package let reason: String
        package init(reason: String) { self.reason = reason }
        package var description: String { reason }
    }

    static let issuers: Set<String> = ["accounts.google.com", "https://accounts.google.com"]
    /// Clock skew allowed for `iat` (a token is never accepted after its `exp`).
    static let skewSeconds: Int64 = 60
    /// Epoch seconds a token's `exp` and `iat` may name: the years 1970 to 9999.
    static let seconds: ClosedRange<Int64> = 0...253_402_300_799

    package func verify(authorization: String?, now: Date = Date()) throws(Refusal) {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw Refusal(reason: "no Bearer token (configure the push subscription with authentication)")
        }
        guard let token = try? CompactJWS(authorization.dropFirst(7)) else { throw Refusal(reason: "the token is not a JWT") }
        guard token.algorithm == "RS256", let kid = token.header["kid"]?.stringValue else {
            throw Refusal(reason: "the token is not RS256 with a key id")
        }
        let seconds = Int64(now.timeIntervalSince1970)
        guard let key = jwks.key(kid, now: seconds) else { throw Refusal(reason: "the token's key is not one of Google's") }
        guard token.isValidRS256Signature(publicKey: key) else { throw Refusal(reason: "the token's signature does not verify") }
        let claims = token.payload
        guard let issuer = claims["iss"]?.stringValue, Self.issuers.contains(issuer) else {
            throw Refusal(reason: "the token was not issued by accounts.google.com")
        }
        let audiences = claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard audiences.contains(audience) else { throw Refusal(reason: "the token is for another audience") }
        guard claims["email"]?.stringValue == serviceAccountEmail else {
            throw Refusal(reason: "the token is not the configured service account's")
        }
        guard claims["email_verified"]?.boolValue == true else { throw Refusal(reason: "the token's e-mail is not verified") }
        guard let expires = claims["exp"]?.integer(in: Self.seconds), expires > seconds else {
            throw Refusal(reason: "the token has expired")
        }
        if let issuedAt = claims["iat"]?.integer(in: Self.seconds), issuedAt - Self.skewSeconds > seconds {
            throw Refusal(reason: "the token was issued in the future")
        }
    }
}
