import Application
import Crypto
import Foundation
import HTTP
import Instants
import JSON

/// Answers the app can trust (docs/API.md): with `responseSigning` configured, the answers of the
/// routes an app relies on carry `Entitle-Signature`, a compact JWS (ES256, `kid`) over the
/// request's `Entitle-Nonce`, its method and target, the answer's time and the SHA-256 of its body,
/// so a client that pins the public key refuses an answer changed on the way, meant for another
/// request, or replayed. A request without a nonce gets an unsigned answer; a malformed nonce is 400.
struct ResponseSigning: Sendable {
    private let keyId: String
    private let key: P256.Signing.PrivateKey
    private let clock: any WallClock

    /// Nil without `responseSigning` in the configuration.
    init?(_ settings: ResponseSigningSettings, clock: any WallClock) {
        guard let keyId = settings.keyId, let key = settings.privateKey else { return nil }
        self.keyId = keyId
        self.key = key
        self.clock = clock
    }

    static let nonceHeader = "Entitle-Nonce"
    static let signatureHeader = "Entitle-Signature"

    /// `handler` with its answers signed for the request's nonce.
    func signing(_ handler: @escaping HTTPHandler) -> HTTPHandler {
        { context in
            guard let header = context.request.header("entitle-nonce") else { return handler(context) }
            guard let nonce = Self.validNonce(header) else {
                return context.respond(
                    .error(400, code: "BAD_REQUEST", message: "Entitle-Nonce must be base64url (no padding) of 16 to 64 random bytes"))
            }
            let method = context.request.method
            let target = context.request.target
            context.finishing = { response in self.signed(response, nonce: nonce, method: method, target: target) }
            handler(context)
        }
    }

    /// The answer with its `Entitle-Signature`. An answer that cannot be signed (the key failed)
    /// goes unsigned, and the client refuses it: nothing pretends to be signed.
    private func signed(_ response: HTTPResponse, nonce: String, method: String, target: String) -> HTTPResponse {
        let payload: JSONObject = [
            "nonce": .string(nonce), "method": .string(method), "path": .string(target), "time": .int(clock.milliseconds),
            "bodySha256": .string(Base64.encodeURL(SHA256.hash(response.body))),
        ]
        guard let jws = try? JWSSigner.sign(header: ["alg": "ES256", "kid": .string(keyId), "typ": "JWT"], payload: payload, with: key)
        else { return response }
        var response = response
        response.headers.append((Self.signatureHeader, jws))
        return response
    }

    /// 16 to 64 bytes, base64url without padding.
    private static func validNonce(_ text: String) -> String? {
        guard (22...86).contains(text.utf8.count), !text.contains("="), let bytes = try? Base64.decodeURL(text),
            (16...64).contains(bytes.count)
        else { return nil }
        return text
    }

    /// The public key as a JWKS (`GET /.well-known/entitle/jwks.json`).
    var jwks: JSONObject {
        get throws {
            let spki = try key.publicKey.derRepresentation
            // A P-256 SubjectPublicKeyInfo ends with the uncompressed point: 0x04, x, y.
            let point = Array(spki.suffix(65))
            return [
                "keys": .array([
                    .object([
                        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": .string(keyId),
                        "x": .string(Base64.encodeURL(point[1...32])), "y": .string(Base64.encodeURL(point[33...64])),
                    ])
                ])
            ]
        }
    }
}
