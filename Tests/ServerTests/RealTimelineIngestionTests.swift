import AppStore
import Application
import Entitlements
import Foundation
import HTTP
import Instants
import JSON
import Server
import Storage
import TestSupport
import XCTest

/// The real Apple-signed subscriber timeline replayed through notification ingestion into a SQLite
/// store; after each step the stored subscriber, evaluated at that notification's signing time,
/// is what the conformance manifest (and Apple's own `data.status`) says.
final class RealTimelineIngestionTests: XCTestCase {
    /// Through the HTTP API: `POST /v1/notifications/apple` for each step, `POST /v1/transactions`
    /// for the embedded transaction (a client posting what StoreKit gave it), then
    /// `GET /v1/subscribers/by-transaction/…?at=` at the notification's signing time.
    func testTimelineOverHTTP() throws {
        let conformance = try conformanceDirectory()
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (real, timeline) = try realTimeline(conformance)
        let entitle = try EntitleServer(
            configuration: timelineConfiguration(conformance, folder: folder, timeline: timeline),
            logOutput: nil)
        func call(_ method: String, _ target: String, _ body: JSONObject?, key: Bool = true) -> (Int, JSONValue) {
            var headers: [(name: String, value: String)] = [("content-type", "application/json")]
            if key { headers.append(("authorization", "Bearer server_key_0123456789")) }
            let response = entitle.handle(
                HTTPRequest(
                    method: method, target: target, headers: headers,
                    body: body.map { JSONValue.object($0).serializedBytes } ?? []))
            return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
        }
        let original = timeline["subscriber"]!["originalTransactionId"]!.stringValue!
        for step in timeline["steps"]!.arrayValue! {
            let name = step["notification"]!.stringValue!
            let jws = try String(contentsOf: real.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(call("POST", "/v1/notifications/apple", ["signedPayload": .string(jws)], key: false).0, 200, name)
            let transaction = try String(
                contentsOf: real.appendingPathComponent(step["embeddedTransaction"]!.stringValue!), encoding: .utf8)
            XCTAssertEqual(call("POST", "/v1/transactions", ["signedTransaction": .string(transaction)]).0, 200, name)
            let (status, json) = call("GET", "/v1/subscribers/by-transaction/\(original)?at=\(step["signedDate"]!.int64Value!)", nil)
            XCTAssertEqual(status, 200, name)
            let expected = step["expected"]!
            XCTAssertEqual(json["subscriber"]?["entitlements"]?["pro"]?["isActive"]?.boolValue, expected["entitled"]?.boolValue, name)
            XCTAssertEqual(
                json["subscriber"]?["entitlements"]?["pro"]?["productId"]?.stringValue, expected["currentProductId"]?.stringValue, name)
        }
        // The events the timeline caused (docs/EVENTS.md, "Which fact causes which event"); the client
        // posts of transactions the notifications already carried add none.
        let (status, feed) = call("GET", "/v1/events?limit=100", nil)
        XCTAssertEqual(status, 200)
        let events = feed["events"]?.arrayValue ?? []
        XCTAssertEqual(
            events.compactMap { $0["type"]?.stringValue },
            [
                "RENEWAL", "RENEWAL", "CANCELLATION", "EXPIRATION", "RENEWAL", "PRODUCT_CHANGE", "CANCELLATION", "UNCANCELLATION",
                "PRODUCT_CHANGE", "PRODUCT_CHANGE", "CANCELLATION", "EXPIRATION", "RENEWAL", "REFUND_REQUESTED", "RENEWAL", "REFUND",
            ])
        XCTAssertEqual(events.compactMap { $0["sequence"]?.int64Value }, Array(1...Int64(events.count)))
        let upgrade = events[5]
        XCTAssertEqual(upgrade["takesEffect"]?.stringValue, "IMMEDIATELY")
        XCTAssertEqual(upgrade["newProductId"]?.stringValue, "com.getsession.org.pro_sub")
        XCTAssertEqual(events[8]["takesEffect"]?.stringValue, "AT_RENEWAL")
        XCTAssertEqual(events[8]["newProductId"]?.stringValue, "com.getsession.org.pro_sub_3_months")
        XCTAssertEqual(events[3]["expirationReason"]?.stringValue, "UNSUBSCRIBE")
        XCTAssertEqual(events[2]["cancelReason"]?.stringValue, "UNSUBSCRIBE")
        // Apple's CONSUMPTION_REQUEST before the refund: a refund request, with Apple's 12 hours.
        let requested = events[13]
        XCTAssertEqual(requested["notificationType"]?.stringValue, "CONSUMPTION_REQUEST")
        XCTAssertEqual(
            requested["refundRequest"]?["deadlineMs"]?.int64Value,
            requested["refundRequest"]?["requestedAtMs"]?.int64Value.map { $0 + 12 * 3_600_000 })
        let refund = events[15]
        XCTAssertEqual(refund["refundedTransactionId"]?.stringValue, "2000001032604840")
        XCTAssertEqual(refund["endedAccess"]?.boolValue, false, "the refunded period was not the current one")
        XCTAssertEqual(refund["currency"]?.stringValue, "AUD")
        XCTAssertEqual(refund["price"]?.doubleValue, 1.99)
        XCTAssertEqual(refund["notificationType"]?.stringValue, "REFUND")
        XCTAssertEqual(refund["occurredAtMs"]?.int64Value, 1_760_592_122_788, "the notification's signedDate")
        XCTAssertEqual(refund["subscriber"]?["entitlements"]?["pro"]?["productId"]?.stringValue, "com.getsession.org.pro_sub_3_months")
        XCTAssertEqual(refund["entitlements"]?.arrayValue, ["pro"])
    }

    /// The real Apple-signed files' folder and the manifest's `entitlementTimeline`.
    private func realTimeline(_ conformance: URL) throws -> (folder: URL, timeline: JSONValue) {
        let real = conformance.appendingPathComponent("real-appstore")
        let manifest = try JSONParser.parse([UInt8](Data(contentsOf: real.appendingPathComponent("manifest.json"))))
        return (real, try XCTUnwrap(manifest["entitlementTimeline"]))
    }

    /// A configuration for the timeline's app (Sandbox, Apple's G3 root) in a fresh folder.
    private func timelineConfiguration(_ conformance: URL, folder: URL, timeline: JSONValue) throws -> EntitleConfiguration {
        try runProcess(
            "openssl",
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", folder.appendingPathComponent("key.p8").path,
            ])
        let products = timeline["subscriber"]!["products"]!.arrayValue!.map {
            #""\#($0.stringValue!)": {"subscriptionGroup": "21752814", "entitlements": ["pro"]}"#
        }
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "apps": [{"id": "session", "bundleId": "com.loki-project.loki-messenger", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
              "apiKeys": [{"key": "server_key_0123456789", "role": "server"}],
              "verification": {"rootCertificates": ["\(conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path)"]},
              "products": {\(products.joined(separator: ","))}}]}
            """)
        return try ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:])
    }

    func testTimelineThroughTheStore() throws {
        let conformance = try conformanceDirectory()
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (real, timeline) = try realTimeline(conformance)
        let configuration = try timelineConfiguration(conformance, folder: folder, timeline: timeline)
        let application = try EntitleApplication(
            configuration: configuration,
            store: try SQLiteFactStore(path: configuration.storage.sqlitePath), clock: SystemClock(), machineClock: SystemClock(),
            newId: IdSource.random)
        let subscribers = try application.services(appId: "session").subscribers
        func ingest(_ jws: String) throws -> NotificationIngestion.Outcome {
            try waitForCompletion { application.ingestNotification(signedPayload: jws, receivedAt: Date(), completion: $0) }
        }
        let original = timeline["subscriber"]!["originalTransactionId"]!.stringValue!
        for step in timeline["steps"]!.arrayValue! {
            let name = step["notification"]!.stringValue!
            let jws = try String(contentsOf: real.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(try ingest(jws), .applied, name)
            let at = Date(timeIntervalSince1970: Double(step["signedDate"]!.int64Value!) / 1000)
            let subscriber = try XCTUnwrap(try subscribers.subscriber(originalTransactionId: original, environment: .sandbox, at: at), name)
            let expected = step["expected"]!
            let pro = subscriber["entitlements"]?["pro"]
            XCTAssertEqual(pro?["isActive"]?.boolValue, expected["entitled"]?.boolValue, name)
            XCTAssertEqual(pro?["productId"]?.stringValue, expected["currentProductId"]?.stringValue, name)
            XCTAssertEqual(pro?["expiresDateMs"]?.int64Value, expected["currentExpiresDate"]?.int64Value, name)
            let current = subscriber["subscriptions"]?[expected["currentProductId"]!.stringValue!]
            XCTAssertEqual(current?["transactionId"]?.stringValue, expected["currentTransactionId"]?.stringValue, name)
        }
        // Replaying the same notifications changes nothing: each is a duplicate.
        let first = try String(
            contentsOf: real.appendingPathComponent(timeline["steps"]!.arrayValue![0]["notification"]!.stringValue!),
            encoding: .utf8)
        XCTAssertEqual(try ingest(first), .duplicate)
    }
}
