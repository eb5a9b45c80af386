import Crypto
import Foundation

/// `entitle keygen --out PATH`: a fresh P-256 PKCS#8 key for local testing, readable by its owner only.
enum KeygenCommand {
    static let usage = "entitle keygen --out PATH"

    static func run(_ raw: [String]) throws -> Int32 {
        let path = try Arguments(raw, valueOptions: ["out"]).required("out")
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
        return 0
    }
}
