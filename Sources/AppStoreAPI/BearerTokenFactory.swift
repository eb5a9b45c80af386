package import Crypto
package import Foundation
import JSON

/// The App Store Server API bearer token (docs/APP_STORE.md §5.2): ES256 with the In-App Purchase key,
/// `aud` appstoreconnect-v1, `bid`, `iat` backdated 60 s for clock skew, and a short `exp`.
package struct BearerTokenFactory: Sendable {
    package let privateKey: P256.Signing.PrivateKey
    package let keyId: String
    package let issuerId: String
    package let bundleId: String
    /// Lifetime after `iat`; Apple refuses more than 60 minutes.
    package var lifetime: TimeInterval = 300

    package init(privateKey: P256.Signing.PrivateKey, keyId: String, issuerId: String, bundleId: String) {
        self.privateKey = privateKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    package func token(now: Date = Date()) throws -> String {
        let issuedAt = Int64(now.timeIntervalSince1970) - 60
        return try JWSSigner.sign(
            header: ["alg": "ES256", "kid": .string(keyId), "typ": "JWT"],
            payload: [
                "iss": .string(issuerId), "iat": .int(issuedAt),
                "exp": .int(issuedAt + 60 + Int64(lifetime)), "aud": "appstoreconnect-v1",
                "bid": .string(bundleId),
            ],
            with: privateKey)
    }
}
