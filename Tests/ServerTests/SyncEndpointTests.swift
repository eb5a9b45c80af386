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

/// Sync and back-fill against the local App Store stand-in, end to end through the HTTP API.
final class SyncEndpointTests: XCTestCase {
    private var chain: TestChain!
    private var folder: URL!
    private var standIn: AppStoreStandIn!
    private var entitle: EntitleServer!

    override func setUpWithError() throws {
        chain = try TestChain()
        folder = try makeTemporaryDirectory()
        standIn = try AppStoreStandIn.withFreshKey(in: folder, chain: chain)
        entitle = try server(issuer: true)
    }

    override func tearDownWithError() throws {
        entitle = nil
        standIn = nil
        chain = nil
        try? FileManager.default.removeItem(at: folder)
    }

    private func server(issuer: Bool, api: String = "", threads: String = "") throws -> EntitleServer {
        let issuerMember = issuer ? #", "issuerId": "57246542-96fe-1a63-e053-0824d011072a""# : ""
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0\(threads)}, "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"\(issuerMember)},
              "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "server_key_0123456789", "role": "server"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "appStoreServerAPI": {"sandboxURL": "\(standIn.baseURL)"\(api)},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}}]}
            """)
        return try EntitleServer(
            configuration: ConfigurationLoader.load(
                path: folder.appendingPathComponent("entitle.json").path,
                environment: [:]), logOutput: nil, store: try makeTemporaryStore())
    }

    private func post(
        _ path: String, _ body: JSONObject? = nil, key: String = "server_key_0123456789",
        on server: EntitleServer? = nil
    ) -> (Int, JSONValue) {
        let response = (server ?? entitle).handle(
            HTTPRequest(
                method: "POST", target: path,
                headers: [("authorization", "Bearer \(key)"), ("content-type", "application/json")],
                body: body.map { JSONValue.object($0).serializedBytes } ?? []))
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    /// A client key posts a signed transaction for `token`; the answer must be 200.
    private func clientPost(_ transaction: String, token: String, on server: EntitleServer? = nil) {
        let response = (server ?? entitle).handle(
            HTTPRequest(
                method: "POST", target: "/v1/transactions",
                headers: [("authorization", "Bearer client_key_0123456789"), ("content-type", "application/json")],
                body: JSONValue.object(["signedTransaction": .string(transaction), "appAccountToken": .string(token)]).serializedBytes))
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
    }

    /// A client links an untokened subscription: Apple is told (Set App Account Token, bearer JWT
    /// checked by the stand-in), and a call Apple refuses is made again later; the link stays.
    func testLinkingAnUntokenedSubscriptionTellsAppleAndRetries() throws {
        let entitle = try server(issuer: true, api: #", "setAppAccountToken": true, "callRetrySeconds": 0.2"#)
        let store = entitle.application.store
        standIn.script(AppStoreStandIn.error(500, 5000000, "An unknown error occurred."))
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        clientPost(AppStoreStandIn.signedTransaction(chain, id: "1000", bundleId: "com.example.app"), token: token, on: entitle)
        func calls() -> [HTTPRequest] { standIn.requests.filter { $0.path == "/inApps/v1/transactions/1000/appAccountToken" } }
        for _ in 0..<100 where calls().count < 2 { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(calls().count, 2, "the refused call was made again")
        XCTAssertEqual(calls().last?.method, "PUT")
        XCTAssertEqual(try JSONParser.parse(calls().last?.body ?? [])["appAccountToken"]?.stringValue, token)
        for _ in 0..<50 where try !store.dueAppleCalls(appId: "app", now: .max, limit: 10).isEmpty { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(try store.dueAppleCalls(appId: "app", now: .max, limit: 10), [], "taken by Apple: nothing left queued")
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.appAccountToken, token)
    }

    /// `finishTransactions`: a one-time purchase posted by a client or notified by Apple is
    /// finished with Apple (Finish Transaction, bearer JWT checked by the stand-in) through the
    /// durable queue, retried when Apple refuses; a subscription is not, nor a purchase stored before.
    func testNewOneTimePurchasesAreFinishedWithApple() throws {
        let entitle = try server(issuer: true, api: #", "finishTransactions": true, "callRetrySeconds": 0.2"#)
        let store = entitle.application.store
        let now = TestChain.milliseconds(chain.mintedAt)
        func purchase(_ id: String, type: String) throws -> String {
            try chain.sign([
                "transactionId": .string(id), "originalTransactionId": .string(id), "bundleId": "com.example.app",
                "productId": "coins", "environment": "Sandbox", "type": .string(type), "purchaseDate": .int(now),
                "signedDate": .int(now), "inAppOwnershipType": "PURCHASED",
            ])
        }
        standIn.script(AppStoreStandIn.error(500, 5000000, "An unknown error occurred."))
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        clientPost(try purchase("c-1", type: "Consumable"), token: token, on: entitle)
        clientPost(AppStoreStandIn.signedTransaction(chain, id: "1000", bundleId: "com.example.app"), token: token, on: entitle)
        let notification = try chain.sign([
            "notificationType": "ONE_TIME_CHARGE", "notificationUUID": "otc-1", "version": "2.0", "signedDate": .int(now),
            "data": .object([
                "bundleId": "com.example.app", "environment": "Sandbox",
                "signedTransactionInfo": .string(try purchase("n-1", type: "Non-Consumable")),
            ]),
        ])
        XCTAssertEqual(post("/v1/notifications/apple", ["signedPayload": .string(notification)], on: entitle).0, 200)
        func finishes() -> [String] {
            standIn.requests.filter { $0.method == "POST" && $0.path.hasSuffix("/finish") }.map { String($0.path) }
        }
        for _ in 0..<100 where finishes().count < 3 { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(
            finishes().sorted(),
            ["/inApps/v1/transactions/c-1/finish", "/inApps/v1/transactions/c-1/finish", "/inApps/v1/transactions/n-1/finish"],
            "the refused call made again, the subscription not finished")
        for _ in 0..<50 where try !store.dueAppleCalls(appId: "app", now: .max, limit: 10).isEmpty { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(try store.dueAppleCalls(appId: "app", now: .max, limit: 10), [], "taken by Apple: nothing left queued")
        clientPost(try purchase("c-1", type: "Consumable"), token: token, on: entitle)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(finishes().count, 3, "a purchase stored before is not finished again")
    }

    /// Calls to Apple have their own pool: with Apple hanging and every outbound thread waiting
    /// on it (and more syncs queued), subscriber reads are still answered from the database pool.
    func testSubscriberReadsAreServedWhileAppleHangs() throws {
        let server = try server(issuer: true, threads: #", "blockingThreads": 4, "outboundThreads": 4"#)
        entitle = server
        standIn.hang()
        let syncs = DispatchGroup()
        for index in 0..<12 {
            DispatchQueue.global().async(group: syncs) {
                _ = server.handle(
                    HTTPRequest(
                        method: "POST", target: "/v1/transactions/\(2000 + index)/sync",
                        headers: [("authorization", "Bearer server_key_0123456789")]))
            }
        }
        try waitUntil(timeout: 20, "every outbound thread waits on Apple") { self.standIn.heldRequests >= 4 }
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        for _ in 0..<20 {
            let answered = DispatchSemaphore(value: 0)
            let status = LockedList<Int>()
            DispatchQueue.global().async {
                let response = server.handle(
                    HTTPRequest(
                        method: "GET", target: "/v1/subscribers/\(token)", headers: [("authorization", "Bearer client_key_0123456789")]))
                status.append(response.status)
                answered.signal()
            }
            XCTAssertEqual(answered.wait(timeout: .now() + 5), .success, "a read waited behind Apple's calls")
            XCTAssertEqual(status.all, [404], "answered by the database: no such subscriber")
        }
        XCTAssertGreaterThanOrEqual(standIn.heldRequests, 4, "Apple still hangs")
        standIn.release()
        XCTAssertEqual(syncs.wait(timeout: .now() + 60), .success, "the syncs end once Apple answers again")
    }

    /// A client that goes away while its sync waits on Apple cancels Apple's call: the stand-in
    /// sees Entitle close that connection instead of waiting for Apple's answer or its timeout.
    func testAClientThatGoesAwayCancelsTheCallToApple() throws {
        entitle.start()
        standIn.hang()
        var client: TestHTTPClient? = try TestHTTPClient(port: entitle.port)
        try client?.send(
            "POST /v1/transactions/1000/sync HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer server_key_0123456789\r\nContent-Length: 0\r\n\r\n"
        )
        try waitUntil(timeout: 10, "the sync waits on Apple") { self.standIn.heldRequests >= 1 }
        XCTAssertEqual(standIn.abandonedRequests, 0)
        client = nil  // closes the connection
        try waitUntil(timeout: 10, "Apple's call is cancelled") { self.standIn.abandonedRequests >= 1 }
        standIn.release()
    }

    /// Stopping the server cancels the calls its queued work waits on (what they were for stays
    /// queued in the store).
    func testStoppingCancelsTheQueuedWorksCallToApple() throws {
        entitle = try server(issuer: true, api: #", "setAppAccountToken": true"#)
        entitle.start()
        standIn.hang()
        let transaction = try chain.sign(
            [
                "transactionId": "u-1", "originalTransactionId": "u-1", "bundleId": "com.example.app", "productId": "pro.monthly",
                "purchaseDate": .int(TestChain.milliseconds(chain.mintedAt)), "type": "Auto-Renewable Subscription",
                "expiresDate": .int(TestChain.milliseconds(chain.mintedAt) + 30 * 86_400_000), "environment": "Sandbox",
                "signedDate": .int(TestChain.milliseconds(chain.mintedAt)), "inAppOwnershipType": "PURCHASED",
            ])
        let (status, answer) = post(
            "/v1/transactions", ["signedTransaction": .string(transaction), "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"])
        XCTAssertEqual(status, 200, "\(answer)")
        try waitUntil(timeout: 10, "Set App Account Token waits on Apple") { self.standIn.heldRequests >= 1 }
        entitle.shutdown()
        entitle.waitUntilStopped()
        try waitUntil(timeout: 10, "Apple's call is cancelled") { self.standIn.abandonedRequests >= 1 }
        XCTAssertEqual(try entitle.application.store.dueAppleCalls(appId: "app", now: Int64.max, limit: 10).count, 1, "still queued")
        standIn.release()
    }

    func testSyncStoresTheHistoryAndThenOnlyChanges() throws {
        let (status, answer) = post("/v1/transactions/1000/sync")
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer["sync"]?["stored"], .int(7), "six history transactions and the status's latest")
        XCTAssertEqual(answer["sync"]?["revision"], "r3")
        XCTAssertEqual(answer["sync"]?["failures"], .array([]))
        XCTAssertEqual(answer["subscriber"]?["entitlements"]?["pro"]?["isActive"], .bool(true))
        let stored = try XCTUnwrap(try entitle.application.store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000"))
        XCTAssertEqual(Set(stored.transactions.map(\.transactionId)), ["h1-0", "h1-1", "h2-0", "h2-1", "h3-0", "h3-1", "s1"])
        XCTAssertEqual(stored.renewal?.autoRenewStatus, 1)

        let before = standIn.requests.count
        XCTAssertEqual(post("/v1/transactions/1000/sync").0, 200)
        let history = standIn.requests.dropFirst(before).filter { $0.path.hasPrefix("/inApps/v2/history") }
        XCTAssertEqual(history.map { String($0.query ?? "") }, ["revision=r3"], "the second sync asks only for changes")
    }

    /// What Apple's history says today arrives through sync as through a post or a notification:
    /// a commitment billed monthly, an offer's period, a prorated refund.
    func testSyncStoresTodaysFields() throws {
        let now = TestChain.milliseconds(chain.mintedAt)
        func period(_ id: String, _ extra: JSONObject) throws -> String {
            var payload: JSONObject = [
                "transactionId": .string(id), "originalTransactionId": "1000", "bundleId": "com.example.app", "productId": "pro.monthly",
                "environment": "Sandbox", "type": "Auto-Renewable Subscription", "purchaseDate": .int(now - 1000),
                "expiresDate": .int(now + 86_400_000), "signedDate": .int(now), "price": 9_990, "currency": "EUR",
                "billingPlanType": "MONTHLY", "offerPeriod": "P1M",
                "commitmentInfo": .object([
                    "billingPeriodNumber": 2, "totalBillingPeriods": 12, "commitmentExpiresDate": .int(now + 300 * 86_400_000),
                    "commitmentPrice": 119_880,
                ]),
            ]
            for member in extra.members { payload[member.key] = member.value }
            return try chain.sign(payload)
        }
        standIn.setHistory([
            try period("p-1", ["purchaseDate": .int(now - 40 * 86_400_000), "expiresDate": .int(now - 10 * 86_400_000)]),
            try period(
                "p-2", ["revocationDate": .int(now - 500), "revocationType": "REFUND_PRORATED", "revocationPercentage": 40_000]),
        ])
        let (status, answer) = post("/v1/transactions/1000/sync")
        XCTAssertEqual(status, 200, "\(answer)")
        let stored = try XCTUnwrap(try entitle.application.store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000"))
        let refunded = try XCTUnwrap(stored.transactions.first { $0.transactionId == "p-2" })
        XCTAssertEqual(refunded.billingPlanType, "MONTHLY")
        XCTAssertEqual(refunded.commitment?.billingPeriodNumber, 2)
        XCTAssertEqual(refunded.commitment?.commitmentPrice, 119_880)
        XCTAssertEqual(refunded.offerPeriod, "P1M")
        XCTAssertEqual(refunded.revocationPercentage, 40_000)
        XCTAssertEqual(refunded.refundedMilliunits, 3_996)
    }

    /// Apple's history is the customer's: a customer with a subscription and three one-time
    /// purchases is walked once, from the stored revision (it was walked once per purchase, three
    /// of them from the start).
    func testASubscribersSyncWalksTheirHistoryOnce() throws {
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let now = TestChain.milliseconds(chain.mintedAt)
        clientPost(AppStoreStandIn.signedTransaction(chain, id: "1000", bundleId: "com.example.app"), token: token)
        for id in ["c1", "c2", "c3"] {
            clientPost(
                try chain.sign([
                    "transactionId": .string(id), "originalTransactionId": .string(id), "bundleId": "com.example.app",
                    "productId": "gems.100", "environment": "Sandbox", "type": "Consumable", "purchaseDate": .int(now),
                    "signedDate": .int(now), "appAccountToken": .string(token),
                ]), token: token)
        }
        XCTAssertEqual(post("/v1/subscribers/\(token)/sync").0, 200)
        let before = standIn.requests.count
        let (status, answer) = post("/v1/subscribers/\(token)/sync")
        XCTAssertEqual(status, 200, "\(answer)")
        let history = standIn.requests.dropFirst(before).filter { $0.path.hasPrefix("/inApps/v2/history") }
        XCTAssertEqual(history.map { String($0.query ?? "") }, ["revision=r3"], "one walk, from where the last one ended")
    }

    func testBackfillAppliesOnlyWhatIsMissing() throws {
        let base = TestChain.milliseconds(chain.mintedAt)
        let notifications = try (1...3).map { index in
            try chain.sign([
                "notificationType": "DID_RENEW", "notificationUUID": .string("b-\(index)"), "signedDate": .int(base + Int64(index)),
                "data": .object([
                    "bundleId": "com.example.app", "environment": "Sandbox",
                    "signedTransactionInfo": .string(
                        AppStoreStandIn.signedTransaction(
                            chain, id: "t\(index)",
                            bundleId: "com.example.app")),
                ]),
            ])
        }
        XCTAssertEqual(
            entitle.handle(
                HTTPRequest(
                    method: "POST", target: "/v1/notifications/apple",
                    headers: [("content-type", "application/json")],
                    body: JSONValue.object(["signedPayload": .string(notifications[0])]).serializedBytes)
            ).status, 200)
        standIn.setNotificationPages([[notifications[0], notifications[1]], [notifications[2], "garbage"]])
        let (status, answer) = post("/v1/notifications/apple/backfill", ["startDate": "2026-01-01T00:00:00Z"])
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer["backfill"]?["stored"], .int(2))
        XCTAssertEqual(answer["backfill"]?["duplicates"], .int(1))
        XCTAssertEqual(answer["backfill"]?["failures"]?.arrayValue?.count, 1, "a bad item is reported, not dropped silently")
        XCTAssertEqual(
            Set(try entitle.application.store.notifications(appId: "app", limit: 10, before: nil).map(\.notificationUUID)),
            ["b-1", "b-2", "b-3"])
    }

    func testCommandLine() throws {
        let config = folder.appendingPathComponent("entitle.json").path
        let sync = try runProcess(entitleExecutable.path, ["sync", "--config", config, "--app", "app", "--transaction-id", "1000"])
        XCTAssertEqual(sync.status, 0, sync.stderr)
        XCTAssertEqual(try JSONParser.parse(sync.stdout)["sync"]?["stored"], .int(7))
        let backfill = try runProcess(
            entitleExecutable.path, ["backfill", "--config", config, "--app", "app", "--since", "2026-01-01T00:00:00Z"])
        XCTAssertEqual(backfill.status, 0, backfill.stderr)
        XCTAssertNotNil(try JSONParser.parse(backfill.stdout)["backfill"]?["failures"], "the stand-in's placeholder payloads are reported")
        let test = try runProcess(
            entitleExecutable.path, ["test-notification", "--config", config, "--app", "app", "--environment", "Sandbox"])
        let result = try JSONParser.parse(test.stdout)
        XCTAssertEqual(result["sendAttempts"], .array(["SUCCESS"]))
        XCTAssertEqual(result["arrived"], .bool(false), "Apple delivered it, but not to this database")
        XCTAssertEqual(test.status, 1)
        standIn.script(AppStoreStandIn.error(400, 4000006, "Invalid transaction id."))
        let failed = try runProcess(entitleExecutable.path, ["sync", "--config", config, "--app", "app", "--transaction-id", "x"])
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stdout.contains("invalidTransactionId"), failed.stdout)
    }

    func testErrorsAndAccess() throws {
        standIn.script(AppStoreStandIn.error(400, 4000006, "Invalid transaction id."))
        let (status, answer) = post("/v1/transactions/1000/sync")
        XCTAssertEqual(status, 502)
        XCTAssertEqual(answer["error"]?["code"], "APP_STORE_API_ERROR")
        XCTAssertEqual(answer["error"]?["appStoreErrorCode"], .int(4000006))
        XCTAssertEqual(post("/v1/transactions/1000/sync", key: "client_key_0123456789").0, 403)
        XCTAssertEqual(post("/v1/notifications/apple/backfill", ["startDate": "yesterday"]).0, 400)
        let (unconfigured, body) = post("/v1/transactions/1000/sync", on: try server(issuer: false))
        XCTAssertEqual(unconfigured, 422)
        XCTAssertEqual(body["error"]?["code"], "SYNC_NOT_CONFIGURED")
    }
}
