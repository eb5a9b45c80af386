import Application
import Foundation
import HTTP
import JSON
import Server
import Storage
import TestSupport
import XCTest

/// Events delivered to a real HTTPS receiver (`webhook-receiver.py`) that checks each signature
/// the way a developer's receiver would; forwarding of Apple's notifications; retries and dead
/// endpoints, with the retry timing shortened through `delivery`.
final class WebhookDeliveryTests: XCTestCase {
    private var chain: TestChain!
    private var folder: URL!
    private var receiver: WebhookReceiver!
    private var entitle: EntitleServer?
    private let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    private var base: Int64 { TestChain.milliseconds(chain.mintedAt) }
    private let day: Int64 = 86_400_000

    override func setUpWithError() throws {
        guard (try? runProcess(systemPython, ["-c", "import ssl"]))?.status == 0 else {
            throw XCTSkip("Debian's python3 is needed for the webhook receiver")
        }
        chain = try TestChain()
        folder = try makeTemporaryDirectory()
        receiver = try WebhookReceiver()
        try runProcess(
            "openssl",
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", folder.appendingPathComponent("key.p8").path])
    }

    override func tearDownWithError() throws {
        if let entitle {
            entitle.shutdown()
            entitle.waitUntilStopped()
        }
        entitle = nil
        receiver = nil
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// Writes the configuration and starts a server on it (deliveries run once it has started).
    @discardableResult
    private func start(webhooks: String, forward: String = "", delivery: String = "", logTo log: URL? = nil) throws -> EntitleServer {
        try writeFile(
            folder.appendingPathComponent("entitle.json"), configuration(webhooks: webhooks, forward: forward, delivery: delivery))
        var fd: Int32?
        if let log { fd = open(log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        let server = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: fd)
        server.start()
        entitle = server
        return server
    }

    private func configuration(webhooks: String, forward: String, delivery: String) -> String {
        """
        {"server": {"port": 0}, "delivery": {"caFile": "\(receiver.caFile)", "firstRetrySeconds": 0.2, "maxRetrySeconds": 0.5\(delivery)},
         "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
          "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
          "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "server_key_0123456789", "role": "server"}],
          "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
          "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
          "webhooks": [\(webhooks)]\(forward)}]}
        """
    }

    private func hook(_ path: String, _ extra: String = "") -> String {
        #"{"url": "\#(receiver.url(path))", "secret": "\#(receiver.secret)"\#(extra)}"#
    }

    private func request(_ method: String, _ path: String, _ body: [UInt8] = [], key: String? = "server_key_0123456789") -> (Int, JSONValue)
    {
        var headers: [(name: String, value: String)] = [("content-type", "application/json")]
        if let key { headers.append(("authorization", "Bearer \(key)")) }
        let response = entitle!.handle(HTTPRequest(method: method, target: path, headers: headers, body: body))
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    private func transaction(_ id: String, original: String? = nil, trial: Bool = false, signed: Int64? = nil) throws -> String {
        var payload: JSONObject = [
            "transactionId": .string(id), "originalTransactionId": .string(original ?? id), "bundleId": "com.example.app",
            "productId": "pro.monthly", "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription",
            "purchaseDate": .int(base - day), "expiresDate": .int(base + 29 * day), "environment": "Sandbox",
            "signedDate": .int(signed ?? base), "price": 9990, "currency": "EUR", "appAccountToken": .string(token),
        ]
        if trial {
            payload["offerType"] = 1
            payload["offerDiscountType"] = "FREE_TRIAL"
        }
        return try chain.sign(payload)
    }

    private func postTransaction(_ jws: String) -> Int {
        request(
            "POST", "/v1/transactions", JSONValue.object(["signedTransaction": .string(jws)]).serializedBytes, key: "client_key_0123456789"
        ).0
    }

    private func notification(
        _ uuid: String, type: String, subtype: String?, transaction: String, signer: TestChain? = nil
    ) throws -> String {
        var payload: JSONObject = [
            "notificationType": .string(type), "notificationUUID": .string(uuid), "version": "2.0", "signedDate": .int(base + 5),
            "data": .object(["bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(transaction)]),
        ]
        if let subtype { payload["subtype"] = .string(subtype) }
        return try (signer ?? chain).sign(payload)
    }

    // MARK: - Tests

    func testEventsArriveSignedWithTheSubscriberAfterTheFacts() throws {
        try start(webhooks: hook("/ok"))
        XCTAssertEqual(postTransaction(try transaction("1000", trial: true)), 200)
        let received = receiver.wait(for: "/ok") { $0.count >= 2 }
        XCTAssertEqual(received.count, 2)
        XCTAssertEqual(received.map { $0.json["type"]?.stringValue }, ["INITIAL_PURCHASE", "TRIAL_STARTED"])
        for delivery in received {
            XCTAssertTrue(delivery.signatureValid, "the receiver verified the Standard Webhooks signature")
            XCTAssertEqual(delivery.id, delivery.json["id"]?.stringValue, "webhook-id is the event id")
            let age = abs(Double(delivery.timestamp ?? 0) - Date().timeIntervalSince1970)
            XCTAssertLessThan(age, 60, "webhook-timestamp is the time of the attempt")
        }
        let purchase = received[0].json
        XCTAssertEqual(purchase["sequence"]?.int64Value, 1)
        XCTAssertEqual(purchase["appId"]?.stringValue, "app")
        XCTAssertEqual(purchase["environment"]?.stringValue, "Sandbox")
        XCTAssertEqual(purchase["source"]?.stringValue, "clientPost")
        XCTAssertEqual(purchase["appAccountToken"]?.stringValue, token)
        XCTAssertEqual(purchase["productId"]?.stringValue, "pro.monthly")
        XCTAssertEqual(purchase["entitlements"]?.arrayValue, ["pro"])
        XCTAssertEqual(purchase["periodType"]?.stringValue, "TRIAL")
        XCTAssertEqual(purchase["price"]?.doubleValue, 9.99)
        XCTAssertEqual(purchase["currency"]?.stringValue, "EUR")
        XCTAssertEqual(purchase["expiresDateMs"]?.int64Value, base + 29 * day)
        XCTAssertEqual(purchase["subscriber"]?["entitlements"]?["pro"]?["isActive"]?.boolValue, true, "the state after the facts")
        let (_, current) = request("GET", "/v1/subscribers/\(token)")
        XCTAssertEqual(purchase["subscriber"]?["entitlements"], current["subscriber"]?["entitlements"], "the object GET answers")

        let (status, feed) = request("GET", "/v1/events?after=0&limit=10")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(feed["events"]?.arrayValue?.map { $0.serializedString }, received.map(\.body), "the feed has the same bodies")
        XCTAssertEqual(feed["nextAfter"]?.int64Value, 2)
        XCTAssertEqual(request("GET", "/v1/events?after=1").1["events"]?.arrayValue?.count, 1)
        XCTAssertEqual(request("GET", "/v1/events/\(received[1].id!)").1["type"]?.stringValue, "TRIAL_STARTED")
        XCTAssertEqual(request("GET", "/v1/events/unknown").0, 404)
        XCTAssertEqual(request("GET", "/v1/events", key: "client_key_0123456789").0, 403, "a client key reads no feed")
        XCTAssertEqual(request("GET", "/v1/events?after=-1").0, 400)
        let delivered = receiver.wait { _ in
            (self.request("GET", "/v1/webhooks/deliveries?status=delivered").1["deliveries"]?.arrayValue?.count ?? 0) == 2
        }
        XCTAssertEqual(delivered.count, 2)
        XCTAssertEqual(entitle?.metrics.total("entitle_events_total", matching: ["type": "INITIAL_PURCHASE"]), 1)
    }

    func testADuplicateNotificationCausesNoEventAndForwardingIsByteIdentical() throws {
        try start(webhooks: hook("/ok"), forward: #", "forwardNotifications": {"Sandbox": "\#(receiver.url("/forward"))"}"#)
        let signed = try notification(
            "11111111-1111-4111-8111-111111111111", type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: try transaction("1000"))
        // Whitespace and member order as a sender might have them: forwarding keeps every byte.
        let raw = Array("{ \"signedPayload\" :\n  \"\(signed)\" }\n".utf8)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", raw, key: nil).0, 200)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", raw, key: nil).1["status"]?.stringValue, "duplicate")
        let forged = try notification(
            "22222222-2222-4222-8222-222222222222", type: "SUBSCRIBED", subtype: "INITIAL_BUY",
            transaction: try transaction("2000"), signer: try TestChain())
        let forgedBody = JSONValue.object(["signedPayload": .string(forged)]).serializedBytes
        XCTAssertNotEqual(request("POST", "/v1/notifications/apple", forgedBody, key: nil).0, 200)
        // The client posts the transaction the notification carried: nothing new happened.
        XCTAssertEqual(postTransaction(try transaction("1000")), 200)

        let forwarded = receiver.wait(for: "/forward") { $0.count >= 1 }
        XCTAssertEqual(forwarded.count, 1)
        XCTAssertEqual(forwarded.first?.bodyBytes, raw, "byte for byte")
        receiver.wait(for: "/ok") { $0.count >= 1 }
        // Give a wrongly made second event time to arrive before counting.
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(receiver.deliveries("/ok").map { $0.json["type"]?.stringValue }, ["INITIAL_PURCHASE"])
        XCTAssertEqual(receiver.deliveries("/forward").count, 1, "the duplicate and the forgery were not forwarded")
        let event = receiver.deliveries("/ok")[0].json
        XCTAssertEqual(event["notificationUUID"]?.stringValue, "11111111-1111-4111-8111-111111111111")
        XCTAssertEqual(event["source"]?.stringValue, "notification")
        XCTAssertEqual(event["occurredAtMs"]?.int64Value, base + 5)
        XCTAssertEqual(request("GET", "/v1/events").1["events"]?.arrayValue?.count, 1)
    }

    func testAReceiverAnswering500GetsTheSameEventAgain() throws {
        try start(webhooks: hook("/flaky"))
        XCTAssertEqual(postTransaction(try transaction("1000")), 200)
        let received = receiver.wait(for: "/flaky") { $0.count >= 2 }
        XCTAssertEqual(received.count, 2)
        XCTAssertEqual(received[0].id, received[1].id, "the same webhook-id")
        XCTAssertEqual(received[0].body, received[1].body, "the same body")
        XCTAssertTrue(received.allSatisfy(\.signatureValid))
        let deliveries = receiver.wait { _ in
            self.request("GET", "/v1/webhooks/deliveries?status=delivered").1["deliveries"]?.arrayValue?.first?["attempts"]?.int64Value == 2
        }
        _ = deliveries
        let delivery = request("GET", "/v1/webhooks/deliveries?status=delivered").1["deliveries"]?.arrayValue?.first
        XCTAssertEqual(delivery?["attempts"]?.int64Value, 2)
        XCTAssertEqual(delivery?["lastStatus"]?.int64Value, 200)
        XCTAssertEqual(delivery?["eventType"]?.stringValue, "INITIAL_PURCHASE")
        XCTAssertEqual(entitle?.metrics.total("entitle_webhook_deliveries_total", matching: ["result": "retry"]), 1)
    }

    /// A 2xx is a delivery whatever follows it: a receiver that answered 200 with 50 MB was
    /// counted as failed and retried for the whole window. The body is read up to a small limit.
    func testA2xxWithAHugeBodyIsDeliveredOnce() throws {
        try start(webhooks: hook("/large"))
        XCTAssertEqual(postTransaction(try transaction("1000")), 200)
        receiver.wait { _ in
            self.request("GET", "/v1/webhooks/deliveries?status=delivered").1["deliveries"]?.arrayValue?.count == 1
        }
        let delivery = request("GET", "/v1/webhooks/deliveries?status=delivered").1["deliveries"]?.arrayValue?.first
        XCTAssertEqual(delivery?["attempts"]?.int64Value, 1)
        XCTAssertEqual(delivery?["lastStatus"]?.int64Value, 200)
        XCTAssertEqual(receiver.deliveries("/large").count, 1, "not retried")
    }

    func testADeadEndpointFailsAfterTheWindowWithoutDelayingIngestionOrTheOtherEndpoint() throws {
        let log = folder.appendingPathComponent("log.jsonl")
        try start(
            webhooks: hook("/hang") + ", " + hook("/ok"), delivery: #", "timeoutSeconds": 1, "retryWindowSeconds": 2"#, logTo: log)
        for index in 0..<5 {
            XCTAssertEqual(postTransaction(try transaction("\(1000 + index)")), 200, "ingestion never waits for an endpoint")
        }
        let healthy = receiver.wait(for: "/ok") { $0.count >= 5 }
        XCTAssertEqual(healthy.count, 5)
        let failedWhenHealthyWasDone = request("GET", "/v1/webhooks/deliveries?status=failed").1["deliveries"]?.arrayValue?.count ?? 0
        XCTAssertLessThan(failedWhenHealthyWasDone, 5, "the healthy endpoint was served while the dead one was still being tried")

        receiver.wait(timeout: 30) { _ in
            (self.request("GET", "/v1/webhooks/deliveries?status=failed").1["deliveries"]?.arrayValue?.count ?? 0) == 5
        }
        let failed = request("GET", "/v1/webhooks/deliveries?status=failed").1["deliveries"]?.arrayValue ?? []
        XCTAssertEqual(failed.count, 5, "each delivery to the endpoint that never answers is dead after the window")
        XCTAssertEqual(failed.first?["endpoint"]?.stringValue, receiver.url("/hang"))
        XCTAssertNotNil(failed.first?["lastError"]?.stringValue)
        XCTAssertEqual(request("GET", "/v1/webhooks/deliveries?status=bogus").0, 400)
        // The backlog gauges (measured every 5 s) and the attempts by result.
        receiver.wait(timeout: 12) { _ in
            self.entitle?.metrics.render().contains(#"entitle_webhook_deliveries_failed{app="app"} 5"#) ?? false
        }
        let metrics = entitle?.metrics.render() ?? ""
        XCTAssertTrue(metrics.contains(#"entitle_webhook_deliveries_failed{app="app"} 5"#), metrics)
        XCTAssertTrue(metrics.contains(#"entitle_webhook_deliveries_pending{app="app"} 0"#))
        XCTAssertEqual(entitle?.metrics.total("entitle_webhook_deliveries_total", matching: ["result": "delivered"]), 5)
        // Each delivery ends failed exactly once (the list above). How many attempts that took is
        // not fixed: delivery is at least once, and on a loaded machine an attempt that hangs past
        // its lease is claimed and made again, so the count of failed attempts is at least 5.
        XCTAssertGreaterThanOrEqual(entitle?.metrics.total("entitle_webhook_deliveries_total", matching: ["result": "failed"]) ?? 0, 5)
        XCTAssertFalse(metrics.contains(receiver.secret), "no secret in metrics")

        // A retry by hand makes it pending again.
        let id = try XCTUnwrap(failed.first?["id"]?.stringValue)
        let (status, retried) = request("POST", "/v1/webhooks/deliveries/\(id)/retry")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(retried["delivery"]?["status"]?.stringValue, "pending")
        XCTAssertEqual(request("POST", "/v1/webhooks/deliveries/unknown/retry").0, 404)

        entitle?.shutdown()
        entitle?.waitUntilStopped()
        entitle = nil
        let lines = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        XCTAssertTrue(lines.contains("delivery failed for good"), "each dead delivery is logged")
        XCTAssertTrue(lines.contains(#""endpoint":"\#(receiver.url("/hang"))""#))
        XCTAssertFalse(lines.contains(String(receiver.secret.dropFirst(6))), "the secret never appears in logs")
    }

    func testWebhookTestReachesEveryEndpointWhateverItsEventFilter() throws {
        try start(webhooks: hook("/ok", #", "events": ["RENEWAL"]"#))
        XCTAssertEqual(postTransaction(try transaction("1000")), 200)
        let (status, answer) = request("POST", "/v1/webhooks/test")
        XCTAssertEqual(status, 200)
        let id = try XCTUnwrap(answer["eventId"]?.stringValue)
        let received = receiver.wait(for: "/ok") { $0.count >= 1 }
        XCTAssertEqual(received.map(\.id), [id])
        XCTAssertEqual(received.first?.json["type"]?.stringValue, "TEST")
        XCTAssertTrue(received.first?.signatureValid ?? false)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(receiver.deliveries("/ok").count, 1, "INITIAL_PURCHASE is not among the endpoint's events")
        XCTAssertEqual(request("GET", "/v1/events").1["events"]?.arrayValue?.count, 2, "the feed has every event")
    }
}
