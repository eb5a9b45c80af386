import AppStoreAPI
import Application
import Crypto
import Entitlements
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// Apple's refund reviews end to end: usage posted by the app's server, a signed
/// `CONSUMPTION_REQUEST` per reason, the policy's rules and support's override, consent, Apple
/// down, a deadline passed, a restart, and Apple's decision — against the App Store stand-in,
/// which checks each Send Consumption Information v2 body as Apple does.
final class RefundReviewTests: XCTestCase {
    private var chain: TestChain!
    private var folder: URL!
    private var standIn: AppStoreStandIn!
    private var entitle: EntitleServer!
    private let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    private let hour: Int64 = 3_600_000
    private var now: Int64 { TestChain.milliseconds(chain.mintedAt) }

    override func setUpWithError() throws {
        chain = try TestChain()
        folder = try makeTemporaryDirectory()
        standIn = try AppStoreStandIn.withFreshKey(in: folder, chain: chain)
        entitle = try server()
    }

    override func tearDownWithError() throws {
        entitle = nil
        standIn = nil
        chain = nil
        try? FileManager.default.removeItem(at: folder)
    }

    private func server(consent: Bool = true) throws -> EntitleServer {
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "storage": {"sqlite": "facts.sqlite3"},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox", "LocalTesting"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8", "issuerId": "57246542-96fe-1a63-e053-0824d011072a"},
              "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "server_key_0123456789", "role": "server"},
                          {"key": "admin_key_0123456789", "role": "admin", "name": "Alex from support"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "appStoreServerAPI": {"sandboxURL": "\(standIn.baseURL)"},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]},
                           "gems": {"entitlements": [], "sampleContentProvided": true}},
              "refunds": {"customerConsent": \(consent), "retrySeconds": 0.2, "rules": [
                {"name": "undelivered", "when": {"delivered": false}, "prefer": "GRANT_FULL"},
                {"name": "mostly used", "when": {"consumedAtLeast": 50}, "prefer": "DECLINE"},
                {"name": "by mistake, early", "when": {"reason": "UNINTENDED_PURCHASE", "hoursSincePurchaseAtMost": 48},
                 "prefer": "GRANT_PRORATED"},
                {"name": "legal", "when": {"reason": ["LEGAL", "FULFILLMENT_ISSUE"]}, "prefer": "GRANT_FULL"},
                {"name": "subscriptions", "when": {"productType": "subscription", "store": "app_store"}, "prefer": "DECLINE"}]}}]}
            """)
        return try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: nil)
    }

    private func call(
        _ method: String, _ path: String, key: String? = "server_key_0123456789", _ body: JSONObject? = nil
    ) -> (Int, JSONValue) {
        var headers: [(name: String, value: String)] = [("content-type", "application/json")]
        if let key { headers.append(("authorization", "Bearer \(key)")) }
        let response = entitle.handle(
            HTTPRequest(method: method, target: path, headers: headers, body: body.map { JSONValue.object($0).serializedBytes } ?? []))
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    /// A purchase of `gems` (or of the subscription) bought an hour ago, posted by the app.
    private func purchase(_ id: String, type: String = "Consumable", product: String = "gems") throws -> String {
        var payload: JSONObject = [
            "transactionId": .string(id), "originalTransactionId": .string(id), "bundleId": "com.example.app",
            "productId": .string(product),
            "type": .string(type), "purchaseDate": .int(now - hour), "signedDate": .int(now), "environment": "Sandbox",
            "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token), "price": 4_990, "currency": "EUR",
        ]
        if type == "Auto-Renewable Subscription" {
            payload["subscriptionGroupIdentifier"] = "G1"
            payload["expiresDate"] = .int(now + 29 * 24 * hour)
        }
        let signed = try chain.sign(payload)
        XCTAssertEqual(call("POST", "/v1/transactions", key: "client_key_0123456789", ["signedTransaction": .string(signed)]).0, 200)
        return signed
    }

    private func consumptionRequest(_ uuid: String, transaction: String, reason: String, type: String = "CONSUMPTION_REQUEST") throws -> Int
    {
        let notification = try chain.sign([
            "notificationType": .string(type), "notificationUUID": .string(uuid), "version": "2.0", "signedDate": .int(now + 1),
            "data": .object([
                "bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(transaction),
                "consumptionRequestReason": .string(reason),
            ]),
        ])
        return call("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(notification)]).0
    }

    private func sent(_ count: Int, timeout: TimeInterval = 10) throws -> [(transactionId: String, body: JSONObject)] {
        try waitUntil(timeout: timeout, "Apple receives \(count) answers") { self.standIn.consumptionRequests.count >= count }
        return standIn.consumptionRequests
    }

    private func requests() -> [JSONValue] { call("GET", "/v1/refund-requests").1["refundRequests"]?.arrayValue ?? [] }

    private func events(_ type: String) -> [JSONValue] {
        (call("GET", "/v1/events").1["events"]?.arrayValue ?? []).filter { $0["type"]?.stringValue == type }
    }

    // MARK: - Tests

    /// The app's evidence and the first matching rule make the answer; Apple takes it (202); the
    /// request shows what was sent and by which rule; the events tell the team.
    func testARequestIsAnsweredFromTheAppsEvidenceByThePolicy() throws {
        let gems = try purchase("g-1")
        let usage = call(
            "POST", "/v1/subscribers/\(token)/usage",
            [
                "transactionId": "g-1", "consumedPercent": 30, "delivered": true,
                "events": .array([.object(["at": .int(now - hour / 2), "description": "used 3 of 10 gems"])]),
            ])
        XCTAssertEqual(usage.0, 201, "\(usage.1)")
        XCTAssertEqual(try consumptionRequest("c-1", transaction: gems, reason: "UNINTENDED_PURCHASE"), 200)
        let answer = try XCTUnwrap(try sent(1).first)
        XCTAssertEqual(answer.transactionId, "g-1")
        XCTAssertEqual(
            answer.body,
            [
                "customerConsented": true, "deliveryStatus": "DELIVERED", "sampleContentProvided": true, "consumptionPercentage": 30_000,
                "refundPreference": "GRANT_PRORATED",
            ])
        try waitUntil(timeout: 5, "stored as sent") { self.requests().first?["status"] == "SENT" }
        let request = try XCTUnwrap(requests().first)
        XCTAssertEqual(request["decidedBy"], "rule by mistake, early")
        XCTAssertEqual(request["reason"], "UNINTENDED_PURCHASE")
        XCTAssertEqual(request["deadlineMs"], .int(now + 1 + 12 * hour))
        XCTAssertEqual(request["answer"]?["refundPreference"], "GRANT_PRORATED")
        let requested = try XCTUnwrap(events("REFUND_REQUESTED").first)
        XCTAssertEqual(requested["refundRequest"]?["reason"], "UNINTENDED_PURCHASE")
        XCTAssertEqual(requested["appAccountToken"], .string(token))
        XCTAssertEqual(requested["transactionId"], "g-1")
        try waitUntil(timeout: 5, "the answer is evented") { !self.events("REFUND_REVIEW_SENT").isEmpty }
        let review = try XCTUnwrap(events("REFUND_REVIEW_SENT").first)
        XCTAssertEqual(review["refundRequest"]?["answer"]?["refundPreference"], "GRANT_PRORATED")
        XCTAssertEqual(review["refundRequest"]?["decidedBy"], "rule by mistake, early")
        XCTAssertEqual(review["appAccountToken"], .string(token))
        XCTAssertNotNil(review["subscriber"], "the customer as they are")
        let history = call("GET", "/v1/subscribers/\(token)/history", key: "admin_key_0123456789").1["history"]?.arrayValue ?? []
        XCTAssertEqual(history.first { $0["kind"] == "usage" }?["usage"]?["consumedPercent"], 30)

        XCTAssertEqual(try consumptionRequest("c-1", transaction: gems, reason: "UNINTENDED_PURCHASE"), 200, "Apple's retry")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(standIn.consumptionRequests.count, 1, "answered once")
        let metrics = entitle.handle(HTTPRequest(method: "GET", target: "/metrics", headers: [], body: []))
        let text = String(decoding: metrics.body, as: UTF8.self)
        XCTAssert(text.contains(#"entitle_refund_requests_total{app="app",store="app_store",reason="UNINTENDED_PURCHASE"} 1"#), text)
        XCTAssert(text.contains(#"entitle_refund_answers_total{app="app",store="app_store",result="sent"} 1"#), text)
    }

    /// Each reason Apple gives, through the rules: an undelivered purchase, one mostly used, a
    /// legal reason, a subscription (no percentage, ever), and one no rule takes (no preference).
    func testEachReasonGoesThroughTheRules() throws {
        let cases: [(id: String, reason: String, usage: JSONObject?, type: String, expected: JSONObject)] = [
            (
                "u-1", "FULFILLMENT_ISSUE", ["delivered": false, "reason": "SERVER_OUTAGE"], "Consumable",
                ["deliveryStatus": "UNDELIVERED_SERVER_OUTAGE", "consumptionPercentage": 0, "refundPreference": "GRANT_FULL"]
            ),
            (
                "u-2", "UNSATISFIED_WITH_PURCHASE", ["consumedPercent": 80], "Non-Consumable",
                ["consumptionPercentage": 80_000, "refundPreference": "DECLINE"]
            ),
            ("u-3", "LEGAL", nil, "Consumable", ["refundPreference": "GRANT_FULL"]),
            ("u-4", "OTHER", nil, "Auto-Renewable Subscription", ["refundPreference": "DECLINE"]),
            ("u-5", "OTHER", ["consumedPercent": 10], "Consumable", ["consumptionPercentage": 10_000]),
        ]
        for (index, item) in cases.enumerated() {
            let product = item.type == "Auto-Renewable Subscription" ? "pro.monthly" : "gems"
            let signed = try purchase(item.id, type: item.type, product: product)
            if var usage = item.usage {
                usage["transactionId"] = .string(item.id)
                XCTAssertEqual(call("POST", "/v1/subscribers/\(token)/usage", ["usage": .array([.object(usage)])]).0, 201)
            }
            XCTAssertEqual(try consumptionRequest("r-\(index)", transaction: signed, reason: item.reason), 200)
            let answer = try XCTUnwrap(try sent(index + 1).last)
            XCTAssertEqual(answer.transactionId, item.id)
            var expected: JSONObject = [
                "customerConsented": true, "deliveryStatus": "DELIVERED", "sampleContentProvided": .bool(product == "gems"),
            ]
            for member in item.expected.members { expected[member.key] = member.value }
            XCTAssertEqual(answer.body, expected, "\(item.reason) of \(item.id)")
        }
    }

    /// Support's override beats the rules, is recorded with who and why, and once removed the
    /// rules decide again; a client key may not set it.
    func testTheOverrideDecidesUntilRemoved() throws {
        let admin = "admin_key_0123456789"
        let (status, set) = call(
            "PUT", "/v1/subscribers/\(token)/refund-override", key: admin, ["override": "ALWAYS_DECLINE", "reason": "refund abuse"])
        XCTAssertEqual(status, 200, "\(set)")
        XCTAssertEqual(set["refundOverride"]?["setBy"], "Alex from support")
        XCTAssertEqual(
            call("PUT", "/v1/subscribers/\(token)/refund-override", key: "server_key_0123456789", ["override": "ALWAYS_GRANT"]).0, 403)
        XCTAssertEqual(call("PUT", "/v1/subscribers/\(token)/refund-override", key: admin, ["override": "MAYBE"]).0, 400)
        let first = try purchase("o-1")
        XCTAssertEqual(try consumptionRequest("o-req-1", transaction: first, reason: "LEGAL"), 200)
        XCTAssertEqual(try sent(1).last?.body["refundPreference"], "DECLINE", "the override, not the legal rule")
        try waitUntil(timeout: 5, "recorded") { self.requests().first?["decidedBy"] == "override" }

        XCTAssertEqual(call("DELETE", "/v1/subscribers/\(token)/refund-override", key: admin).0, 200)
        XCTAssertEqual(call("GET", "/v1/subscribers/\(token)/refund-override", key: admin).1["refundOverride"], .null)
        let second = try purchase("o-2")
        XCTAssertEqual(try consumptionRequest("o-req-2", transaction: second, reason: "LEGAL"), 200)
        XCTAssertEqual(try sent(2).last?.body["refundPreference"], "GRANT_FULL", "the rules again")
    }

    /// Without the customer's consent Apple is not answered (as Apple asks); the request says so.
    func testWithoutConsentAppleIsNotAnswered() throws {
        entitle = try server(consent: false)
        let gems = try purchase("n-1")
        XCTAssertEqual(try consumptionRequest("n-req", transaction: gems, reason: "OTHER"), 200)
        try waitUntil(timeout: 5, "recorded as not answered") { self.requests().first?["status"] == "NO_CONSENT" }
        XCTAssertEqual(standIn.consumptionRequests.count, 0)
        XCTAssertTrue(events("REFUND_REVIEW_SENT").isEmpty)
    }

    /// Apple down: the answer is tried again until Apple takes it, well before the deadline.
    func testAppleDownIsRetriedUntilAnswered() throws {
        standIn.script(
            AppStoreStandIn.error(503, 5000000, "An unknown error occurred."),
            AppStoreStandIn.error(503, 5000000, "An unknown error occurred."))
        let gems = try purchase("d-1")
        XCTAssertEqual(try consumptionRequest("d-req", transaction: gems, reason: "OTHER"), 200)
        XCTAssertEqual(try sent(1, timeout: 15).count, 1)
        try waitUntil(timeout: 5, "stored as sent") { self.requests().first?["status"] == "SENT" }
        XCTAssertEqual(requests().first?["attempts"], 3, "two refused by Apple's outage, the third taken")
    }

    /// A refusal (4xx) is recorded with Apple's error and not tried again.
    func testARefusalIsRecordedAndNotRetried() throws {
        standIn.script(AppStoreStandIn.error(400, 4000006, "Invalid transaction id."))
        let gems = try purchase("f-1")
        XCTAssertEqual(try consumptionRequest("f-req", transaction: gems, reason: "OTHER"), 200)
        try waitUntil(timeout: 5, "recorded as failed") { self.requests().first?["status"] == "FAILED" }
        XCTAssertEqual(requests().first?["error"]?.stringValue?.contains("Invalid transaction id") ?? false, true, "\(requests())")
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertEqual(standIn.consumptionRequests.count, 0)
    }

    /// A request whose 12 hours passed before it could be answered is recorded late, and nothing
    /// is sent (Apple would not weigh it). LocalTesting data is accepted unsigned, so the
    /// notification can be dated 13 hours ago.
    func testADeadlinePassedIsRecordedAndNotSent() throws {
        let key = try P256.Signing.PrivateKey()
        let old = now - 13 * hour
        let transaction = try JWSSigner.sign(
            header: ["alg": "ES256"],
            payload: [
                "transactionId": "l-1", "originalTransactionId": "l-1", "bundleId": "com.example.app", "productId": "gems",
                "type": "Consumable", "purchaseDate": .int(old - hour), "signedDate": .int(old), "environment": "LocalTesting",
                "appAccountToken": .string(token),
            ], with: key)
        let notification = try JWSSigner.sign(
            header: ["alg": "ES256"],
            payload: [
                "notificationType": "CONSUMPTION_REQUEST", "notificationUUID": "late-1", "version": "2.0", "signedDate": .int(old),
                "data": .object([
                    "bundleId": "com.example.app", "environment": "LocalTesting", "signedTransactionInfo": .string(transaction),
                    "consumptionRequestReason": "OTHER",
                ]),
            ], with: key)
        XCTAssertEqual(call("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(notification)]).0, 200)
        try waitUntil(timeout: 5, "recorded late") { self.requests().first?["status"] == "LATE" }
        XCTAssertEqual(standIn.consumptionRequests.count, 0)
    }

    /// A restart between the request and its answer loses nothing: the request is in the
    /// database with its deadline, and the next instance answers it.
    func testARestartLosesNothing() throws {
        standIn.hang()
        let gems = try purchase("s-1")
        XCTAssertEqual(try consumptionRequest("s-req", transaction: gems, reason: "OTHER"), 200)
        try waitUntil(timeout: 5, "the answer is on its way") { self.standIn.heldRequests >= 1 }
        entitle = nil
        standIn.release()
        entitle = try server()
        XCTAssertEqual(try sent(1, timeout: 15).first?.transactionId, "s-1")
        try waitUntil(timeout: 5, "stored as sent") { self.requests().first?["status"] == "SENT" }
    }

    /// Apple's decision: REFUND_DECLINED is its own event and the request's outcome; a REFUND
    /// (the transaction revoked) is the outcome REFUNDED.
    func testTheOutcomeIsRecordedAndEvented() throws {
        let gems = try purchase("x-1")
        XCTAssertEqual(try consumptionRequest("x-req", transaction: gems, reason: "OTHER"), 200)
        _ = try sent(1)
        XCTAssertEqual(try consumptionRequest("x-declined", transaction: gems, reason: "OTHER", type: "REFUND_DECLINED"), 200)
        try waitUntil(timeout: 5, "declined") { self.requests().first?["outcome"] == "DECLINED" }
        let declined = try XCTUnwrap(events("REFUND_DECLINED").first)
        XCTAssertEqual(declined["transactionId"], "x-1")
        XCTAssertEqual(declined["appAccountToken"], .string(token))

        let other = try purchase("x-2")
        XCTAssertEqual(try consumptionRequest("x-req-2", transaction: other, reason: "OTHER"), 200)
        _ = try sent(2)
        let refunded = try chain.sign([
            "transactionId": "x-2", "originalTransactionId": "x-2", "bundleId": "com.example.app", "productId": "gems",
            "type": "Consumable", "purchaseDate": .int(now - hour), "signedDate": .int(now + 5), "environment": "Sandbox",
            "appAccountToken": .string(token), "revocationDate": .int(now + 4), "revocationReason": 0,
        ])
        XCTAssertEqual(try consumptionRequest("x-refund", transaction: refunded, reason: "OTHER", type: "REFUND"), 200)
        try waitUntil(timeout: 5, "refunded") { self.requests().first { $0["transactionId"] == "x-2" }?["outcome"] == "REFUNDED" }
    }

    /// Usage is checked: it names its purchase, its numbers are in range, a reason goes with
    /// "delivered": false; a client key may not record it.
    func testUsageIsChecked() throws {
        let path = "/v1/subscribers/\(token)/usage"
        XCTAssertEqual(call("POST", path, ["consumedPercent": 10]).0, 400, "no purchase named")
        XCTAssertEqual(call("POST", path, ["transactionId": "1", "consumedPercent": 101]).0, 400)
        XCTAssertEqual(call("POST", path, ["transactionId": "1", "reason": "WRONG_ITEM"]).0, 400)
        XCTAssertEqual(call("POST", path, ["transactionId": "1", "delivered": false, "reason": "LATE"]).0, 400)
        XCTAssertEqual(call("POST", path, ["transactionId": "1", "events": .array([.object(["description": "x"])])]).0, 400)
        XCTAssertEqual(call("POST", path, key: "client_key_0123456789", ["transactionId": "1"]).0, 403)
        XCTAssertEqual(call("POST", "/v1/subscribers/not-a-token/usage", ["transactionId": "1"]).0, 400)
        XCTAssertEqual(call("POST", path, ["transactionId": "1", "delivered": false, "reason": "WRONG_ITEM"]).0, 201)
    }
}
