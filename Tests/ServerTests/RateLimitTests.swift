import Application
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// Rate limits over real HTTP: a key over its limit is answered 429 `RATE_LIMITED` with
/// `Retry-After` and the IETF headers while another key is served; an unknown key is limited by
/// address; Apple's notifications and the probes are never refused.
final class RateLimitTests: XCTestCase {
    private var folder: URL!
    private var entitle: EntitleServer!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory()
        try runProcess(
            "openssl",
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", folder.appendingPathComponent("key.p8").path])
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "storage": {"sqlite": "facts.sqlite3"},
             "rateLimits": {"client": {"perSecond": 0.5, "burst": 3}, "address": {"perSecond": 0.5, "burst": 2}},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
               "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
               "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "server_key_0123456789", "role": "server"}],
               "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}}]}
            """)
        entitle = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: nil)
        entitle.start()
    }

    override func tearDownWithError() throws {
        entitle.shutdown()
        entitle = nil
        try? FileManager.default.removeItem(at: folder)
    }

    private func get(_ path: String, key: String?) throws -> TestHTTPClient.Response {
        let client = try TestHTTPClient(port: entitle.port)
        try client.send(rawRequest("GET", path, headers: key.map { ["Authorization: Bearer \($0)"] } ?? []))
        return try client.readResponse()
    }

    func testAKeyOverItsLimitIsRefusedWhileOthersAreServed() throws {
        let path = "/v1/subscribers/7e3fb20b-4cdb-47cc-936d-99d65f608138"
        for remaining in [2, 1, 0] {
            let response = try get(path, key: "client_key_0123456789")
            XCTAssertEqual(response.status, 404, "under the limit: answered (no such subscriber)")
            XCTAssertEqual(response.header("RateLimit-Policy"), #""client";q=3;w=6"#)
            XCTAssertEqual(
                response.header("RateLimit")?.hasPrefix(#""client";r=\#(remaining);t="#), true, response.header("RateLimit") ?? "")
        }
        let refused = try get(path, key: "client_key_0123456789")
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(try JSONParser.parse(refused.body)["error"]?["code"], "RATE_LIMITED")
        XCTAssertEqual(refused.header("Retry-After"), "2", "a token comes back in two seconds")
        XCTAssertNotNil(refused.header("RateLimit"))
        for _ in 0..<20 {
            XCTAssertNotEqual(try get(path, key: "server_key_0123456789").status, 429, "another key is served at full speed")
        }
        let metrics = try get("/metrics", key: nil)
        XCTAssert(metrics.text.contains(#"entitle_rate_limited_total{scope="client"} 1"#), metrics.text)
    }

    func testUnknownKeysAreLimitedByAddressAndNotificationsNever() throws {
        let statuses = try (0..<4).map { _ in try get("/v1/events", key: "guessed_key_0123456789").status }
        XCTAssertEqual(statuses, [401, 401, 429, 429], "guessing keys is slowed by address")
        for index in 0..<12 {
            let client = try TestHTTPClient(port: entitle.port)
            try client.send(
                rawRequest(
                    "POST", "/v1/notifications/apple", headers: ["Content-Type: application/json"], body: #"{"signedPayload":"x.y.z"}"#))
            XCTAssertNotEqual(try client.readResponse().status, 429, "notification \(index): within the address's failure budget")
            XCTAssertEqual(try get("/healthz", key: nil).status, 200)
        }
    }

    func testLimitsAreChecked() throws {
        let bad = folder.appendingPathComponent("bad.json")
        try writeFile(
            bad,
            """
            {"rateLimits": {"client": {"perSecond": 0, "burst": 3}, "everyone": {}},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
               "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"}}]}
            """)
        XCTAssertThrowsError(try ConfigurationLoader.load(path: bad.path, environment: [:])) { error in
            XCTAssert("\(error)".contains("rateLimits.client"), "\(error)")
            XCTAssert("\(error)".contains("everyone"), "\(error)")
        }
    }
}
