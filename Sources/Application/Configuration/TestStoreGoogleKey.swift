package import Crypto
package import JSON

/// What the test store's Google Play signs its Pub/Sub push tokens with (`google-token.key` in
/// the chain's folder): an RSA key, whose public half, as a JWK set (`google-jwks.json`), is what
/// a test deployment's `apps[].googlePlay.jwks` names, as a real one names Google's certificates.
package struct TestStoreGoogleKey: Sendable {
    package let privateKey: RSA.PrivateKey
    /// The JWK's `kid`: derived from the modulus, so one key always has one id.
    package let keyId: String

    package init(privateKey: RSA.PrivateKey) throws {
        self.privateKey = privateKey
        keyId = "entitle-test-store-" + String(SHA256.hexDigest(try privateKey.publicKey.components.modulus).prefix(16))
    }

    /// The public key as Google publishes its own (`https://www.googleapis.com/oauth2/v3/certs`).
    package func jwks() throws -> JSONObject {
        let (modulus, exponent) = try privateKey.publicKey.components
        return [
            "keys": .array([
                .object([
                    "kty": "RSA", "alg": "RS256", "use": "sig", "kid": .string(keyId), "n": .string(Base64.encodeURL(modulus)),
                    "e": .string(Base64.encodeURL(exponent)),
                ])
            ])
        ]
    }

    /// The OIDC token Pub/Sub sends with a push (an hour long), as Google signs it: issued by
    /// accounts.google.com for the push subscription's audience and service account.
    package func pushToken(audience: String, serviceAccountEmail: String, now seconds: Int64) throws -> String {
        try JWSSigner.sign(
            header: ["alg": "RS256", "kid": .string(keyId), "typ": "JWT"],
            payload: [
                "iss": "https://accounts.google.com", "aud": .string(audience), "azp": "113774264463038321964",
                "sub": "113774264463038321964", "email": .string(serviceAccountEmail), "email_verified": true, "iat": .int(seconds),
                "exp": .int(seconds + 3600),
            ], with: privateKey)
    }

    /// A service account for a test deployment's `serviceAccountKeyFile` (Google's key file
    /// format), with a key of its own: the test store's token endpoint takes its assertions.
    package static func serviceAccountFile(email: String) throws -> String {
        let key = try RSA.PrivateKey(generatingBits: 2048)
        return JSONValue.object([
            "type": "service_account", "project_id": "entitle-test-store", "private_key_id": .string(Hex.encode(SecureRandom.bytes(20))),
            "private_key": .string(try key.pemRepresentation), "client_email": .string(email), "client_id": "100000000000000000001",
        ]).serializedString
    }
}
