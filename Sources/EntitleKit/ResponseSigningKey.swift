public import Foundation

/// A response-signing public key, as the server publishes it (a P-256 JWK).
public struct ResponseSigningKey: Sendable, Equatable {
    public let keyId: String
    /// The point's coordinates, 32 bytes each.
    public let x: Data
    public let y: Data

    public init(keyId: String, x: Data, y: Data) {
        self.keyId = keyId
        self.x = x
        self.y = y
    }

    /// The keys of a JWKS document (`GET /.well-known/entitle/jwks.json`), to pin in the app.
    public static func keys(jwks: Data) throws -> [ResponseSigningKey] {
        struct Document: Decodable {
            struct Key: Decodable {
                var kty: String
                var crv: String
                var kid: String
                var x: String
                var y: String
            }
            var keys: [Key]
        }
        return try JSONDecoder().decode(Document.self, from: jwks).keys.compactMap { key in
            guard key.kty == "EC", key.crv == "P-256", let x = Base64URL.decode(key.x), let y = Base64URL.decode(key.y), x.count == 32,
                y.count == 32
            else { return nil }
            return ResponseSigningKey(keyId: key.kid, x: x, y: y)
        }
    }
}

/// base64url without padding (JWS).
enum Base64URL {
    static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
