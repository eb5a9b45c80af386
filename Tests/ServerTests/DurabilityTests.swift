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

        let server = Process()
        server.executableURL = entitleExecutable
        server.arguments = ["serve", "--config", folder.appendingPathComponent("entitle.json").path]
        let output = Pipe()
        server.standardOutput = output
        try server.run()
        let reader = LineReader(output.fileHandleForReading)
        let port = Int(try XCTUnwrap(try JSONParser.parse(try XCTUnwrap(reader.nextLine()))["port"]?.int64Value))
        // Keep draining the log so the server never blocks on a full pipe.
        Thread { while !output.fileHandleForReading.availableData.isEmpty {} }.start()

        let acknowledged = Acknowledged()
        let killer = Thread {
            while acknowledged.count < 60 { usleep(1000) }
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
                if response.status == 200 { acknowledged.add(uuid) }
            }
        }
        server.waitUntilExit()
        XCTAssertEqual(server.terminationReason, .uncaughtSignal, "the server was killed, not stopped")
        XCTAssertGreaterThanOrEqual(acknowledged.count, 60)
        XCTAssertLessThan(acknowledged.count, notifications.count, "killed mid-stream")

        let store = try SQLiteFactStore(path: folder.appendingPathComponent("entitle.sqlite3").path)
        XCTAssertEqual(try store.integrityCheck(), "ok")
        let stored = Set(try store.notifications(appId: "app", limit: 1000, before: nil).map(\.notificationUUID))
        let missing = acknowledged.all.subtracting(stored)
        XCTAssertEqual(missing, [], "every notification answered 200 is on disk")
    }
}

private final class Acknowledged: @unchecked Sendable {
    private let lock = NSLock()
    private var uuids = Set<String>()
    func add(_ uuid: String) {
        lock.lock()
        uuids.insert(uuid)
        lock.unlock()
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return uuids.count
    }
    var all: Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return uuids
    }
}
