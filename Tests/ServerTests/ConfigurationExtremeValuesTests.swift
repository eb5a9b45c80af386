import Foundation
import JSON
import TestSupport
import XCTest

/// Every number a configuration holds, set in turn to values at and beyond every edge, goes
/// through `check-config` and `serve` alike: what check-config refuses, serve refuses with the
/// same exit status; what it accepts, serve starts on and answers. A `burst` of 1e19 passed
/// check-config and trapped at start-up (under the shipped unit, a crash loop).
final class ConfigurationExtremeValuesTests: XCTestCase {
    /// Each numeric member, as a path into the example configuration (`0` is the first app).
    static let members: [[String]] = [
        ["server", "port"], ["server", "eventLoops"], ["server", "maxBodyBytes"], ["server", "maxConnections"],
        ["server", "blockingThreads"], ["server", "outboundThreads"], ["server", "shutdownGraceSeconds"],
        ["server", "headerTimeoutSeconds"], ["server", "idleTimeoutSeconds"], ["storage", "poolSize"],
        ["delivery", "timeoutSeconds"], ["delivery", "firstRetrySeconds"], ["delivery", "maxRetrySeconds"],
        ["delivery", "retryWindowSeconds"], ["delivery", "concurrencyPerEndpoint"], ["console", "sessionHours"],
        ["rateLimits", "client", "perSecond"], ["rateLimits", "client", "burst"], ["rateLimits", "server", "perSecond"],
        ["rateLimits", "server", "burst"], ["rateLimits", "admin", "perSecond"], ["rateLimits", "admin", "burst"],
        ["rateLimits", "address", "perSecond"], ["rateLimits", "address", "burst"],
        ["apps", "0", "appAppleId"], ["apps", "0", "refunds", "retrySeconds"],
        ["apps", "0", "refunds", "rules", "0", "when", "hoursSincePurchaseAtMost"],
        ["apps", "0", "refunds", "rules", "0", "when", "consumedAtLeast"],
        ["apps", "0", "refunds", "rules", "0", "when", "refundsInLast365DaysAtLeast"],
        ["apps", "0", "appStoreServerAPI", "callRetrySeconds"], ["apps", "0", "appStoreServerAPI", "tokenRetrySeconds"],
        ["apps", "0", "googlePlay", "acknowledgementRetrySeconds"],
        ["apps", "0", "retention", "offerCooldownDays"],
        ["apps", "0", "retention", "saveWindowDays"], ["apps", "0", "retention", "rules", "0", "when", "monthsSubscribedAtLeast"],
    ]
    static let environmentVariables = [
        "ENTITLE_PORT", "ENTITLE_EVENT_LOOPS", "ENTITLE_MAX_BODY_BYTES", "ENTITLE_MAX_CONNECTIONS", "ENTITLE_BLOCKING_THREADS",
        "ENTITLE_OUTBOUND_THREADS",
    ]
    static let extremes: [JSONValue] = [.double(1e19), .int(.max), .int(.min), .double(-1e308), .int(0), .double(0.5), .int(-1)]

    private var folder: URL!
    private var example: JSONValue!
    private var google: GooglePlayStandIn!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory()
        example = try JSONParser.parse(try copyExampleConfiguration(to: folder))
        google = try GooglePlayStandIn(packageName: "com.example.android")
        let play = """
            {"packageName": "com.example.android", "serviceAccountKeyFile": "\(google.serviceAccountFile.path)",
             "pubsub": {"audience": "https://entitle.example.com/v1/notifications/google",
                        "serviceAccountEmail": "pubsub-push@example-project.iam.gserviceaccount.com"},
             "jwks": "\(google.jwksFile.path)", "apiURL": "\(google.baseURL)", "tokenURL": "\(google.tokenURL)",
             "acknowledgementRetrySeconds": 60}
            """
        example = example.setting(["apps", "0", "googlePlay"], try JSONParser.parse(play))
        // Members that the example leaves out, present so each path exists.
        for (path, member) in [
            (["rateLimits"], #"{"client": {"perSecond": 20, "burst": 40}}"#),
            (["apps", "0", "refunds"], #"{"rules": [{"name": "r", "when": {"delivered": true}, "prefer": "DECLINE"}]}"#),
            (
                ["apps", "0", "retention"],
                #"{"defaultMessage": "stay", "rules": [{"when": {"inTrial": true}, "answer": {"message": "stay"}}]}"#
            ),
        ] {
            example = example.setting(path, try JSONParser.parse(member))
        }
    }

    override func tearDownWithError() throws {
        google = nil
        try? FileManager.default.removeItem(at: folder)
    }

    /// The list above is every number the parsers read: a new one must be added here.
    func testTheListHoldsEveryNumberTheParsersRead() throws {
        let sources = packageRoot.appendingPathComponent("Sources/Application/Configuration")
        var read = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let calls = try NSRegularExpression(pattern: #"reader\.(?:integer|number|seconds)\([^,]+, "(\w+)""#)
            let listed = try NSRegularExpression(pattern: #"\("(\w+(?:Seconds|AtLeast|AtMost))", \\"#)
            // Members of a declared section (ConfigurationSection): `.init("port", environment: …, .integer(…))`.
            let declared = try NSRegularExpression(pattern: #"\.init\("(\w+)"(?:, environment: "\w+")?, \.(?:integer|number|seconds)\("#)
            for pattern in [calls, listed, declared] {
                for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    read.insert(String(text[Range(match.range(at: 1), in: text)!]))
                }
            }
        }
        XCTAssertGreaterThan(read.count, 20)
        let listed = Set(Self.members.compactMap(\.last))
        XCTAssertEqual(read.subtracting(listed).sorted(), [], "numbers the parsers read that this test does not set")
    }

    func testEveryConfigurationNumberIsCheckedAlikeByCheckConfigAndServe() throws {
        var accepted = 0
        var refused = 0
        for member in Self.members {
            for value in Self.extremes {
                let what = "\(member.joined(separator: ".")) = \(value.serializedString)"
                if try checkAlike(example.setting(member, value), environment: [:], what) { accepted += 1 } else { refused += 1 }
            }
        }
        for name in Self.environmentVariables {
            for text in ["99999999999999999999", "-1", "1e19", "0", "65536"] {
                _ = try checkAlike(example, environment: [name: text], "\(name)=\(text)")
            }
        }
        XCTAssertGreaterThan(accepted, 20)
        XCTAssertGreaterThan(refused, 100)
    }

    /// check-config's verdict and serve's agree; a start-up never ends on a signal. True when accepted.
    private func checkAlike(_ configuration: JSONValue, environment: [String: String], _ what: String) throws -> Bool {
        let path = folder.appendingPathComponent("entitle.json")
        try writeFile(path, configuration.serializedString)
        var processEnvironment = ProcessInfo.processInfo.environment
        processEnvironment.merge(environment) { $1 }
        let check = try runProcess(entitleExecutable.path, ["check-config", "--config", path.path], environment: processEnvironment)
        let serve = Process()
        serve.executableURL = entitleExecutable
        serve.arguments = ["serve", "--config", path.path]
        serve.environment = processEnvironment
        let output = Pipe()
        serve.standardOutput = output
        serve.standardError = FileHandle.nullDevice
        try serve.run()
        let reader = LineReader(output.fileHandleForReading)
        var port: Int?
        while let line = reader.nextLine(timeout: 20) {
            let record = try? JSONParser.parse(line)
            if record?["msg"] == "listening" {
                port = record?["port"]?.int64Value.map(Int.init)
                break
            }
        }
        if let port {
            let client = try TestHTTPClient(port: port, timeout: 10)
            try client.send(rawRequest("GET", "/healthz"))
            XCTAssertEqual(try client.readResponse().status, 200, what)
            serve.terminate()
        } else if serve.isRunning {
            // Neither listening nor ended within the wait: a failure below, not a test that hangs.
            serve.terminate()
        }
        serve.waitUntilExit()
        XCTAssertEqual(serve.terminationReason, .exit, "\(what): serve ended on signal \(serve.terminationStatus)")
        if check.status == 0 {
            XCTAssertNotNil(port, "\(what): check-config accepted it, serve did not start")
        } else {
            XCTAssertEqual(check.status, 2, "\(what): \(check.stderr)")
            XCTAssertNil(port, "\(what): check-config refused it (\(check.stderr)), serve started")
            XCTAssertEqual(serve.terminationStatus, 2, "\(what): serve exits as check-config does")
        }
        return check.status == 0
    }
}

extension JSONValue {
    /// A copy with the member at `path` replaced; a number step indexes an array.
    func setting(_ path: [String], _ value: JSONValue) -> JSONValue {
        guard let step = path.first else { return value }
        let rest = Array(path.dropFirst())
        if let index = Int(step), var array = arrayValue, array.indices.contains(index) {
            array[index] = array[index].setting(rest, value)
            return .array(array)
        }
        var object = objectValue ?? [:]
        object[step] = (object[step] ?? .null).setting(rest, value)
        return .object(object)
    }
}
