import Foundation

/// Why an answer is not trusted (docs/SWIFT_CLIENT.md, "Answers the app can trust").
public enum UntrustedAnswer: Error, Sendable, Equatable {
    /// No `Entitle-Signature` (the server signs no answers, or something on the way removed it).
    case unsigned
    case malformedSignature
    /// Signed with a key the app did not pin.
    case unknownKey(String)
    /// The signature does not verify with the pinned key.
    case badSignature
    /// Signed for another request: its nonce, method or path is not this request's.
    case anotherRequest
    /// Signed too long ago (or in the future): a replayed answer.
    case stale
    /// The body is not the one signed.
    case changedBody
}

/// Checks an ES256 signature with a pinned key: CryptoKit on Apple platforms, the package's
/// Crypto module on Linux (`PlatformSignatureVerifier`).
protocol SignatureVerifying: Sendable {
    func isValid(signature: Data, signingInput: Data, key: ResponseSigningKey) -> Bool
}

/// The rules an answer must pass to be trusted, in one place: signed by a pinned key, for this
/// request (nonce, method, path), recently, over this body.
struct SignedAnswerCheck: Sendable {
    let keys: [ResponseSigningKey]
    let allowedClockSkew: TimeInterval
    let verifier: any SignatureVerifying

    /// The answer's signed time, when every rule holds.
    func check(
        signature header: String?, nonce: String, method: String, path: String, body: Data, now: Date
    ) throws(UntrustedAnswer) -> Date {
        guard let header else { throw .unsigned }
        let parts = header.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let jwsHeader = try? JSONDecoder().decode(Header.self, from: headerBytes),  // whatever is wrong, it is malformed
            let claims = try? JSONDecoder().decode(Claims.self, from: payloadBytes)
        else { throw .malformedSignature }
        guard jwsHeader.alg == "ES256" else { throw .malformedSignature }
        guard let key = keys.first(where: { $0.keyId == jwsHeader.kid }) else { throw .unknownKey(jwsHeader.kid) }
        guard verifier.isValid(signature: signature, signingInput: Data("\(parts[0]).\(parts[1])".utf8), key: key) else {
            throw .badSignature
        }
        guard claims.nonce == nonce, claims.method == method, claims.path == path else { throw .anotherRequest }
        let signedAt = Date(timeIntervalSince1970: Double(claims.time) / 1000)
        guard abs(signedAt.timeIntervalSince(now)) <= allowedClockSkew else { throw .stale }
        guard claims.bodySha256 == Base64URL.encode(SHA256Digest.of(body)) else { throw .changedBody }
        return signedAt
    }

    private struct Header: Decodable {
        var alg: String
        var kid: String
    }

    private struct Claims: Decodable {
        var nonce: String
        var method: String
        var path: String
        var time: Int64
        var bodySha256: String
    }
}
