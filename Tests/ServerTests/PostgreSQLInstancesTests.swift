import Foundation
import JSON
import TestSupport
import XCTest

/// Two `entitle serve` processes on one PostgreSQL database, as behind a load balancer: the same
/// notification at both at once, out-of-order copies through both, reads through the other, one
/// instance killed mid-ingest, the database restarted under load.
final class PostgreSQLInstancesTests: XCTestCase {
    private var chain: TestChain!
    private var folder: URL!
    private var processes: [Process] = []
    private var base: Int64 { TestChain.milliseconds(chain.mintedAt) }
    private let day: Int64 = 86_400_000
    private let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    override func setUpWithError() throws {
        chain = try TestChain()
        folder = try makeTemporaryDirectory()
        try runProcess(
            "openssl",
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", folder.appendingPathComponent("key.p8").path])
    }

    override func tearDownWithError() throws {
        for process in processes where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    private func database() throws -> String {
        do { return try PostgreSQLTestCluster.freshDatabase() } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            print("PostgreSQL tests skipped: \(unavailable)")
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
    }

    /// Starts `entitle serve` on `url`; returns the process and its port.
    private func serve(_ url: String) throws -> (Process, Int) {
        let config = folder.appendingPathComponent("entitle.json")
        try writeFile(
            config,
            """
            {"server": {"port": 0}, "storage": {"postgresql": "\(url)", "poolSize": 4},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
              "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "server_key_0123456789", "role": "server"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}}]}
            """)
        let (server, port) = try startEntitleServe(config: config.path)
        processes.append(server)
        return (server, port)
    }

    private func transaction(_ id: String, original: String, signed: Int64, expires: Int64) throws -> String {
        try chain.sign([
            "transactionId": .string(id), "originalTransactionId": .string(original), "bundleId": "com.example.app",
            "productId": "pro.monthly", "environment": "Sandbox", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base),
            "expiresDate": .int(expires), "signedDate": .int(signed), "appAccountToken": .string(token),
        ])
    }

    private func notification(_ index: Int) throws -> (uuid: String, body: String) {
        let uuid = "00000000-0000-4000-8000-\(String(format: "%012d", index))"
        let payload = try chain.sign([
            "notificationType": "DID_RENEW", "notificationUUID": .string(uuid), "signedDate": .int(base + Int64(index)),
            "data": .object([
                "bundleId": "com.example.app", "environment": "Sandbox",
                "signedTransactionInfo": .string(try transaction("t\(index)", original: "o\(index)", signed: base, expires: base + day)),
            ]),
        ])
        return (uuid, JSONValue.object(["signedPayload": .string(payload)]).serializedString)
    }

    private func storedUUIDs(_ port: Int) throws -> Set<String> {
        var found = Set<String>()
        var cursor: String?
        repeat {
            let path = "/v1/notifications?limit=500" + (cursor.map { "&after=\($0)" } ?? "")
            let page = try JSONParser.parse(try call(port, "GET", path).body)
            let items = page["notifications"]?.arrayValue ?? []
            for item in items { if let uuid = item["notificationUUID"]?.stringValue { found.insert(uuid) } }
            cursor = items.count == 500 ? items.last?["cursor"]?.stringValue : nil
        } while cursor != nil
        return found
    }

    // MARK: - Tests

    func testTheSameNotificationAtBothInstancesIsAppliedOnce() throws {
        let url = try database()
        let (_, first) = try serve(url)
        let (_, second) = try serve(url)
        let notifications = try (0..<20).map(notification)
        let statuses = LockedList<String>()
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            let (uuid, body) = notifications[index / 2]
            let port = index % 2 == 0 ? first : second
            guard let response = try? call(port, "POST", "/v1/notifications/apple", body, key: nil),
                let json = try? JSONParser.parse(response.body)
            else { return statuses.append("failed") }
            statuses.append("\(uuid) \(response.status) \(json["status"]?.stringValue ?? "")")
        }
        let all = statuses.all
        XCTAssertEqual(all.filter { $0.hasSuffix(" 200 applied") }.count, 20, "\(all)")
        XCTAssertEqual(all.filter { $0.hasSuffix(" 200 duplicate") }.count, 20, "each was a duplicate at the other instance")
        XCTAssertEqual(try storedUUIDs(second).count, 20)
        let events = try JSONParser.parse(try call(first, "GET", "/v1/events?limit=100").body)["events"]?.arrayValue ?? []
        XCTAssertEqual(events.count, 20, "one event per notification, none for its duplicate")
        XCTAssertEqual(events.compactMap { $0["sequence"]?.int64Value }, Array(1...20), "sequences follow commit order, without gaps")
    }

    func testOutOfOrderCopiesThroughBothInstancesEndWithTheNewest() throws {
        let url = try database()
        let (_, first) = try serve(url)
        let (_, second) = try serve(url)
        // Ten copies of each of five transactions, newest signedDate with the latest expiry, posted
        // in a scrambled order half through each instance.
        var scrambled: [(port: Int, body: String)] = []
        for subscription in 0..<5 {
            for copy in [3, 9, 1, 10, 5, 2, 8, 4, 7, 6] {
                let jws = try transaction(
                    "s\(subscription)", original: "s\(subscription)", signed: base + Int64(copy), expires: base + Int64(copy) * day)
                scrambled.append(((copy % 2 == 0) ? first : second, JSONValue.object(["signedTransaction": .string(jws)]).serializedString))
            }
        }
        let posts = scrambled
        let failures = LockedList<String>()
        DispatchQueue.concurrentPerform(iterations: posts.count) { index in
            let response = try? call(posts[index].port, "POST", "/v1/transactions", posts[index].body, key: "client_key_0123456789")
            if response?.status != 200 { failures.append("\(response?.status ?? 0) \(response?.text ?? "")") }
        }
        XCTAssertEqual(failures.all, [])
        // The newest copy won everywhere: read through the other instance than each write.
        let check = try runProcess(
            "psql", [url, "-At", "-c", "SELECT transaction_id, signed_date - \(base), expires_date - \(base) FROM transactions ORDER BY 1"])
        XCTAssertEqual(
            check.stdout.split(separator: "\n").map(String.init), (0..<5).map { "s\($0)|10|\(10 * day)" }, check.stderr)
        let read = try JSONParser.parse(try call(second, "GET", "/v1/subscribers/by-transaction/s0").body)
        XCTAssertEqual(read["subscriber"]?["entitlements"]?["pro"]?["expiresDateMs"]?.int64Value, base + 10 * day)
    }

    func testKillingOneInstanceMidIngestLosesNoAcknowledgedNotification() throws {
        let url = try database()
        let (victim, first) = try serve(url)
        let (_, second) = try serve(url)
        let notifications = try (0..<240).map(notification)
        let acknowledged = LockedList<String>()
        // Killed once 50 are acknowledged, or after a minute whatever happened: the test fails
        // (below) rather than waiting forever on an instance that never took any.
        let acknowledgedBeforeTheKill = LockedList<Int>()
        let killer = Thread {
            let deadline = Date().addingTimeInterval(60)
            while acknowledged.count < 50, Date() < deadline { usleep(1000) }
            acknowledgedBeforeTheKill.append(acknowledged.count)
            kill(victim.processIdentifier, SIGKILL)
        }
        killer.start()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in stride(from: worker, to: notifications.count, by: 8) {
                let (uuid, body) = notifications[index]
                // Like Apple: an answer that is not 200 (or none) is retried, here at the other instance.
                for port in [index % 2 == 0 ? first : second, second, second] {
                    if let response = try? call(port, "POST", "/v1/notifications/apple", body, key: nil), response.status == 200 {
                        acknowledged.append(uuid)
                        break
                    }
                }
            }
        }
        victim.waitUntilExit()
        XCTAssertEqual(victim.terminationReason, .uncaughtSignal)
        XCTAssertGreaterThanOrEqual(acknowledgedBeforeTheKill.all.first ?? 0, 50, "the kill came mid-ingest, not before it")
        let stored = try storedUUIDs(second)
        XCTAssertEqual(Set(acknowledged.all).subtracting(stored), [], "every acknowledged notification is stored")
        XCTAssertEqual(acknowledged.count, notifications.count, "the surviving instance took the rest")
    }

    func testADatabaseRestartUnderLoadLosesNothingAndRecoversByItself() throws {
        let cluster: PostgreSQLTestCluster.Private
        do { cluster = try PostgreSQLTestCluster.Private() } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
        let url = try cluster.createDatabase()
        let (_, port) = try serve(url)
        let notifications = try (0..<300).map(notification)
        let acknowledged = LockedList<String>()
        let refused = LockedList<String>()
        // Restarted once 60 are acknowledged, or after a minute whatever happened (the count is
        // checked below): never a wait without end.
        let acknowledgedBeforeTheRestart = LockedList<Int>()
        let restarter = Thread {
            let deadline = Date().addingTimeInterval(60)
            while acknowledged.count < 60, Date() < deadline { usleep(1000) }
            acknowledgedBeforeTheRestart.append(acknowledged.count)
            try? cluster.restart()
        }
        restarter.start()
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            for index in stride(from: worker, to: notifications.count, by: 6) {
                let (uuid, body) = notifications[index]
                for _ in 0..<200 {
                    guard let response = try? call(port, "POST", "/v1/notifications/apple", body, key: nil) else { continue }
                    if response.status == 200 {
                        acknowledged.append(uuid)
                        break
                    }
                    refused.append("\(response.status) \(response.header("retry-after") ?? "-")")
                    usleep(50_000)
                }
            }
        }
        XCTAssertGreaterThanOrEqual(acknowledgedBeforeTheRestart.all.first ?? 0, 60, "the restart came mid-ingest, not before it")
        XCTAssertEqual(acknowledged.count, notifications.count, "the server recovered without a restart")
        XCTAssertFalse(refused.all.isEmpty, "writes were refused while the database was down")
        XCTAssertTrue(refused.all.allSatisfy { $0 == "503 10" }, "503 with Retry-After: \(Set(refused.all))")
        XCTAssertEqual(Set(acknowledged.all).subtracting(try storedUUIDs(port)), [], "no acknowledged write was lost")
        XCTAssertEqual(try call(port, "GET", "/readyz", key: nil).status, 200)
    }
}

/// One request on a fresh connection (free, so concurrent workers capture no test case).
private func call(
    _ port: Int, _ method: String, _ path: String, _ body: String? = nil, key: String? = "server_key_0123456789"
)
    throws -> TestHTTPClient.Response
{
    let client = try TestHTTPClient(port: port, timeout: 15)
    var headers = ["Content-Type: application/json"]
    if let key { headers.append("Authorization: Bearer \(key)") }
    try client.send(rawRequest(method, path, headers: headers, body: body))
    return try client.readResponse()
}

extension PostgreSQLInstancesTests {
    /// A SQLite deployment (facts, links, notifications, events, pending deliveries) moved with
    /// `entitle migrate-storage`, twice: the second run copies nothing, and an instance on
    /// PostgreSQL answers what the SQLite one answered.
    func testMigrateStorageCopiesEverythingOnceAndVerifies() throws {
        let url = try database()
        let sqlite = folder.appendingPathComponent("old.sqlite3").path
        let config = folder.appendingPathComponent("sqlite.json")
        try writeFile(
            config,
            """
            {"server": {"port": 0}, "storage": {"sqlite": "\(sqlite)"},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
              "apiKeys": [{"key": "server_key_0123456789", "role": "server"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
              "webhooks": [{"url": "https://127.0.0.1:9/never", "secret": "whsec_\(Data(repeating: 1, count: 32).base64EncodedString())"}]}]}
            """)
        let (server, port) = try startEntitleServe(config: config.path)
        processes.append(server)
        for index in 0..<12 {
            XCTAssertEqual(try call(port, "POST", "/v1/notifications/apple", try notification(index).body, key: nil).status, 200)
        }
        let before = try call(port, "GET", "/v1/subscribers/\(token)").text
        let eventsBefore = try JSONParser.parse(try call(port, "GET", "/v1/events?limit=100").body)["events"]
        server.terminate()
        server.waitUntilExit()

        let first = try runProcess(entitleExecutable.path, ["migrate-storage", "--from", sqlite, "--to", url])
        XCTAssertEqual(first.status, 0, first.stderr + first.stdout)
        XCTAssertTrue(first.stdout.contains("notifications: 12 in SQLite, 12 copied, 12 in PostgreSQL"), first.stdout)
        XCTAssertTrue(first.stdout.contains("events: 12 in SQLite, 12 copied, 12 in PostgreSQL"), first.stdout)
        XCTAssertTrue(first.stdout.contains("deliveries: 12 in SQLite, 12 copied, 12 in PostgreSQL"), first.stdout)
        let second = try runProcess(entitleExecutable.path, ["migrate-storage", "--from", sqlite, "--to", url])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.stdout.contains("verified: every table has all its rows (0 copied now)"), second.stdout)
        let jws = try runProcess("psql", [url, "-At", "-c", "SELECT count(*) FROM transactions WHERE jws LIKE 'eyJ%'"])
        XCTAssertEqual(jws.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "12", "raw JWS copied")

        let (_, moved) = try serve(url)
        XCTAssertEqual(try call(moved, "GET", "/v1/subscribers/\(token)").text, before, "the same subscriber answer")
        let eventsAfter = try JSONParser.parse(try call(moved, "GET", "/v1/events?limit=100").body)["events"]
        XCTAssertEqual(eventsAfter, eventsBefore, "the same events, same bodies and sequences")
        XCTAssertEqual(try call(moved, "POST", "/v1/notifications/apple", try notification(12).body, key: nil).status, 200)
        let next = try JSONParser.parse(try call(moved, "GET", "/v1/events?after=12").body)["events"]?.arrayValue?.first
        XCTAssertEqual(next?["sequence"]?.int64Value, 13, "sequences continue after the copied ones")
        let badTarget = try runProcess(entitleExecutable.path, ["migrate-storage", "--from", sqlite, "--to", "mysql://x"])
        XCTAssertEqual(badTarget.status, 2)
    }
}
