import Entitlements
import Foundation
import JSON
import Server
import Storage
import TestSupport
import XCTest

/// The real Apple-signed subscriber timeline replayed through notification ingestion into a SQLite
/// store; after each step the stored subscriber, evaluated at that notification's signing time,
/// is what the conformance manifest (and Apple's own `data.status`) says.
final class RealTimelineIngestionTests: XCTestCase {
    func testTimelineThroughTheStore() throws {
        guard let conformance = conformanceDirectory() else { return }
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let real = conformance.appendingPathComponent("real-appstore")
        let manifest = try JSONParser.parse([UInt8](Data(contentsOf: real.appendingPathComponent("manifest.json"))))
        let timeline = try XCTUnwrap(manifest["entitlementTimeline"])
        try runProcess("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                                   "-out", folder.appendingPathComponent("key.p8").path])
        let products = timeline["subscriber"]!["products"]!.arrayValue!.map { #""\#($0.stringValue!)": {"subscriptionGroup": "21752814", "entitlements": ["pro"]}"# }
        try writeFile(folder.appendingPathComponent("entitle.json"), """
            {"apps": [{"id": "session", "bundleId": "com.loki-project.loki-messenger", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
              "verification": {"rootCertificates": ["\(conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path)"]},
              "products": {\(products.joined(separator: ","))}}]}
            """)
        let configuration = try ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:])
        let app = configuration.apps[0]
        let service = SubscriberService(app: app, store: try SQLiteFactStore(path: configuration.storage.sqlitePath),
                                        verification: try VerificationService(app: app))
        let original = timeline["subscriber"]!["originalTransactionId"]!.stringValue!
        for step in timeline["steps"]!.arrayValue! {
            let name = step["notification"]!.stringValue!
            let jws = try String(contentsOf: real.appendingPathComponent(name), encoding: .utf8)
            let (applied, _) = try service.ingestNotification(jws)
            XCTAssertTrue(applied, name)
            let at = Date(timeIntervalSince1970: Double(step["signedDate"]!.int64Value!) / 1000)
            let subscriber = try XCTUnwrap(try service.subscriber(originalTransactionId: original, environment: "Sandbox", now: at), name)
            let expected = step["expected"]!
            let pro = subscriber["entitlements"]?["pro"]
            XCTAssertEqual(pro?["isActive"]?.boolValue, expected["entitled"]?.boolValue, name)
            XCTAssertEqual(pro?["productId"]?.stringValue, expected["currentProductId"]?.stringValue, name)
            XCTAssertEqual(pro?["expiresDateMs"]?.int64Value, expected["currentExpiresDate"]?.int64Value, name)
            let current = subscriber["subscriptions"]?[expected["currentProductId"]!.stringValue!]
            XCTAssertEqual(current?["transactionId"]?.stringValue, expected["currentTransactionId"]?.stringValue, name)
        }
        // Replaying the same notifications changes nothing: each is a duplicate.
        let first = try String(contentsOf: real.appendingPathComponent(timeline["steps"]!.arrayValue![0]["notification"]!.stringValue!),
                               encoding: .utf8)
        XCTAssertFalse(try service.ingestNotification(first).applied)
    }
}
