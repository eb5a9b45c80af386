import AppStore
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

/// Apple's realtime Retention Messaging requests end to end: signed by the test chain, answered by
/// the app's rules from the customer's stored facts (a message, another plan, a signed offer the
/// customer may have), the same answer to a retried request, the cooldown, forged and
/// wrong-environment requests refused, and saves attributed from later facts.
final class RetentionTests: XCTestCase {
    private var chain: TestChain!
    private var folder: URL!
    private var entitle: EntitleServer!
    private var standIn: AppStoreStandIn!
    private let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    private let day: Int64 = 86_400_000
    private var now: Int64 { TestChain.milliseconds(chain.mintedAt) }

    override func setUpWithError() throws {
        chain = try TestChain()
        folder = try makeTemporaryDirectory()
        standIn = try AppStoreStandIn.withFreshKey(in: folder, chain: chain)
        entitle = try server(environments: #"["Sandbox"]"#)
    }

    override func tearDownWithError() throws {
        entitle?.shutdown()
        entitle = nil
        standIn = nil
        chain = nil
        try? FileManager.default.removeItem(at: folder)
    }

    private func server(environments: String, issuer: Bool = true) throws -> EntitleServer {
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "storage": {"sqlite": "facts.sqlite3"},
             "apps": [{"id": "app", "bundleId": "com.example.app", "appAppleId": 1234, "environments": \(environments),
              "signingKey": {"keyId": "KEY1", \(issuer ? #""issuerId": "57246542-96fe-1a63-e053-0824d011072a", "# : "")"privateKeyFile": "key.p8"},
              "apiKeys": [{"key": "server_key_0123456789", "role": "server"}, {"key": "client_key_0123456789", "role": "client"},
                          {"key": "admin_key_0123456789", "role": "admin"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "appStoreServerAPI": {"sandboxURL": "\(standIn.baseURL)"},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]},
                           "pro.annual": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
              "offers": {"comeback": {"productId": "pro.monthly", "offerIdentifier": "pro_comeback", "eligibility": "current"},
                         "lapsedOnly": {"productId": "pro.monthly", "offerIdentifier": "pro_lapsed", "eligibility": "lapsed"}},
              "retention": {"defaultMessage": "msg-default", "offerCooldownDays": 30, "saveWindowDays": 7, "rules": [
                {"name": "trial", "when": {"inTrial": true}, "answer": {"message": "msg-trial"}},
                {"name": "lapsed offer", "when": {"locale": "fr"},
                 "answer": {"promotionalOffer": {"messageIdentifier": "msg-lapsed", "offerId": "lapsedOnly"}}},
                {"name": "loyal", "when": {"monthsSubscribedAtLeast": 6},
                 "answer": {"promotionalOffer": {"messageIdentifier": "msg-offer", "offerId": "comeback"}}},
                {"name": "annual", "when": {"productId": "pro.monthly", "billingIssue": false},
                 "answer": {"alternateProduct": {"messageIdentifier": "msg-annual", "productId": "pro.annual"}}}]}}]}
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

    /// A subscription of `original` that began `monthsAgo` months ago, its current period a
    /// trial or not, posted by the app.
    private func subscribe(_ original: String, monthsAgo: Int64, trial: Bool = false) throws {
        var payload: JSONObject = [
            "transactionId": .string(original + "-now"), "originalTransactionId": .string(original), "bundleId": "com.example.app",
            "productId": "pro.monthly", "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription",
            "purchaseDate": .int(now - 2 * day), "originalPurchaseDate": .int(now - monthsAgo * 31 * day),
            "expiresDate": .int(now + 28 * day), "signedDate": .int(now), "environment": "Sandbox", "inAppOwnershipType": "PURCHASED",
            "appAccountToken": .string(token),
        ]
        if trial {
            payload["offerType"] = 1
            payload["offerDiscountType"] = "FREE_TRIAL"
        }
        XCTAssertEqual(
            call("POST", "/v1/transactions", key: "client_key_0123456789", ["signedTransaction": .string(try chain.sign(payload))]).0, 200)
    }

    private func ask(
        _ original: String, id: String = UUID().uuidString, locale: String = "en-US", environment: String = "Sandbox",
        by signer: TestChain? = nil
    ) throws -> (Int, JSONValue) {
        let request = try (signer ?? chain).sign([
            "originalTransactionId": .string(original), "appAppleId": 1234, "productId": "pro.monthly", "userLocale": .string(locale),
            "requestIdentifier": .string(id), "signedDate": .int(now + 1), "environment": .string(environment),
        ])
        return call("POST", "/v1/retention/apple", key: nil, ["signedPayload": .string(request)])
    }

    private func events(_ type: String) -> [JSONValue] {
        (call("GET", "/v1/events?limit=1000").1["events"]?.arrayValue ?? []).filter { $0["type"]?.stringValue == type }
    }

    // MARK: - Tests

    func testATrialistGetsTheirMessageAndTheAnswerIsEvented() throws {
        try subscribe("1000", monthsAgo: 0, trial: true)
        let (status, answer) = try ask("1000")
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer, .object(["message": .object(["messageIdentifier": "msg-trial"])]))
        try waitUntil(timeout: 5, "the answer recorded") { !self.events("RETENTION_OFFERED").isEmpty }
        let offered = try XCTUnwrap(events("RETENTION_OFFERED").first)
        XCTAssertEqual(offered["retention"]?["rule"], "trial")
        XCTAssertEqual(offered["retention"]?["kind"], "message")
        XCTAssertEqual(offered["appAccountToken"], .string(token))
        XCTAssertEqual(offered["originalTransactionId"], "1000")
    }

    /// A loyal customer gets the catalog offer, signed for them (the JWS verifies with the app's
    /// key and names the offer); the same request again gets the very same answer; a new one
    /// within the cooldown gets the next rule; an offer the customer may not have is skipped.
    func testALoyalCustomerGetsASignedOfferOncePerCooldown() throws {
        try subscribe("2000", monthsAgo: 7)
        let id = UUID().uuidString
        let (status, answer) = try ask("2000", id: id, locale: "fr-FR")
        XCTAssertEqual(status, 200, "\(answer)")
        let offer = try XCTUnwrap(answer["promotionalOffer"])
        XCTAssertEqual(offer["messageIdentifier"], "msg-offer", "the lapsed-only offer is skipped: the customer is current")
        let jws = try XCTUnwrap(offer["promotionalOfferSignatureV2"]?.stringValue)
        let parsed = try CompactJWS(jws)
        let pem = try String(contentsOf: folder.appendingPathComponent("key.p8"), encoding: .utf8)
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        let publicKey = try key.publicKey
        XCTAssertTrue(parsed.isValidES256Signature(publicKey: publicKey), "signed with the app's In-App Purchase key")
        XCTAssertEqual(parsed.payload["offerIdentifier"], "pro_comeback")
        XCTAssertEqual(parsed.payload["productId"], "pro.monthly")
        XCTAssertEqual(parsed.payload["transactionId"], "2000")

        // The record is written while the answer is sent; Apple retries seconds later.
        try waitUntil(timeout: 5, "the answer recorded") { !self.events("RETENTION_OFFERED").isEmpty }
        XCTAssertEqual(try ask("2000", id: id, locale: "fr-FR").1, answer, "Apple's retry gets the same answer")
        let (_, next) = try ask("2000")
        XCTAssertEqual(
            next["alternateProduct"], .object(["messageIdentifier": "msg-annual", "productId": "pro.annual"]),
            "no second offer within 30 days")
        try waitUntil(timeout: 5, "the second answer recorded") { self.events("RETENTION_OFFERED").count >= 2 }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(events("RETENTION_OFFERED").count, 2, "the retry is not a second answer")
    }

    /// Twelve requests for one subscription at once each read "no offer yet" and answered 5 to 7
    /// offers; eight copies of one request identifier got three different answers. The writer now
    /// decides under the subscription's lock: one offer, and one answer per request identifier.
    func testConcurrentRequestsGetOneOfferAndOneAnswerPerRequest() throws {
        try subscribe("2000", monthsAgo: 7)
        let answers = LockedList<JSONValue>()
        // The server is safe to call from many threads; the test case only hands it the requests.
        nonisolated(unsafe) let test = self
        DispatchQueue.concurrentPerform(iterations: 12) { _ in
            if let (status, answer) = try? test.ask("2000"), status == 200 { answers.append(answer) }
        }
        XCTAssertEqual(answers.all.count, 12)
        XCTAssertEqual(answers.all.filter { $0["promotionalOffer"] != nil }.count, 1, "\(answers.all)")
        XCTAssertEqual(answers.all.filter { $0["alternateProduct"] != nil }.count, 11, "the next rule answers the others")
        try waitUntil(timeout: 5, "twelve answers recorded") { self.events("RETENTION_OFFERED").count == 12 }

        let id = UUID().uuidString
        let copies = LockedList<JSONValue>()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if let (status, answer) = try? test.ask("2000", id: id), status == 200 { copies.append(answer) }
        }
        XCTAssertEqual(copies.all.count, 8)
        XCTAssertEqual(Set(copies.all.map(\.serializedString)).count, 1, "every copy gets the answer written first")
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(events("RETENTION_OFFERED").count, 13, "one record for the eight copies")
    }

    /// The messages managed from the command line through the Retention Messaging API (the
    /// stand-in checks the bearer JWT and keeps each message's review state): limits checked before
    /// anything is sent, check-config warning of rules that answer with unapproved messages, images,
    /// default messages, the realtime URL, and Apple's performance test calling Entitle for real.
    func testTheMessagesAreManagedFromTheCommandLine() throws {
        let config = folder.appendingPathComponent("entitle.json").path
        func retention(_ arguments: [String]) throws -> (Int32, JSONValue, String) {
            let run = try runProcess(
                entitleExecutable.path, ["retention"] + arguments + ["--config", config, "--app", "app", "--environment", "Sandbox"])
            return (run.status, (try? JSONParser.parse(run.stdout)) ?? .null, run.stderr)
        }
        let uploaded = try retention([
            "messages", "upload", "--id", "msg-offer", "--header", "Stay a little longer", "--body", "Half price for 3 months",
        ])
        XCTAssertEqual(uploaded.0, 0, uploaded.2)
        XCTAssertEqual(standIn.retentionMessages["msg-offer"]?.state, "PENDING")
        let long = try retention(["messages", "upload", "--id", "msg-long", "--header", String(repeating: "x", count: 67), "--body", "b"])
        XCTAssertEqual(long.0, 2, "refused before sending")
        XCTAssert(long.2.contains("header is 67 characters"), long.2)
        XCTAssertNil(standIn.retentionMessages["msg-long"])
        standIn.review(message: "msg-offer", "APPROVED")
        let listed = try retention(["messages", "list"])
        XCTAssertEqual(listed.1["messageIdentifiers"]?.arrayValue?.first?["messageState"], "APPROVED")
        let check = try runProcess(entitleExecutable.path, ["check-config", "--config", config])
        XCTAssert(check.stdout.contains("msg-annual (not uploaded)"), check.stdout)
        XCTAssertFalse(check.stdout.contains("msg-offer ("), "approved: no warning")

        let png = folder.appendingPathComponent("icon.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 32)).write(to: png)
        XCTAssertEqual(try retention(["images", "upload", "--id", "icon", "--file", png.path, "--size", "BULLET_POINT"]).0, 0)
        XCTAssertEqual(standIn.retentionImages["icon"]?.size, "BULLET_POINT")
        XCTAssertEqual(try retention(["images", "list"]).1["imageIdentifiers"]?.arrayValue?.count, 1)
        XCTAssertEqual(try retention(["default", "set", "--product", "pro.monthly", "--locale", "en-US", "--message", "msg-offer"]).0, 0)
        XCTAssertEqual(
            try retention(["default", "get", "--product", "pro.monthly", "--locale", "en-US"]).1["messageIdentifier"], "msg-offer")
        XCTAssertEqual(try retention(["realtime-url", "set", "--url", "http://plain.example.com/x"]).0, 2, "Apple calls https only")

        // Apple's performance test against a running Entitle (loopback http: the stand-in's Apple).
        entitle.start()
        try subscribe("2000", monthsAgo: 7)
        let client = try XCTUnwrap(try entitle.application.services(appId: "app").requireSync().clients[.sandbox])
        let realtimeURL = "http://127.0.0.1:\(entitle.port)/v1/retention/apple"
        try blockingAwait { try await client.setRealtimeURL(realtimeURL) }
        let test = try retention(["performance-test", "--transaction-id", "2000"])
        XCTAssertEqual(test.0, 0, test.2)
        XCTAssertEqual(test.1["result"], "PASS", "\(test.1)")
        XCTAssertNotNil(test.1["responseTimes"]?["p99"]?.int64Value)
        XCTAssertEqual(test.1["successRate"], 100)

        // The same through the admin API.
        let admin = "admin_key_0123456789"
        XCTAssertEqual(call("GET", "/v1/retention/messages", key: admin).1["messageIdentifiers"]?.arrayValue?.count, 1)
        XCTAssertEqual(call("GET", "/v1/retention/messages", key: "server_key_0123456789").0, 403)
        let tooLong = call(
            "PUT", "/v1/retention/messages/msg-2", key: admin, ["header": "h", "body": .string(String(repeating: "b", count: 145))])
        XCTAssertEqual(tooLong.0, 400, "\(tooLong.1)")
        XCTAssertEqual(call("PUT", "/v1/retention/messages/msg-2", key: admin, ["header": "Stay", "body": "One more month free"]).0, 200)
        XCTAssertEqual(standIn.retentionMessages["msg-2"]?.state, "PENDING")
        XCTAssertEqual(call("DELETE", "/v1/retention/messages/msg-2", key: admin).0, 200)
        XCTAssertNil(standIn.retentionMessages["msg-2"])
        XCTAssertEqual(call("PUT", "/v1/retention/defaults/pro.annual/fr-FR", key: admin, ["messageIdentifier": "msg-offer"]).0, 200)
        XCTAssertEqual(call("GET", "/v1/retention/defaults/pro.annual/fr-FR", key: admin).1["messageIdentifier"], "msg-offer")
        XCTAssertEqual(call("PUT", "/v1/retention/realtime-url", key: admin, ["realtimeURL": "http://plain.example.com"]).0, 400)
        let started = call("POST", "/v1/retention/performance-test", key: admin, ["originalTransactionId": "2000"])
        let requestId = try XCTUnwrap(started.1["requestId"]?.stringValue, "\(started.1)")
        try waitUntil(timeout: 20, "Apple's result") {
            self.call("GET", "/v1/retention/performance-test/\(requestId)", key: admin).1["result"] != "PENDING"
        }
        XCTAssertEqual(call("GET", "/v1/retention/performance-test/\(requestId)", key: admin).1["result"], "PASS")
    }

    /// A key without issuer ID signs the V1 way: Apple gets `promotionalOfferSignatureV1`, whose
    /// signature verifies over Apple's joined fields with the app's key.
    func testWithoutAnIssuerTheOfferIsSignedTheV1Way() throws {
        entitle = try server(environments: #"["Sandbox"]"#, issuer: false)
        try subscribe("6000", monthsAgo: 7)
        let (status, answer) = try ask("6000")
        XCTAssertEqual(status, 200, "\(answer)")
        let v1 = try XCTUnwrap(answer["promotionalOffer"]?["promotionalOfferSignatureV1"])
        XCTAssertNil(answer["promotionalOffer"]?["promotionalOfferSignatureV2"])
        XCTAssertEqual(v1["keyId"], "KEY1")
        XCTAssertEqual(v1["offerIdentifier"], "pro_comeback")
        XCTAssertEqual(v1["productId"], "pro.monthly")
        XCTAssertEqual(v1["appAccountToken"]?.stringValue, token)
        let fields = [
            "com.example.app", "KEY1", "pro.monthly", "pro_comeback", token, v1["nonce"]?.stringValue ?? "",
            String(v1["timestamp"]?.int64Value ?? 0),
        ]
        let pem = try String(contentsOf: folder.appendingPathComponent("key.p8"), encoding: .utf8)
        let publicKey = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
        let signature = try ECDSASignature(derRepresentation: try Base64.decode(v1["encodedSignature"]?.stringValue ?? ""))
        XCTAssertTrue(publicKey.isValidSignature(signature, for: Array(fields.joined(separator: "\u{2063}").utf8)))
    }

    /// A customer Entitle knows nothing of gets the default message (no rule can be judged).
    func testAnUnknownCustomerGetsTheDefaultMessage() throws {
        let (status, answer) = try ask("9999")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(answer, .object(["message": .object(["messageIdentifier": "msg-default"])]))
    }

    /// A request signed by another chain is refused without an offer, and nothing is recorded; a
    /// Sandbox request to a Production-only app is refused.
    func testForgedAndWrongEnvironmentRequestsAreRefused() throws {
        try subscribe("3000", monthsAgo: 7)
        let forger = try TestChain()
        let (status, answer) = try ask("3000", by: forger)
        XCTAssertTrue((400..<500).contains(status), "\(status) \(answer)")
        XCTAssertNil(answer["promotionalOffer"])
        XCTAssertTrue(events("RETENTION_OFFERED").isEmpty)
        entitle = try server(environments: #"["Production"]"#)
        let (refused, _) = try ask("3000")
        XCTAssertTrue((400..<500).contains(refused), "a Sandbox request to a Production-only app: \(refused)")
    }

    /// The offer answered, then redeemed within the window: RETENTION_SAVED by the rule that
    /// answered; another plan taken through the renewal info saves too.
    func testSavesAreAttributedFromLaterFacts() throws {
        // After the answers (which are dated by the clock): the saves happen later.
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        try subscribe("4000", monthsAgo: 7)
        XCTAssertNotNil(try ask("4000").1["promotionalOffer"])
        try waitUntil(timeout: 5, "the answer recorded") { self.events("RETENTION_OFFERED").count == 1 }
        let redeemed = try chain.sign([
            "transactionId": "4000-offer", "originalTransactionId": "4000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription", "purchaseDate": .int(later),
            "expiresDate": .int(now + 60 * day), "signedDate": .int(later + 1), "environment": "Sandbox", "appAccountToken": .string(token),
            "offerType": 2, "offerIdentifier": "pro_comeback", "offerDiscountType": "PAY_AS_YOU_GO",
        ])
        XCTAssertEqual(call("POST", "/v1/transactions", key: "client_key_0123456789", ["signedTransaction": .string(redeemed)]).0, 200)
        let saved = try XCTUnwrap(events("RETENTION_SAVED").first)
        XCTAssertEqual(saved["retention"]?["savedBy"], "offerRedeemed")
        XCTAssertEqual(saved["retention"]?["rule"], "loyal")
        XCTAssertEqual(saved["occurredAtMs"], .int(later))

        try subscribe("5000", monthsAgo: 1)
        XCTAssertNotNil(try ask("5000").1["alternateProduct"])
        try waitUntil(timeout: 5, "the answer recorded") { self.events("RETENTION_OFFERED").count == 2 }
        let transaction = try chain.sign([
            "transactionId": "5000-now", "originalTransactionId": "5000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription", "purchaseDate": .int(now - 2 * day),
            "expiresDate": .int(now + 28 * day), "signedDate": .int(later + 4), "environment": "Sandbox", "appAccountToken": .string(token),
        ])
        let switched = try chain.sign([
            "originalTransactionId": "5000", "productId": "pro.monthly", "autoRenewProductId": "pro.annual", "autoRenewStatus": 1,
            "environment": "Sandbox", "signedDate": .int(later + 4),
        ])
        XCTAssertEqual(
            call(
                "POST", "/v1/transactions", key: "client_key_0123456789",
                ["signedTransaction": .string(transaction), "signedRenewalInfo": .string(switched)]
            ).0, 200)
        let second = try XCTUnwrap(events("RETENTION_SAVED").last)
        XCTAssertEqual(second["retention"]?["savedBy"], "productSwitched")
        XCTAssertEqual(second["retention"]?["rule"], "annual")
        try waitUntil(timeout: 5, "the save recorded") {
            (try self.entitle.application.store.retentionRecords(appId: "app", environment: "Sandbox", originalTransactionId: "4000"))
                .first?.savedBy == "offerRedeemed"
        }
        let services = try entitle.application.services(appId: "app")
        let entries = try XCTUnwrap(
            try services.history.history(appAccountToken: token, environment: nil, now: Date())?["history"]?.arrayValue)
        XCTAssert(entries.contains { $0["kind"] == "retention" }, "the answers in the customer's history")
        XCTAssert(entries.contains { $0["kind"] == "retentionSaved" && $0["retention"]?["rule"] == "loyal" })
        let metrics = String(
            decoding: entitle.handle(HTTPRequest(method: "GET", target: "/metrics", headers: [], body: [])).body, as: UTF8.self)
        XCTAssert(metrics.contains(#"entitle_retention_saves_total{app="app",rule="loyal"} 1"#), metrics)
        XCTAssert(metrics.contains(#"entitle_retention_answers_total{app="app",kind="promotionalOffer",rule="loyal"} 1"#), metrics)
    }
}
