package import Crypto
import Foundation

/// `"responseSigning"`: a P-256 key of the developer's own (`entitle keygen --response-signing`)
/// with which Entitle signs the answers an app must be able to trust (the subscriber, a signed
/// offer, eligibility): docs/API.md, "Answers the app can trust". Its public key is published at
/// `/.well-known/entitle/jwks.json` and pinned in the app.
package struct ResponseSigningSettings: Sendable {
    package var keyId: String?
    package var privateKeyFile: String?
    /// The key, loaded at start-up when configured.
    package var privateKey: P256.Signing.PrivateKey?

    package init() {}

    package static let section = ConfigurationSection<ResponseSigningSettings>(
        "responseSigning",
        [
            .init("keyId", .text) { $0.keyId = $1.text },
            .init("privateKeyFile", .path) { $0.privateKeyFile = $1.text },
        ])
}

extension EntitleConfiguration {
    /// Loads the response-signing key, when configured: both members, a readable P-256 key.
    mutating func loadResponseSigningKey(reader: inout ConfigurationReader) {
        let settings = responseSigning
        guard settings.keyId != nil || settings.privateKeyFile != nil else { return }
        guard let keyId = settings.keyId, !keyId.isEmpty, let file = settings.privateKeyFile else {
            return reader.problem("responseSigning", "give both keyId and privateKeyFile (entitle keygen --response-signing makes the key)")
        }
        guard keyId.utf8.count <= 64, keyId.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) else {
            return reader.problem("responseSigning.keyId", "at most 64 printable ASCII characters, no spaces or quotes")
        }
        do {
            responseSigning.privateKey = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: file, encoding: .utf8))
        } catch {
            reader.problem("responseSigning.privateKeyFile", "\(file) is not a readable P-256 private key (PKCS#8 or SEC1 PEM)")
        }
    }
}
