import Foundation

#if canImport(CryptoKit)
import CryptoKit

/// ES256 with CryptoKit.
struct PlatformSignatureVerifier: SignatureVerifying {
    func isValid(signature: Data, signingInput: Data, key: ResponseSigningKey) -> Bool {
        guard let publicKey = try? P256.Signing.PublicKey(rawRepresentation: key.x + key.y),
            let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return publicKey.isValidSignature(parsed, for: signingInput)
    }
}

enum SHA256Digest {
    static func of(_ data: Data) -> Data { Data(SHA256.hash(data: data)) }
}
#else
import Crypto

/// ES256 with the package's Crypto module (OpenSSL), where CryptoKit is not.
struct PlatformSignatureVerifier: SignatureVerifying {
    /// A P-256 SubjectPublicKeyInfo up to the point (id-ecPublicKey, prime256v1).
    private static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03,
        0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
    ]

    func isValid(signature: Data, signingInput: Data, key: ResponseSigningKey) -> Bool {
        guard let publicKey = try? P256.Signing.PublicKey(derRepresentation: Self.spkiPrefix + key.x + key.y) else { return false }
        return CompactJWS.isValidES256Signature(Array(signature), over: Array(signingInput), publicKey: publicKey)
    }
}

enum SHA256Digest {
    static func of(_ data: Data) -> Data { Data(SHA256.hash(Array(data))) }
}
#endif
