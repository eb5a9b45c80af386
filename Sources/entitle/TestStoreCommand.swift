import Application
import Crypto
import Foundation

/// `entitle test-store init --out DIR`: a fresh signing chain for the test store, shaped like
/// Apple's (docs/TEST_STORE.md); the configuration names the folder as `testStore.chain`.
enum TestStoreCommand {
    static let usage = "entitle test-store init --out DIR"

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["out"])
        guard arguments.positionals == ["init"] else { throw UsageError(usage) }
        let folder = try arguments.required("out")
        let manager = FileManager.default
        if manager.fileExists(atPath: folder), !((try? manager.contentsOfDirectory(atPath: folder)) ?? []).isEmpty {
            throw UsageError("\(folder) is not empty; refusing to overwrite a chain")
        }
        try manager.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let made = try SigningChainMaker.make(name: "Entitle Test Store", now: Date())
        let chain = TestStoreChain(root: made.root, intermediate: made.intermediate, leaf: made.leaf, leafKey: made.leafKey)
        for (name, text) in try chain.files() {
            let path = (folder as NSString).appendingPathComponent(name)
            let mode: Int = name.hasSuffix(".key") ? 0o600 : 0o644
            guard manager.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
                Output.error("entitle: cannot write \(path)")
                return 1
            }
        }
        Output.line("wrote the test store's chain to \(folder) (root.pem, intermediate.pem, leaf.pem, leaf.key)")
        Output.line("name it in a test deployment's configuration: \"testStore\": {\"enabled\": true, \"chain\": \"\(folder)\"}")
        return 0
    }
}
