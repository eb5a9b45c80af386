import Crypto
import Foundation

/// `entitle keygen --out PATH`: a fresh P-256 PKCS#8 key for local testing, readable by its owner
/// only. With `--response-signing`: the key Entitle signs answers with (docs/API.md), its key id
/// (from the public key's digest) and the configuration that names it.
enum KeygenCommand {
    static let usage = "entitle keygen --out PATH [--response-signing]"

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["out"], flagOptions: ["response-signing"])
        let path = try arguments.required("out")
        guard !FileManager.default.fileExists(atPath: path) else {
            throw UsageError("\(path) exists; refusing to overwrite a key")
        }
        let key = try P256.Signing.PrivateKey()
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(try key.pemRepresentation.utf8),
                attributes: [.posixPermissions: 0o600])
        else {
            Output.error("entitle: cannot write \(path)")
            return 1
        }
        Output.line("wrote \(path)")
        Output.line(try key.publicKey.pemRepresentation.trimmingCharacters(in: .newlines))
        if arguments.flags.contains("response-signing") {
            let keyId = String(Base64.encodeURL(SHA256.hash(try key.publicKey.derRepresentation)).prefix(16))
            Output.line("name it in the configuration (and pin its public key, GET /.well-known/entitle/jwks.json, in the app):")
            Output.line(#""responseSigning": {"keyId": "\#(keyId)", "privateKeyFile": "\#(path)"}"#)
        }
        return 0
    }
}
