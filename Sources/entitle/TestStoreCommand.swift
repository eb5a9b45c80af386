import Application
import Crypto
import Foundation
import HTTPClient
import JSON

/// `entitle test-store init --out DIR`: a fresh signing chain for the test store, shaped like
/// Apple's; the configuration names the folder as `testStore.chain`. `entitle test-store run FILE`:
/// runs a scenario on a running test deployment and exits 1 at the first expectation that fails,
/// naming its step (docs/TEST_STORE.md).
enum TestStoreCommand {
    static let usage = """
        entitle test-store init --out DIR
        entitle test-store run FILE [--url http://127.0.0.1:8080] [--key ADMIN_KEY]   (or ENTITLE_ADMIN_KEY)
        """

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["out", "url", "key"])
        switch arguments.positionals.first {
        case "init" where arguments.positionals.count == 1: return try initialize(arguments)
        case "run" where arguments.positionals.count == 2: return try runScenario(arguments.positionals[1], arguments)
        default: throw UsageError(usage)
        }
    }

    private static func runScenario(_ file: String, _ arguments: Arguments) throws -> Int32 {
        guard let scenario = FileManager.default.contents(atPath: file) else { throw UsageError("cannot read \(file)") }
        guard let key = arguments["key"] ?? ProcessInfo.processInfo.environment["ENTITLE_ADMIN_KEY"] else {
            throw UsageError("give the deployment's admin key with --key or ENTITLE_ADMIN_KEY")
        }
        let url = (arguments["url"] ?? "http://127.0.0.1:8080") + "/v1/test-store/scenarios"
        var configuration = HTTPClient.Configuration()
        configuration.totalTimeout = 600
        let response = try HTTPClient(configuration: configuration).send(
            HTTPClientRequest(
                method: "POST", url: url, headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")],
                body: [UInt8](scenario)))
        // An answer that is not JSON (a proxy's error page, say) is reported by its status below.
        let answer = (try? JSONParser.parse(response.body)) ?? .null
        switch response.status {
        case 200:
            Output.line("passed: \(answer["steps"]?.integer(in: 0...1000) ?? 0) steps")
            return 0
        case 422 where answer["error"]?["code"] == "SCENARIO_FAILED":
            let error = answer["error"] ?? .null
            Output.error("failed at step \(error["failedStep"]?.integer(in: 0...1000) ?? 0): \(error["expectation"]?.stringValue ?? "?")")
            if let expected = error["expected"] { Output.error("  expected \(expected.serializedString)") }
            if let actual = error["actual"] { Output.error("  found    \(actual.serializedString)") }
            if let reason = error["reason"]?.stringValue { Output.error("  \(reason)") }
            return 1
        default:
            Output.error("entitle: \(url) answered \(response.status): \(answer["error"]?["message"]?.stringValue ?? "")")
            return response.status == 400 ? 2 : 1
        }
    }

    private static func initialize(_ arguments: Arguments) throws -> Int32 {
        let folder = try arguments.required("out")
        let manager = FileManager.default
        if manager.fileExists(atPath: folder), !(try manager.contentsOfDirectory(atPath: folder)).isEmpty {
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
