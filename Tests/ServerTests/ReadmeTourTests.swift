import Foundation
import JSON
import TestSupport
import XCTest

/// The README's tour ("Try it with curl") runs as written, offline: its shell blocks are taken
/// from the README itself and run by bash against `entitle serve` on the example configuration
/// (on a free port instead of 8080). Every variable they use is defined by the tour.
final class ReadmeTourTests: XCTestCase {
    func testTheTourRunsAsWritten() throws {
        let folder = try makeTemporaryDirectory("entitle-tour")
        defer { try? FileManager.default.removeItem(at: folder) }
        try writeFile(folder.appendingPathComponent("entitle.json"), try copyExampleConfiguration(to: folder))
        let (server, port) = try startEntitleServe(config: folder.appendingPathComponent("entitle.json").path)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let examples = packageRoot.appendingPathComponent("Keys.example").path + "/"
        let script = try Self.tourBlocks()
            .replacingOccurrences(of: "localhost:8080", with: "localhost:\(port)")
            .replacingOccurrences(of: "Keys.example/", with: examples)
        XCTAssertTrue(script.contains("entitle example-data"), "the tour makes its own signed data")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = entitleExecutable.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let result = try runProcess(
            "/bin/bash", ["-euo", "pipefail", "-c", script], environment: environment, currentDirectory: folder)
        XCTAssertEqual(result.status, 0, result.stderr)
        let output = result.stdout
        for expected in [
            #""status":"ready""#, #""state":"ACTIVE""#, #""periodType":"TRIAL""#, #""state":"REVOKED""#, "NOT_IN_CATALOG",
            "ALREADY_SUBSCRIBED_TO_GROUP", #""type":"REFUND""#, #""type":"RENEWAL""#, #""kind":"transaction""#, "Verified OK",
            #""grant":"#, #""activeTrials":"#, "start,currency,value",
        ] {
            XCTAssertTrue(output.contains(expected), "the tour's output lacks \(expected)")
        }
        XCTAssertEqual(output.components(separatedBy: #"{"status":"applied"}"#).count - 1, 2, "both notifications applied")
        XCTAssertFalse(output.contains(#""code":"INTERNAL""#))
    }

    /// A configuration that does not trust the example chain gets no example data it would refuse.
    func testExampleDataNeedsAConfigurationThatTrustsItsChain() throws {
        let folder = try makeTemporaryDirectory("entitle-tour")
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try copyExampleConfiguration(to: folder).replacingOccurrences(
            of: #""verification": {"rootCertificates": ["example-chain/root.pem"], "allowPrivateRoots": true},"#, with: "")
        try writeFile(folder.appendingPathComponent("entitle.json"), config)
        let result = try runProcess(
            entitleExecutable.path, ["example-data", "--config", folder.appendingPathComponent("entitle.json").path, "--json"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("does not trust"), result.stderr)
    }

    /// The README's test store section runs as written against `entitle serve` on
    /// Keys.example/test-store.json (its first block, which starts that server, is the test's).
    func testTheTestStoreTourRunsAsWritten() throws {
        let folder = try makeTemporaryDirectory("entitle-tour")
        defer { try? FileManager.default.removeItem(at: folder) }
        let examples = packageRoot.appendingPathComponent("Keys.example").path + "/"
        let config = try String(contentsOf: packageRoot.appendingPathComponent("Keys.example/test-store.json"), encoding: .utf8)
            .replacingOccurrences(of: #""port": 8080"#, with: #""port": 0"#)
            .replacingOccurrences(of: #""sqlite": "test-store.sqlite3""#, with: #""sqlite": "\#(folder.path)/tour.sqlite3""#)
            .replacingOccurrences(of: #""chain": "test-store-chain""#, with: #""chain": "\#(examples)test-store-chain""#)
            .replacingOccurrences(of: #": "test-store-chain/"#, with: #": "\#(examples)test-store-chain/"#)
            .replacingOccurrences(of: "SubscriptionKey_EXAMPLEKEY.p8", with: examples + "SubscriptionKey_EXAMPLEKEY.p8")
        try writeFile(folder.appendingPathComponent("test-store.json"), config)
        let (server, port) = try startEntitleServe(config: folder.appendingPathComponent("test-store.json").path)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let blocks = try Self.shellBlocks(of: "Time passing: the test store")
        XCTAssertEqual(blocks.count, 2)
        XCTAssert(
            blocks.first?.contains("entitle serve --config Keys.example/test-store.json") == true, "the first block starts the server")
        let script = blocks.dropFirst().joined(separator: "\n")
            .replacingOccurrences(of: "localhost:8080", with: "localhost:\(port)")
            .replacingOccurrences(of: "Keys.example/", with: examples)
            .replacingOccurrences(of: "--key ", with: "--url http://127.0.0.1:\(port) --key ")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = entitleExecutable.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let result = try runProcess("/bin/bash", ["-euo", "pipefail", "-c", script], environment: environment, currentDirectory: folder)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        for expected in [
            #""notification":"SUBSCRIBED/INITIAL_BUY""#, #""notification":"DID_RENEW""#, #""messageIdentifier":"msg-stay""#,
            #""notification":"CONSUMPTION_REQUEST""#, #""notification":"REFUND""#, #""status":"SENT""#, "passed: 6 steps",
            #""notification":"SUBSCRIPTION_PURCHASED""#, #""store":"play_store""#,
        ] {
            XCTAssertTrue(result.stdout.contains(expected), "the tour's output lacks \(expected): \(result.stdout)")
        }
    }

    /// The ```sh blocks of the README's "Try it with curl" section, in order.
    static func tourBlocks() throws -> String { try shellBlocks(of: "Try it with curl").joined(separator: "\n") }

    /// The ```sh blocks of the README's section `title`, in order.
    static func shellBlocks(of title: String) throws -> [String] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "\n## \(title)\n") else { throw TourError(description: "no section \(title) in the README") }
        let section = readme[start.upperBound...].components(separatedBy: "\n## ").first ?? ""
        var blocks: [String] = []
        for (index, part) in section.components(separatedBy: "```").enumerated() where index % 2 == 1 {
            guard part.hasPrefix("sh\n") else { continue }
            blocks.append(String(part.dropFirst(3)))
        }
        return blocks
    }
}

private struct TourError: Error, CustomStringConvertible {
    let description: String
}
