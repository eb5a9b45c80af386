import Entitlements
import Foundation
import JSON
import Storage
import TestSupport
import XCTest

/// Every notification answered 200 is on disk, even when the server is killed mid-stream.
final class DurabilityTests: XCTestCase {
    func testAcknowledgedNotificationsSurviveSIGKILL() throws {
        let chain = try TestChain()
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try runProcess(
            "openssl",
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", folder.appendingPathComponent("key.p8").path,
            ])
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}}]}
            """)
        let base = TestChain.milliseconds(chain.mintedAt)
        let notifications = try (0..<400).map { index -> (String, String) in
            let uuid = "00000000-0000-4000-8000-\(String(format: "%012d", index))"
            let transaction = try chain.sign([
                "transactionId": .string("t\(index)"), "originalTransactionId": .string("o\(index % 40)"),
                "bundleId": "com.example.app", "productId": "pro.monthly", "environment": "Sandbox",
                "type": "Auto-Renewable Subscription", "purchaseDate": .int(base),
                "expiresDate": .int(base + 86_400_000), "signedDate": .int(base + Int64(index)),
            ])
            let payload = try chain.sign([
                "notificationType": "DID_RENEW", "notificationUUID": .string(uuid),
                "signedDate": .int(base + Int64(index)),
                "data": .object([
                    "bundleId": "com.example.app", "environment": "Sandbox",
                    "signedTransactionInfo": .string(transaction),
                ]),
            ])
            return (uuid, JSONValue.object(["signedPayload": .string(payload)]).serializedString)
        }

        let (server, port) = try startEntitleServe(config: folder.appendingPathComponent("entitle.json").path)

        let acknowledged = LockedList<String>()
        // The kill comes once 60 notifications were acknowledged, or after a minute whatever
        // happened (the assertions below then say what did not).
        let killer = Thread {
            let deadline = Date().addingTimeInterval(60)
            while acknowledged.count < 60 && Date() < deadline { usleep(1000) }
            kill(server.processIdentifier, SIGKILL)
        }
        killer.start()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            guard let client = try? TestHTTPClient(port: port, timeout: 5) else { return }
            for index in stride(from: worker, to: notifications.count, by: 8) {
                let (uuid, body) = notifications[index]
                guard
                    (try? client.send(
                        rawRequest(
                            "POST", "/v1/notifications/apple", headers: ["Content-Type: application/json"],
                            body: body))) != nil,
                    let response = try? client.readResponse()
                else { return }
                if response.status == 200 { acknowledged.append(uuid) }
            }
        }
        XCTAssertTrue(waitForExit(server, within: 90), "the killed server is gone")
        XCTAssertEqual(server.terminationReason, .uncaughtSignal, "the server was killed, not stopped")
        XCTAssertGreaterThanOrEqual(acknowledged.count, 60)
        XCTAssertLessThan(acknowledged.count, notifications.count, "killed mid-stream")

        let store = try SQLiteFactStore(path: folder.appendingPathComponent("entitle.sqlite3").path)
        XCTAssertEqual(try store.integrityCheck(), "ok")
        let stored = Set(try store.notifications(appId: "app", limit: 1000, before: nil).map(\.notificationUUID))
        let missing = Set(acknowledged.all).subtracting(stored)
        XCTAssertEqual(missing, [], "every notification answered 200 is on disk")
    }
}

extension DurabilityTests {
    /// Events committed with their facts are delivered even when the server is killed before
    /// delivering them: the receiver refuses (503) until the server has been SIGKILLed, and the
    /// restarted server delivers every event, each once accepted.
    func testCommittedEventsAreDeliveredAfterSIGKILL() throws {
        let chain = try TestChain()
        let receiver = try WebhookReceiver()
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try runProcess(
            "openssl",
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", folder.appendingPathComponent("key.p8").path])
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "delivery": {"caFile": "\(receiver.caFile)", "timeoutSeconds": 1, "firstRetrySeconds": 0.2,
              "maxRetrySeconds": 0.5},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
              "apiKeys": [{"key": "server_key_0123456789", "role": "server"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
              "webhooks": [{"url": "\(receiver.url("/gate"))", "secret": "\(receiver.secret)"}]}]}
            """)
        let base = TestChain.milliseconds(chain.mintedAt)
        func serve() throws -> (Process, Int) { try startEntitleServe(config: folder.appendingPathComponent("entitle.json").path) }

        let (first, port) = try serve()
        let client = try TestHTTPClient(port: port, timeout: 5)
        for index in 0..<10 {
            let transaction = try chain.sign([
                "transactionId": .string("t\(index)"), "originalTransactionId": .string("o\(index)"), "bundleId": "com.example.app",
                "productId": "pro.monthly", "environment": "Sandbox", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base),
                "expiresDate": .int(base + 86_400_000), "signedDate": .int(base),
            ])
            let payload = try chain.sign([
                "notificationType": "DID_RENEW", "notificationUUID": .string("00000000-0000-4000-8000-\(String(format: "%012d", index))"),
                "signedDate": .int(base),
                "data": .object(["bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(transaction)]),
            ])
            try client.send(
                rawRequest(
                    "POST", "/v1/notifications/apple", headers: ["Content-Type: application/json"],
                    body: JSONValue.object(["signedPayload": .string(payload)]).serializedString))
            XCTAssertEqual(try client.readResponse().status, 200)
        }
        receiver.wait(for: "/gate") { Set($0.compactMap(\.id)).count >= 1 }
        kill(first.processIdentifier, SIGKILL)
        XCTAssertTrue(waitForExit(first, within: 30), "the killed server is gone")
        let refusedBeforeTheKill = receiver.deliveries("/gate").count
        XCTAssertGreaterThan(refusedBeforeTheKill, 0, "deliveries were tried and refused before the kill")

        try writeFile(receiver.gate, "open")
        let (second, _) = try serve()
        defer {
            kill(second.processIdentifier, SIGTERM)
            _ = waitForExit(second, within: 30)
        }
        // Attempts answered after the gate opened are accepted; every event gets one.
        let received = receiver.wait(for: "/gate", timeout: 40) { Set($0.dropFirst(refusedBeforeTheKill).compactMap(\.id)).count == 10 }
            .dropFirst(refusedBeforeTheKill)
        XCTAssertEqual(Set(received.compactMap(\.id)).count, 10, "every committed event is delivered after the restart")
        XCTAssertTrue(received.allSatisfy(\.signatureValid))
        XCTAssertEqual(Set(received.map { $0.json["type"]?.stringValue ?? "" }), ["RENEWAL"])
    }
}

/// Waits for `process` to end, at most `seconds`: past the deadline it is killed (so a test never
/// hangs on it) and the answer is false.
func waitForExit(_ process: Process, within seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    guard process.isRunning else { return true }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    return false
}
