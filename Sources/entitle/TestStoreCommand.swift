import Application
import Crypto
import Foundation
import HTTPClient
import Instants
import JSON
import Server

/// `entitle test-store init --out DIR`: a fresh signing chain for the test store, shaped like
/// Apple's; the configuration names the folder as `testStore.chain`. `entitle test-store run FILE`:
/// runs a scenario on a running test deployment and exits 1 at the first expectation that fails,
/// naming its step. `entitle test-store populate`: a realistic population of customers made by
/// the test store in this process, over the deployment's database (docs/TEST_STORE.md).
enum TestStoreCommand {
    static let usage = """
        entitle test-store init --out DIR
        entitle test-store run FILE [--url http://127.0.0.1:8080] [--key ADMIN_KEY]   (or ENTITLE_ADMIN_KEY)
        entitle test-store populate --config FILE --customers N --months M [--seed S] [--app ID]
        """

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["out", "url", "key", "config", "customers", "months", "seed", "app"])
        switch arguments.positionals.first {
        case "init" where arguments.positionals.count == 1: return try initialize(arguments)
        case "run" where arguments.positionals.count == 2: return try runScenario(arguments.positionals[1], arguments)
        case "populate" where arguments.positionals.count == 1: return try populate(arguments)
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

    /// Starts the deployment in this process (on a port of its own, its clock moved back by the
    /// months), lets the population run to now, prints what it did, and stops.
    private static func populate(_ arguments: Arguments) throws -> Int32 {
        var configuration = try loadConfiguration(arguments)
        guard configuration.testStore.chain != nil else { throw UsageError("the configuration has no test store (\"testStore\")") }
        let customers = try count(arguments, "customers", 1...1_000_000)
        let months = try count(arguments, "months", 1...120)
        var seed: UInt64 = 1
        if let text = arguments["seed"] {
            guard let value = UInt64(text) else { throw UsageError("--seed is a whole number") }
            seed = value
        }
        let app: AppConfiguration
        if let id = arguments["app"] {
            guard let found = configuration.apps.first(where: { $0.id == id }) else { throw UsageError("no app \"\(id)\"") }
            app = found
        } else {
            guard let first = configuration.apps.first else { throw UsageError("the configuration has no app") }
            app = first
        }
        // A port of its own: the deployment's server may be running (on PostgreSQL, side by side).
        configuration.server.host = "127.0.0.1"
        configuration.server.port = 0
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let now = Date()
        let clock = MovableClock(at: calendar.date(byAdding: .month, value: -months, to: now) ?? now)
        let server = try EntitleServer(configuration: configuration, logOutput: nil, clock: clock)
        server.start()
        defer {
            server.shutdown()
            server.waitUntilStopped()
        }
        guard let testStore = server.testStoreService else { throw UsageError("the test store did not start") }
        let started = Date()
        let population = TestStorePopulation(testStore: testStore, app: app, clock: clock)
        let settings = TestStorePopulation.Settings(customers: customers, months: months, seed: seed)
        var summary = try awaitUseCase { try await population.run(settings) }
        summary["seconds"] = JSONValue.double((Date().timeIntervalSince(started) * 10).rounded() / 10)
        Output.line(JSONValue.object(summary).serializedString)
        return 0
    }

    private static func count(_ arguments: Arguments, _ name: String, _ range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(try arguments.required(name)), range.contains(value) else {
            throw UsageError("--\(name) is a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    private static func initialize(_ arguments: Arguments) throws -> Int32 {
        let folder = try arguments.required("out")
        let manager = FileManager.default
        if manager.fileExists(atPath: folder), !(try manager.contentsOfDirectory(atPath: folder)).isEmpty {
            throw UsageError("\(folder) is not empty; refusing to overwrite a chain")
        }
        try manager.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let made = try SigningChainMaker.make(name: "Entitle Test Store", now: Date())
        let chain = TestStoreChain(
            root: made.root, intermediate: made.intermediate, leaf: made.leaf, leafKey: made.leafKey,
            google: try TestStoreGoogleKey(privateKey: try RSA.PrivateKey(generatingBits: 2048)))
        for (name, text) in try chain.files() {
            let path = (folder as NSString).appendingPathComponent(name)
            let mode: Int = name.hasSuffix(".key") || name.hasSuffix("service-account.json") ? 0o600 : 0o644
            guard manager.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
                Output.error("entitle: cannot write \(path)")
                return 1
            }
        }
        Output.line(
            "wrote the test store's chain to \(folder) (root.pem, intermediate.pem, leaf.pem, leaf.key; for Google Play google-token.key, google-jwks.json, google-service-account.json)"
        )
        Output.line("name it in a test deployment's configuration: \"testStore\": {\"enabled\": true, \"chain\": \"\(folder)\"}")
        return 0
    }
}
