import Foundation
import JSON
import Server
import TestSupport
import XCTest

/// `entitle test-store populate`: the command makes a population in its own process over the
/// deployment's database; the same seed makes the same population, and Entitle's figures and
/// events come from what the test store sent.
final class TestStorePopulationTests: TestStoreTestCase {
    private func populate(seed: Int) throws -> JSONValue {
        let run = try runProcess(
            entitleExecutable.path,
            [
                "test-store", "populate", "--config", folder.appendingPathComponent("entitle.json").path, "--customers", "40",
                "--months", "3", "--seed", String(seed),
            ])
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        return try JSONParser.parse(Array(run.stdout.utf8))
    }

    func testASeedMakesTheSamePopulationAndEntitleDerivesFromIt() throws {
        stop()  // the command runs the deployment in its own process
        let first = try populate(seed: 7)
        XCTAssertEqual(first["customers"], 40)
        XCTAssertEqual(first["notifications"]?["refused"], nil, "every notification verified: \(first)")
        let delivered = try XCTUnwrap(first["notifications"]?["delivered"]?.integer(in: 1...1_000_000), "\(first)")
        XCTAssertGreaterThan(delivered, 40, "purchases and renewals")
        XCTAssertEqual((first["trials"]?.integer(in: 0...40) ?? 0) + (first["purchases"]?.integer(in: 0...40) ?? 0), 40)
        let onGooglePlay = try XCTUnwrap(first["googlePlayCustomers"]?.integer(in: 1...39), "some customers buy on Google Play: \(first)")

        let again = Self.withoutTimings(try populate(seed: 7))
        let other = Self.withoutTimings(try populate(seed: 8))
        XCTAssertEqual(again, Self.withoutTimings(first), "the same seed, the same choices")
        XCTAssertNotEqual(other, Self.withoutTimings(first))

        entitle = try server(environments: #"["Sandbox"]"#)
        entitle.start()
        let summary = call("GET", "/v1/metrics/summary?environment=Sandbox", key: "server_key_0123456789").1["summary"]
        XCTAssertGreaterThan(summary?["activeSubscriptions"]?.integer(in: 0...1_000_000) ?? 0, 0, "\(String(describing: summary))")
        let events = call("GET", "/v1/events?limit=1000", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        XCTAssert(events.contains { $0["type"] == "RENEWAL" }, "renewals happened over the months")
        let playCustomers = Set(events.filter { "\($0)".contains("play_store") }.compactMap { $0["appAccountToken"]?.stringValue })
        // Three populations, two of them the same customers (seed 7): at least the first's.
        XCTAssertGreaterThanOrEqual(Int64(playCustomers.count), onGooglePlay, "each Google Play customer's purchase reached Entitle")
    }

    private static func withoutTimings(_ answer: JSONValue) -> JSONValue {
        guard var object = answer.objectValue else { return answer }
        object["seconds"] = nil
        return .object(object)
    }
}
