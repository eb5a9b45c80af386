import Application
import Crypto
import Entitlements
import Foundation
import HTTP
import Instants
import JSON
import Server
import Storage
import TestSupport
import XCTest

/// Facts in, state out over the HTTP API, with JWS signed by a minted chain and a real SQLite file.
final class SubscriberEndpointTests: XCTestCase {
    private var chain: TestChain!
    private var folder: URL!
    private var entitle: EntitleServer!
    private let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    /// Signing dates must fall inside the minted chain's validity, which starts when it was minted:
    /// every fact here is signed a few milliseconds after that (and before the assertions run).
    private var base: Int64 = 0
    private let day: Int64 = 86_400_000

    override func setUpWithError() throws {
        chain = try TestChain()
        base = TestChain.milliseconds(chain.mintedAt)
        folder = try makeTemporaryDirectory()
        try runProcess(
            "openssl",
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", folder.appendingPathComponent("key.p8").path,
            ])
        let config = """
            {"server": {"port": 0}, "storage": {"sqlite": "facts.sqlite3"},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
               "signingKey": {"keyId": "KEY1", "issuerId": "57246542-96fe-1a63-e053-0824d011072a", "privateKeyFile": "key.p8"},
               "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "server_key_0123456789", "role": "server"}],
               "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
               "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}, "coins": {"entitlements": []}},
               "offers": {"comeback": {"productId": "pro.monthly", "offerIdentifier": "comeback", "eligibility": "lapsed"},
                          "loyal": {"productId": "pro.monthly", "offerIdentifier": "loyal", "eligibility": "current"}}}]}
            """
        try writeFile(folder.appendingPathComponent("entitle.json"), config)
        entitle = try EntitleServer(
            configuration: ConfigurationLoader.load(
                path: folder.appendingPathComponent("entitle.json").path,
                environment: [:]), logOutput: nil)
    }

    override func tearDownWithError() throws {
        entitle = nil
        chain = nil  // XCTest keeps test cases alive until the run ends: free the minted chain now
        try? FileManager.default.removeItem(at: folder)
    }

    /// A prorated refund (Apple's `revocationType` and `revocationPercentage`): shown on the
    /// subscription, and the REFUND event says what it returned (price × percentage).
    func testAProratedRefundIsShownAndItsAmountEvented() throws {
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let bought = try notification(
            "p-1", type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: try transaction("1000", token: token, price: 9_990),
            renewal: nil, signed: base + 1)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(bought)]).0, 200)
        let refund = try notification(
            "p-2", type: "REFUND", subtype: nil,
            transaction: try transaction("1000", token: token, revoked: base, signed: base + 4, price: 9_990, refundedPercentage: 25_000),
            renewal: nil, signed: base + 4)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(refund)]).0, 200)
        let subscription = try XCTUnwrap(subscriber(token)?["subscriptions"]?["pro.monthly"])
        XCTAssertEqual(subscription["revocationType"], "REFUND_PRORATED")
        XCTAssertEqual(subscription["revocationPercentage"], 25_000)
        let events = request("GET", "/v1/events", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        let refunded = try XCTUnwrap(events.last { $0["type"] == "REFUND" }, "\(events)")
        XCTAssertEqual(refunded["revocationType"], "REFUND_PRORATED")
        XCTAssertEqual(refunded["revocationPercentage"], 25_000)
        XCTAssertEqual(refunded["refundedMilliunits"], 2_498, "a quarter of 9.99, to the nearest milliunit")
        XCTAssertEqual(refunded["refundedAmount"], .double(2.498))
    }

    /// Today's offers on a transaction, as Apple sends them: an offer code redeemed for a one-time
    /// purchase (`ONE_TIME`), the offer's period, and an offer type Entitle does not know yet
    /// (kept and shown, never refused).
    func testOffersOfTodayAreShownAsAppleSendsThem() throws {
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let coins = try chain.sign([
            "transactionId": "5000", "originalTransactionId": "5000", "bundleId": "com.example.app", "productId": "coins",
            "type": "Non-Consumable", "purchaseDate": .int(base), "signedDate": .int(base + 1), "environment": "Sandbox",
            "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token), "offerType": 3, "offerIdentifier": "SPRING",
            "offerDiscountType": "ONE_TIME", "offerPeriod": "P1D",
        ])
        let (status, answer) = request("POST", "/v1/transactions", ["signedTransaction": .string(coins)])
        XCTAssertEqual(status, 200, "\(answer)")
        let item = try XCTUnwrap(subscriber(token)?["nonSubscriptions"]?.arrayValue?.first)
        XCTAssertEqual(item["offerType"], "OFFER_CODE")
        XCTAssertEqual(item["offerIdentifier"], "SPRING")
        XCTAssertEqual(item["offerDiscountType"], "ONE_TIME")
        XCTAssertEqual(item["offerPeriod"], "P1D")

        let payload: JSONObject = [
            "transactionId": "6000", "originalTransactionId": "6000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base),
            "expiresDate": .int(base + 29 * day), "signedDate": .int(base + 1), "environment": "Sandbox",
            "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token), "offerType": 9, "offerDiscountType": "NEW_KIND",
            "offerPeriod": "P3M",
        ]
        let (newStatus, newAnswer) = request("POST", "/v1/transactions", ["signedTransaction": .string(try chain.sign(payload))])
        XCTAssertEqual(newStatus, 200, "an offer type Entitle does not know is no refusal: \(newAnswer)")
        let subscription = try XCTUnwrap(subscriber(token)?["subscriptions"]?["pro.monthly"])
        XCTAssertEqual(subscription["offerType"], "9", "passed through")
        XCTAssertEqual(subscription["offerDiscountType"], "NEW_KIND")
        XCTAssertEqual(subscription["offerPeriod"], "P3M")
    }

    /// A 12-month commitment billed monthly (API 1.21): the plan and both commitmentInfo objects
    /// are shown on the subscription and carried by events, and the commitment's own renewal
    /// switched off is a CANCELLATION of scope `commitment` (the subscription's renewal is not).
    func testACommitmentBilledMonthlyIsShownAndEvented() throws {
        func commitmentRenewal(_ status: Int64, signed: Int64) throws -> String {
            try chain.sign([
                "originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
                "autoRenewStatus": 1, "environment": "Sandbox", "signedDate": .int(signed), "renewalBillingPlanType": "MONTHLY",
                "commitmentInfo": .object([
                    "commitmentAutoRenewStatus": .int(status), "commitmentAutoRenewProductId": "pro.monthly",
                    "commitmentRenewalBillingPlanType": "BILLED_UPFRONT", "commitmentRenewalDate": .int(base + 300 * day),
                    "commitmentRenewalPrice": 99_990,
                ]),
            ])
        }
        let third = try chain.sign([
            "transactionId": "1003", "originalTransactionId": "1000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base - day),
            "expiresDate": .int(base + 29 * day), "signedDate": .int(base + 1), "environment": "Sandbox",
            "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token), "price": 9_990, "currency": "EUR",
            "billingPlanType": "MONTHLY",
            "commitmentInfo": .object([
                "billingPeriodNumber": 3, "totalBillingPeriods": 12, "commitmentExpiresDate": .int(base + 270 * day),
                "commitmentPrice": 119_880,
            ]),
        ])
        let (status, posted) = request(
            "POST", "/v1/transactions",
            ["signedTransaction": .string(third), "signedRenewalInfo": .string(try commitmentRenewal(1, signed: base + 1))])
        XCTAssertEqual(status, 200, "\(posted)")
        let subscription = try XCTUnwrap(subscriber(token)?["subscriptions"]?["pro.monthly"])
        XCTAssertEqual(subscription["billingPlanType"], "MONTHLY")
        XCTAssertEqual(subscription["renewalBillingPlanType"], "MONTHLY")
        let commitment = try XCTUnwrap(subscription["commitment"])
        XCTAssertEqual(commitment["billingPeriodNumber"], 3)
        XCTAssertEqual(commitment["totalBillingPeriods"], 12)
        XCTAssertEqual(commitment["commitmentPrice"], 119_880)
        XCTAssertEqual(commitment["commitmentExpiresDateMs"], .int(base + 270 * day))
        XCTAssertEqual(commitment["commitmentExpiresDate"], .string(Timestamps.iso(base + 270 * day)))
        XCTAssertEqual(commitment["commitmentAutoRenewStatus"], 1)
        XCTAssertEqual(commitment["commitmentAutoRenewProductId"], "pro.monthly")
        XCTAssertEqual(commitment["commitmentRenewalBillingPlanType"], "BILLED_UPFRONT")
        XCTAssertEqual(commitment["commitmentRenewalDateMs"], .int(base + 300 * day))
        XCTAssertEqual(commitment["commitmentRenewalPrice"], 99_990)

        let (again, answer) = request(
            "POST", "/v1/transactions",
            ["signedTransaction": .string(third), "signedRenewalInfo": .string(try commitmentRenewal(0, signed: base + 2))])
        XCTAssertEqual(again, 200, "\(answer)")
        XCTAssertEqual(subscriber(token)?["subscriptions"]?["pro.monthly"]?["willRenew"], .bool(true), "the subscription renews")
        let events = request("GET", "/v1/events", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        let purchase = try XCTUnwrap(events.first { $0["type"] == "INITIAL_PURCHASE" || $0["type"] == "RENEWAL" }, "\(events)")
        XCTAssertEqual(purchase["billingPlanType"], "MONTHLY")
        XCTAssertEqual(purchase["commitment"]?["billingPeriodNumber"], 3)
        let cancellations = events.filter { $0["type"] == "CANCELLATION" }
        XCTAssertEqual(cancellations.count, 1, "\(events)")
        XCTAssertEqual(cancellations.first?["scope"], "commitment")
        XCTAssertEqual(cancellations.first?["subscriber"]?["subscriptions"]?["pro.monthly"]?["commitment"]?["commitmentAutoRenewStatus"], 0)
    }

    /// RESCIND_CONSENT (top-level `appData`, no `data`): verified with its signed app transaction,
    /// stored, answered 200, and the event CONSENT_RESCINDED names the download, its purchases and
    /// the customer. A download Entitle knows nothing of still gets its event.
    func testRescindedConsentIsStoredAndEventedWithItsCustomer() throws {
        let subscription = try chain.sign([
            "transactionId": "1000", "originalTransactionId": "1000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base),
            "expiresDate": .int(base + 29 * day), "signedDate": .int(base + 1), "environment": "Sandbox",
            "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token), "appTransactionId": "71134",
        ])
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": .string(subscription)]).0, 200)
        func rescinded(_ uuid: String, appTransactionId: String) throws -> String {
            let download = try chain.sign([
                "receiptType": "Sandbox", "bundleId": "com.example.app", "applicationVersion": "1.2.3",
                "receiptCreationDate": .int(base + 2), "originalPurchaseDate": .int(base - day), "originalApplicationVersion": "1.0",
                "appTransactionId": .string(appTransactionId), "originalPlatform": "iOS",
            ])
            return try chain.sign([
                "notificationType": "RESCIND_CONSENT", "notificationUUID": .string(uuid), "version": "2.0", "signedDate": .int(base + 3),
                "appData": .object(["bundleId": "com.example.app", "environment": "Sandbox", "signedAppTransactionInfo": .string(download)]
                ),
            ])
        }
        let (status, answer) = request(
            "POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(try rescinded("c-1", appTransactionId: "71134"))])
        XCTAssertEqual(status, 200, "\(answer)")
        let (unknown, _) = request(
            "POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(try rescinded("c-2", appTransactionId: "999"))])
        XCTAssertEqual(unknown, 200)
        let notifications = request("GET", "/v1/notifications", key: "server_key_0123456789").1["notifications"]?.arrayValue ?? []
        XCTAssertEqual(notifications.filter { $0["notificationType"] == "RESCIND_CONSENT" }.count, 2, "\(notifications)")

        let events = request("GET", "/v1/events", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        let consents = events.filter { $0["type"] == "CONSENT_RESCINDED" }
        XCTAssertEqual(consents.count, 2, "\(events)")
        let known = try XCTUnwrap(consents.first { $0["appTransactionId"] == "71134" })
        XCTAssertEqual(known["appAccountToken"], .string(token))
        XCTAssertEqual(known["originalTransactionIds"], .array(["1000"]))
        XCTAssertEqual(known["notificationType"], "RESCIND_CONSENT")
        XCTAssertEqual(known["occurredAtMs"], .int(base + 3))
        XCTAssertEqual(known["subscriber"]?["subscriptions"]?["pro.monthly"]?["isActive"], .bool(true))
        let stranger = try XCTUnwrap(consents.first { $0["appTransactionId"] == "999" })
        XCTAssertNil(stranger["appAccountToken"])
        XCTAssertEqual(stranger["originalTransactionIds"], .array([]))
    }

    /// Apple's newer notification types, and one it may add, are verified, stored, answered 200
    /// and applied: the transaction or renewal info each carries is stored like any other.
    func testNewerNotificationTypesAreStoredAndApplied() throws {
        let types = ["METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE", "ONE_TIME_CHARGE", "SOMETHING_APPLE_ADDS"]
        for (index, type) in types.enumerated() {
            let id = String(2000 + index)
            let signed = try transaction(id, original: id, token: token, signed: base + 2 + Int64(index))
            let posted = try notification("t-\(type)", type: type, subtype: nil, transaction: signed, renewal: nil, signed: base + 2)
            let (status, answer) = request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(posted)])
            XCTAssertEqual(status, 200, "\(type): \(answer)")
            XCTAssertEqual(answer["status"], "applied", type)
        }
        let notifications = request("GET", "/v1/notifications", key: "server_key_0123456789").1["notifications"]?.arrayValue ?? []
        XCTAssertEqual(Set(notifications.compactMap { $0["notificationType"]?.stringValue }), Set(types))
        XCTAssertEqual(
            Set(notifications.compactMap { $0["originalTransactionId"]?.stringValue }), ["2000", "2001", "2002", "2003", "2004"])
        let subscriptions = try XCTUnwrap(subscriber(token)?["subscriptions"]?.objectValue)
        XCTAssertEqual(subscriptions["pro.monthly"]?["originalTransactionId"], "2004", "every one applied; the latest is shown")
    }

    // MARK: - Helpers

    private func request(
        _ method: String, _ path: String, key: String? = "client_key_0123456789",
        _ body: JSONObject? = nil
    ) -> (Int, JSONValue) {
        var headers: [(name: String, value: String)] = [("content-type", "application/json")]
        if let key { headers.append(("authorization", "Bearer \(key)")) }
        let response = entitle.handle(
            HTTPRequest(
                method: method, target: path, headers: headers,
                body: body.map { JSONValue.object($0).serializedBytes } ?? []))
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    private func transaction(
        _ id: String, original: String = "1000", token: String? = nil, revoked: Int64? = nil,
        signed: Int64? = nil, environment: String = "Sandbox", price: Int64? = nil, refundedPercentage: Int64? = nil
    ) throws -> String {
        var payload: JSONObject = [
            "transactionId": .string(id), "originalTransactionId": .string(original), "bundleId": "com.example.app",
            "productId": "pro.monthly", "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription",
            "purchaseDate": .int(base - day), "originalPurchaseDate": .int(base - day), "expiresDate": .int(base + 29 * day),
            "inAppOwnershipType": "PURCHASED", "environment": .string(environment), "signedDate": .int(signed ?? base + 1),
            "offerType": 1, "offerDiscountType": "FREE_TRIAL",
        ]
        if let token { payload["appAccountToken"] = .string(token) }
        if let revoked {
            payload["revocationDate"] = .int(revoked)
            payload["revocationReason"] = 0
        }
        if let price {
            payload["price"] = .int(price)
            payload["currency"] = "EUR"
        }
        if let refundedPercentage {
            payload["revocationType"] = "REFUND_PRORATED"
            payload["revocationPercentage"] = .int(refundedPercentage)
        }
        return try chain.sign(payload)
    }

    private func renewal(autoRenew: Int64, signed: Int64) throws -> String {
        try chain.sign([
            "originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
            "autoRenewStatus": .int(autoRenew), "environment": "Sandbox", "signedDate": .int(signed),
            "eligibleWinBackOfferIds": .array(["wb1"]),
        ])
    }

    private func notification(
        _ uuid: String, type: String, subtype: String?, transaction: String, renewal: String?,
        signed: Int64, bundle: String = "com.example.app"
    ) throws -> String {
        var data: JSONObject = [
            "bundleId": .string(bundle), "environment": "Sandbox", "signedTransactionInfo": .string(transaction),
            "status": 1,
        ]
        if let renewal { data["signedRenewalInfo"] = .string(renewal) }
        var payload: JSONObject = [
            "notificationType": .string(type), "notificationUUID": .string(uuid), "version": "2.0",
            "signedDate": .int(signed), "data": .object(data),
        ]
        if let subtype { payload["subtype"] = .string(subtype) }
        return try chain.sign(payload)
    }

    private func subscriber(_ token: String) -> JSONValue? {
        let (status, json) = request("GET", "/v1/subscribers/\(token)")
        return status == 200 ? json["subscriber"] : nil
    }

    // MARK: - Tests

    /// The server's one clock (`WallClock`): moved a month, every answer reads the month later —
    /// the subscription has lapsed, the figures have moved, and a console session signed in
    /// before has passed its end — with nothing but the clock changed.
    func testMovingTheServersClockAMonthMovesEveryAnswer() throws {
        let clock = MovableClock(at: chain.mintedAt.addingTimeInterval(1))
        let configuration = try ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:])
        entitle = try EntitleServer(configuration: configuration, logOutput: nil, clock: clock)
        let bought = try notification(
            "clock-1", type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: try transaction("1000", token: token, price: 9_990),
            renewal: try renewal(autoRenew: 1, signed: base + 1), signed: base + 1)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(bought)]).0, 200)
        XCTAssertEqual(subscriber(token)?["entitlements"]?["pro"]?["isActive"], true)
        func active() -> JSONValue? {
            request("GET", "/v1/metrics/summary?environment=Sandbox", key: "server_key_0123456789").1["summary"]?["activeTrials"]
        }
        XCTAssertEqual(active(), 1, "the helper's transaction is a free trial")

        clock.advance(by: 31 * 86_400)
        XCTAssertEqual(subscriber(token)?["entitlements"]?["pro"]?["isActive"], false, "expired 29 days after it was signed")
        XCTAssertEqual(active(), 0, "the figures read at the clock's now")
        XCTAssertEqual(
            Milliseconds.since1970(clock.now()) / 1000, Milliseconds.since1970(chain.mintedAt.addingTimeInterval(1 + 31 * 86_400)) / 1000,
            "a moved clock stays where it was put")
    }

    func testTransactionsNotificationsAndState() throws {
        let (status, posted) = request(
            "POST", "/v1/transactions",
            [
                "signedTransaction": .string(try transaction("1000", token: token)),
                "signedRenewalInfo": .string(try renewal(autoRenew: 1, signed: base + 1)),
            ])
        XCTAssertEqual(status, 200, "\(posted)")
        XCTAssertEqual(posted["transaction"]?["transactionId"], "1000")
        let entitlement = try XCTUnwrap(posted["subscriber"]?["entitlements"]?["pro"])
        XCTAssertEqual(entitlement["isActive"], .bool(true))
        XCTAssertEqual(entitlement["state"], "ACTIVE")
        XCTAssertEqual(entitlement["periodType"], "TRIAL")
        XCTAssertEqual(entitlement["expiresDateMs"], .int(base + 29 * day))
        XCTAssertNotNil(entitlement["expiresDate"]?.stringValue?.hasSuffix("Z"))
        XCTAssertEqual(entitlement["store"], "app_store")

        let subscription = try XCTUnwrap(subscriber(token)?["subscriptions"]?["pro.monthly"])
        XCTAssertEqual(subscription["willRenew"], .bool(true))
        XCTAssertEqual(subscription["offerType"], "INTRODUCTORY")
        XCTAssertEqual(subscription["ownershipType"], "PURCHASED")
        XCTAssertEqual(subscription["eligibleWinBackOfferIds"], .array(["wb1"]))
        XCTAssertEqual(
            request("GET", "/v1/subscribers/by-transaction/1000", key: "server_key_0123456789").1["subscriber"]?["appAccountToken"]?
                .stringValue, token)
        let (forbidden, refusal) = request("GET", "/v1/subscribers/by-transaction/1000")
        XCTAssertEqual(forbidden, 403, "a client key (public, inside the app) cannot walk original transaction ids")
        XCTAssertEqual(refusal["error"]?["code"], "FORBIDDEN")

        // Auto-renew turned off, by notification.
        let off = try notification(
            "n-1", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED",
            transaction: try transaction("1000", token: token), renewal: try renewal(autoRenew: 0, signed: base + 2),
            signed: base + 2)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(off)]).1["status"], "applied")
        let afterOff = try XCTUnwrap(subscriber(token)?["subscriptions"]?["pro.monthly"])
        XCTAssertEqual(afterOff["willRenew"], .bool(false))
        XCTAssertEqual(afterOff["unsubscribeDetectedAtMs"], .int(base + 2))
        XCTAssertEqual(afterOff["state"], "ACTIVE", "auto-renew describes the future only")

        // The same notification again: 200, nothing applied twice.
        let (again, againBody) = request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(off)])
        XCTAssertEqual(again, 200)
        XCTAssertEqual(againBody["status"], "duplicate")

        // A forged notification (signed by another key) stores nothing.
        let forged = try JWSSigner.sign(
            header: try chain.header(), payload: try CompactJWS(off).payload.replacing("notificationUUID", "n-forged"),
            with: try P256.Signing.PrivateKey())
        let (rejected, rejectedBody) = request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(forged)])
        XCTAssertEqual(rejected, 422)
        XCTAssertEqual(rejectedBody["error"]?["status"], "VERIFICATION_FAILURE")
        let (_, listed) = request("GET", "/v1/notifications?limit=10", key: "server_key_0123456789")
        XCTAssertEqual(listed["notifications"]?.arrayValue?.map { $0["notificationUUID"]?.stringValue }, ["n-1"])

        // A refund of the current period revokes it.
        let refund = try notification(
            "n-2", type: "REFUND", subtype: nil,
            transaction: try transaction("1000", token: token, revoked: base, signed: base + 4),
            renewal: nil, signed: base + 4)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(refund)]).0, 200)
        let revoked = try XCTUnwrap(subscriber(token)?["entitlements"]?["pro"])
        XCTAssertEqual(revoked["state"], "REVOKED")
        XCTAssertEqual(revoked["isActive"], .bool(false))

        // An older copy arriving late changes nothing.
        let late = try notification(
            "n-3", type: "DID_RENEW", subtype: nil,
            transaction: try transaction("1000", token: token, signed: base + 3), renewal: nil, signed: base + 3)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(late)]).0, 200)
        XCTAssertEqual(subscriber(token)?["entitlements"]?["pro"]?["state"], "REVOKED")

        // Offers decided from that history.
        XCTAssertEqual(
            request("POST", "/v1/introductory-offers/eligibility", ["productId": "pro.monthly", "appAccountToken": .string(token)])
                .1["reason"], "ALREADY_SUBSCRIBED_TO_GROUP")
        XCTAssertEqual(
            request(
                "POST", "/v1/introductory-offers/eligibility",
                ["productId": "pro.monthly", "appAccountToken": "11111111-2222-4333-8444-555555555555"]
            ).1["reason"],
            "NEVER_SUBSCRIBED_TO_GROUP")
        XCTAssertEqual(
            request(
                "POST", "/v1/promotional-offers/sign",
                [
                    "productId": "pro.monthly", "offerId": "comeback",
                    "appAccountToken": .string(token),
                ]
            ).0, 200, "lapsed: eligible")
        let (loyal, loyalBody) = request(
            "POST", "/v1/promotional-offers/sign",
            [
                "productId": "pro.monthly", "offerId": "loyal",
                "appAccountToken": .string(token),
            ])
        XCTAssertEqual(loyal, 422)
        XCTAssertEqual(loyalBody["error"]?["reason"], "NOT_ELIGIBLE")
    }

    /// Apple's verifier answers a notification VALID whatever its nested items are; ingestion
    /// refuses one whose nested transaction is not a valid JWS, and stores nothing of it.
    func testANotificationWithAnUnreadableNestedItem() throws {
        let broken = try notification(
            "n-broken", type: "DID_RENEW", subtype: nil, transaction: "not-a-jws", renewal: nil,
            signed: base + 3)
        let (verified, answer) = request("POST", "/v1/verify", key: "server_key_0123456789", ["signedPayload": .string(broken)])
        XCTAssertEqual(verified, 200, "\(answer)")
        XCTAssertEqual(answer["payload"]?["notificationUUID"], "n-broken")
        XCTAssertEqual(answer["nestedVerdicts"]?["signedTransactionInfo"]?["status"], "INVALID_JWT_FORMAT")
        XCTAssertNil(answer["transactionInfo"])

        let (refused, error) = request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(broken)])
        XCTAssertEqual(refused, 422)
        XCTAssertEqual(error["error"]?["status"], "INVALID_JWT_FORMAT")
        XCTAssertTrue(error["error"]?["message"]?.stringValue?.hasPrefix("signedTransactionInfo:") == true, "\(error)")
        XCTAssertEqual(request("GET", "/v1/notifications", key: "server_key_0123456789").1["notifications"], .array([]))
    }

    /// Every verification is counted by where it came from, kind and result; notifications by
    /// type and, in another family, by outcome (so no sum counts one twice).
    func testMetricsCountEveryVerificationOnce() throws {
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": .string(try transaction("1000", token: token))]).0, 200)
        let renewed = try notification(
            "n-m", type: "DID_RENEW", subtype: nil, transaction: try transaction("1001", token: token),
            renewal: try renewal(autoRenew: 1, signed: base + 4), signed: base + 4)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(renewed)]).0, 200)
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(renewed)]).0, 200)
        let forged = try JWSSigner.sign(
            header: try chain.header(), payload: try CompactJWS(renewed).payload, with: try P256.Signing.PrivateKey())
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(forged)]).0, 422)

        let metrics = entitle.metrics
        XCTAssertEqual(
            metrics.total(
                "entitle_verifications_total",
                matching: [
                    "app": "app", "source": "transaction", "kind": "transaction",
                    "result": "VALID",
                ]), 1)
        XCTAssertEqual(
            metrics.total(
                "entitle_verifications_total",
                matching: [
                    "source": "notification", "kind": "notification",
                    "result": "VALID",
                ]), 2)
        XCTAssertEqual(metrics.total("entitle_verifications_total", matching: ["source": "notification", "kind": "transaction"]), 2)
        XCTAssertEqual(metrics.total("entitle_verifications_total", matching: ["source": "notification", "kind": "renewal-info"]), 2)
        XCTAssertEqual(
            metrics.total(
                "entitle_verifications_total",
                matching: [
                    "source": "notification",
                    "result": "VERIFICATION_FAILURE",
                ]), 1)
        XCTAssertEqual(metrics.total("entitle_notifications_received_total", matching: ["app": "app", "type": "DID_RENEW"]), 2)
        XCTAssertEqual(metrics.total("entitle_notification_outcomes_total", matching: ["result": "applied"]), 1)
        XCTAssertEqual(metrics.total("entitle_notification_outcomes_total", matching: ["result": "duplicate"]), 1)
        XCTAssertEqual(metrics.total("entitle_notification_outcomes_total", matching: ["result": "VERIFICATION_FAILURE"]), 1)
        XCTAssertEqual(metrics.total("entitle_notification_outcomes_total"), 3, "one outcome per notification received")
    }

    /// In an app that enables Production and Sandbox, a Sandbox subscription is found by its
    /// original transaction id without naming the environment.
    func testLookupByTransactionSearchesEveryEnabledEnvironment() throws {
        try useBothEnvironments()
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": .string(try transaction("1000"))]).0, 200)
        let (found, answer) = request("GET", "/v1/subscribers/by-transaction/1000", key: "server_key_0123456789")
        XCTAssertEqual(found, 200, "\(answer)")
        XCTAssertEqual(answer["subscriber"]?["environment"], "Sandbox")
        XCTAssertEqual(
            request("GET", "/v1/subscribers/by-transaction/1000?environment=Production", key: "server_key_0123456789").0, 404)
    }

    /// One subscriber view over Production and Sandbox, and the Sandbox access policy.
    func testOneViewOverProductionAndSandbox() throws {
        try useBothEnvironments()
        let sandboxOnly = token, productionOnly = "22222222-2222-4333-8444-555555555555"
        let both = "33333333-2222-4333-8444-555555555555"
        func post(_ jws: String) { XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": .string(jws)]).0, 200) }
        post(try transaction("1000", token: sandboxOnly))
        post(try transaction("2000", original: "2000", token: productionOnly, environment: "Production"))
        post(try transaction("3000", original: "3000", token: both, revoked: base, environment: "Production"))
        post(try transaction("4000", original: "4000", token: both))

        let sandbox = try XCTUnwrap(subscriber(sandboxOnly))
        XCTAssertEqual(sandbox["environments"], .array(["Sandbox"]))
        XCTAssertEqual(sandbox["environment"], "Sandbox", "kept when the customer has facts in one environment")
        XCTAssertEqual(sandbox["entitlements"]?["pro"]?["isActive"], .bool(true), "App Review sees what it bought")
        XCTAssertEqual(sandbox["entitlements"]?["pro"]?["environment"], "Sandbox")
        XCTAssertEqual(sandbox["entitlements"]?["pro"]?["isSandbox"], .bool(true))
        XCTAssertEqual(sandbox["subscriptions"]?["pro.monthly"]?["environment"], "Sandbox")
        XCTAssertEqual(sandbox["subscriptions"]?["pro.monthly"]?["isSandbox"], .bool(true))

        let production = try XCTUnwrap(subscriber(productionOnly))
        XCTAssertEqual(production["environments"], .array(["Production"]))
        XCTAssertEqual(production["entitlements"]?["pro"]?["isSandbox"], .bool(false))
        XCTAssertEqual(production["subscriptions"]?["pro.monthly"]?["originalTransactionId"], "2000")

        let mixed = try XCTUnwrap(subscriber(both))
        XCTAssertEqual(mixed["environments"], .array(["Production", "Sandbox"]))
        XCTAssertNil(mixed["environment"], "two environments: no single one")
        XCTAssertEqual(mixed["entitlements"]?["pro"]?["isActive"], .bool(true), "the best grant across environments")
        XCTAssertEqual(mixed["entitlements"]?["pro"]?["originalTransactionId"], "4000")
        XCTAssertEqual(mixed["subscriptions"]?["pro.monthly"]?["originalTransactionId"], "4000", "the active one is listed")
        let narrowed = request("GET", "/v1/subscribers/\(both)?environment=Production").1["subscriber"]
        XCTAssertEqual(narrowed?["environment"], "Production")
        XCTAssertNil(narrowed?["environments"], "?environment= answers exactly as before")
        XCTAssertEqual(narrowed?["entitlements"]?["pro"]?["isActive"], .bool(false), "a Sandbox fact never changes Production")

        for (policy, testers, sandboxActive, mixedActive) in [
            ("none", "", false, false), ("listed", #", "sandboxTesters": ["\#(sandboxOnly.uppercased())"]"#, true, false),
        ] {
            let config = try String(contentsOf: folder.appendingPathComponent("both.json"), encoding: .utf8)
                .replacingOccurrences(of: #""appAppleId": 1234,"#, with: #""appAppleId": 1234, "sandboxAccess": "\#(policy)"\#(testers),"#)
            try writeFile(folder.appendingPathComponent("policy.json"), config)
            entitle = try EntitleServer(
                configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("policy.json").path, environment: [:]),
                logOutput: nil)
            let tester = try XCTUnwrap(subscriber(sandboxOnly), policy)
            XCTAssertNotNil(tester["subscriptions"]?["pro.monthly"], "\(policy): the Sandbox subscription still shows")
            XCTAssertEqual(tester["entitlements"]?["pro"]?["isActive"]?.boolValue ?? false, sandboxActive, policy)
            XCTAssertEqual(try XCTUnwrap(subscriber(both))["entitlements"]?["pro"]?["isActive"], .bool(mixedActive), policy)
            XCTAssertEqual(try XCTUnwrap(subscriber(productionOnly))["entitlements"]?["pro"]?["isActive"], .bool(true), policy)
        }
        XCTAssertThrowsError(
            try ConfigurationLoader.load(
                path: try {
                    let bad = try String(contentsOf: folder.appendingPathComponent("both.json"), encoding: .utf8)
                        .replacingOccurrences(of: #""appAppleId": 1234,"#, with: #""appAppleId": 1234, "sandboxTesters": ["nope"],"#)
                    try writeFile(folder.appendingPathComponent("bad.json"), bad)
                    return folder.appendingPathComponent("bad.json").path
                }(), environment: [:]))
    }

    /// A customer without an appAccountToken is found by the appTransactionId of its purchases.
    func testCustomersWithoutATokenAreFoundByAppTransactionId() throws {
        try useBothEnvironments()
        let untokened = try chain.sign([
            "transactionId": "5000", "originalTransactionId": "5000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base - day),
            "expiresDate": .int(base + 29 * day), "inAppOwnershipType": "PURCHASED", "environment": "Sandbox",
            "signedDate": .int(base + 1), "appTransactionId": "704288453214872451",
        ])
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": .string(untokened)]).0, 200)
        let path = "/v1/subscribers/by-app-transaction/704288453214872451"
        let (status, answer) = request("GET", path, key: "server_key_0123456789")
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer["subscriber"]?["appTransactionId"], "704288453214872451")
        XCTAssertNil(answer["subscriber"]?["appAccountToken"])
        XCTAssertEqual(answer["subscriber"]?["environments"], .array(["Sandbox"]))
        XCTAssertEqual(answer["subscriber"]?["entitlements"]?["pro"]?["isActive"], .bool(true))
        XCTAssertEqual(request("GET", path).0, 403, "client keys cannot look customers up by id")
        XCTAssertEqual(request("GET", "/v1/subscribers/by-app-transaction/1", key: "server_key_0123456789").0, 404)
    }

    /// `transferPolicy`: `refuse` keeps the link (409), `transfer` moves it and both subscribers
    /// show the move.
    func testTransferPolicies() throws {
        let second = "11111111-2222-4333-8444-555555555555"
        let untokened = try transaction("1000")
        XCTAssertEqual(
            request("POST", "/v1/transactions", ["signedTransaction": .string(untokened), "appAccountToken": .string(token)]).0, 200)
        XCTAssertEqual(
            request("POST", "/v1/transactions", ["signedTransaction": .string(untokened), "appAccountToken": .string(second)]).0, 409,
            "refuse is the default")
        let config = try String(contentsOf: folder.appendingPathComponent("entitle.json"), encoding: .utf8)
            .replacingOccurrences(
                of: #""environments": ["Sandbox"],"#, with: #""environments": ["Sandbox"], "transferPolicy": "transfer","#)
        try writeFile(folder.appendingPathComponent("transfer.json"), config)
        entitle = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("transfer.json").path, environment: [:]),
            logOutput: nil)
        let (moved, answer) = request(
            "POST", "/v1/transactions", ["signedTransaction": .string(untokened), "appAccountToken": .string(second)])
        XCTAssertEqual(moved, 200, "\(answer)")
        XCTAssertEqual(answer["subscriber"]?["appAccountToken"]?.stringValue, second)
        let newOwner = try XCTUnwrap(subscriber(second))
        XCTAssertEqual(newOwner["entitlements"]?["pro"]?["isActive"], .bool(true))
        XCTAssertEqual(newOwner["transfers"]?.arrayValue?.first?["from"]?.stringValue, token)
        XCTAssertEqual(newOwner["transfers"]?.arrayValue?.first?["to"]?.stringValue, second)
        let formerOwner = try XCTUnwrap(subscriber(token), "the token it moved from still answers, with the move")
        XCTAssertNil(formerOwner["entitlements"]?["pro"])
        XCTAssertEqual(formerOwner["transfers"]?.arrayValue?.first?["originalTransactionId"], "1000")
    }

    /// A server for an app that enables Production and Sandbox, on its own database.
    private func useBothEnvironments() throws {
        let config = try String(contentsOf: folder.appendingPathComponent("entitle.json"), encoding: .utf8)
            .replacingOccurrences(
                of: #""environments": ["Sandbox"],"#,
                with: #""environments": ["Production", "Sandbox"], "appAppleId": 1234,"#
            )
            .replacingOccurrences(of: "facts.sqlite3", with: "both.sqlite3")
        try writeFile(folder.appendingPathComponent("both.json"), config)
        entitle = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("both.json").path, environment: [:]),
            logOutput: nil)
    }

    /// Eligibility is decided on the history of the environment the purchase happens in: the
    /// request's `environment`, else its transaction's, else the one where the customer has facts.
    func testOffersAreDecidedInTheCustomersEnvironment() throws {
        try useBothEnvironments()
        let lapsed = "11111111-2222-4333-8444-555555555555"
        // A Sandbox customer in an active free trial, and a Sandbox customer whose subscription ended.
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": .string(try transaction("1000", token: token))]).0, 200)
        XCTAssertEqual(
            request(
                "POST", "/v1/transactions",
                ["signedTransaction": .string(try transaction("2000", original: "2000", token: lapsed, revoked: base))]
            ).0, 200)
        let path = "/v1/introductory-offers/eligibility"

        let inferred = request("POST", path, ["productId": "pro.monthly", "appAccountToken": .string(token)]).1
        XCTAssertEqual(inferred["eligible"], .bool(false), "\(inferred)")
        XCTAssertEqual(inferred["reason"], "ALREADY_SUBSCRIBED_TO_GROUP")
        XCTAssertEqual(inferred["environment"], "Sandbox")
        let byTransaction = request("POST", path, key: "server_key_0123456789", ["productId": "pro.monthly", "transactionId": "1000"]).1
        XCTAssertEqual(byTransaction["eligible"], .bool(false))
        XCTAssertEqual(byTransaction["environment"], "Sandbox")
        XCTAssertNotNil(byTransaction["jws"], "the JWS says the trial is not allowed")
        let named = request("POST", path, ["productId": "pro.monthly", "appAccountToken": .string(token), "environment": "Production"]).1
        XCTAssertEqual(named["eligible"], .bool(true), "no Production history: eligible there")
        XCTAssertEqual(named["environment"], "Production")
        let stranger = request("POST", path, ["productId": "pro.monthly", "appAccountToken": "99999999-2222-4333-8444-555555555555"]).1
        XCTAssertEqual(stranger["environment"], "Production", "no facts anywhere: Production")
        XCTAssertEqual(request("POST", path, ["productId": "pro.monthly", "environment": "Xcode"]).0, 400, "not enabled")

        let sign = "/v1/promotional-offers/sign"
        let current = request("POST", sign, ["productId": "pro.monthly", "offerId": "loyal", "appAccountToken": .string(token)])
        XCTAssertEqual(current.0, 200, "a current Sandbox subscriber gets the offer for current subscribers: \(current.1)")
        XCTAssertEqual(current.1["environment"], "Sandbox")
        XCTAssertEqual(
            request(
                "POST", sign,
                [
                    "productId": "pro.monthly", "offerId": "loyal", "appAccountToken": .string(token),
                    "environment": "Production",
                ]
            ).1["error"]?["reason"], "NOT_ELIGIBLE")
        let winBack = request("POST", sign, ["productId": "pro.monthly", "offerId": "comeback", "appAccountToken": .string(lapsed)])
        XCTAssertEqual(winBack.0, 200, "a lapsed Sandbox customer gets the win-back offer: \(winBack.1)")
        XCTAssertNotNil(winBack.1["signature"])
        XCTAssertEqual(
            request(
                "POST", sign, key: "server_key_0123456789", ["productId": "pro.monthly", "offerId": "comeback", "transactionId": "1000"]
            )
            .1["error"]?["reason"],
            "NOT_ELIGIBLE", "the trial customer is current, not lapsed")
    }

    /// With a client key (public, inside the app) a bare transactionId answered whether it exists
    /// (ALREADY_SUBSCRIBED_TO_GROUP and its environment for a real id). It names the customer only
    /// when StoreKit's signed transaction proves it or it is linked to the token sent with it.
    func testAClientKeyCannotAskWhetherATransactionExists() throws {
        let signed = try transaction("1000", token: token)
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": .string(signed)]).0, 200)
        let eligibility = "/v1/introductory-offers/eligibility"
        let sign = "/v1/promotional-offers/sign"
        for id in ["1000", "4242"] {  // a real id and a guessed one: the same refusal, nothing read
            let (status, body) = request("POST", eligibility, ["productId": "pro.monthly", "transactionId": .string(id)])
            XCTAssertEqual(status, 403, "\(id): \(body)")
            XCTAssertEqual(body["error"]?["code"], "TRANSACTION_NOT_PROVEN")
            XCTAssertNil(body["environment"])
            let signing = request("POST", sign, ["productId": "pro.monthly", "offerId": "comeback", "transactionId": .string(id)])
            XCTAssertEqual(signing.1["error"]?["code"], "TRANSACTION_NOT_PROVEN", "\(id)")
            let stranger = request(
                "POST", eligibility,
                ["productId": "pro.monthly", "transactionId": .string(id), "appAccountToken": "99999999-2222-4333-8444-555555555555"])
            XCTAssertEqual(stranger.1["error"]?["code"], "TRANSACTION_NOT_PROVEN", "another customer's token proves nothing")
        }
        // Linked to the token sent with it: the customer's own transaction.
        let linked = request("POST", eligibility, ["productId": "pro.monthly", "transactionId": "1000", "appAccountToken": .string(token)])
        XCTAssertEqual(linked.0, 200, "\(linked.1)")
        XCTAssertEqual(linked.1["reason"], "ALREADY_SUBSCRIBED_TO_GROUP")
        // Proven by StoreKit's signed transaction (verified against the configured root).
        let proven = request("POST", eligibility, ["productId": "pro.monthly", "signedTransaction": .string(signed)])
        XCTAssertEqual(proven.0, 200, "\(proven.1)")
        XCTAssertEqual(proven.1["reason"], "ALREADY_SUBSCRIBED_TO_GROUP")
        XCTAssertNotNil(proven.1["jws"], "the proven transaction is the JWS's transactionId")
        XCTAssertEqual(
            request("POST", sign, ["productId": "pro.monthly", "offerId": "loyal", "signedTransaction": .string(signed)]).0, 200,
            "a proven current subscriber gets the offer for current subscribers")
        let mismatch = request(
            "POST", eligibility, ["productId": "pro.monthly", "transactionId": "4242", "signedTransaction": .string(signed)])
        XCTAssertEqual(mismatch.0, 400, "the id must be the signed transaction's")
        var forged = Array(signed.utf8)
        forged[forged.count - 5] = forged[forged.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let refused = request(
            "POST", eligibility, ["productId": "pro.monthly", "signedTransaction": .string(String(decoding: forged, as: UTF8.self))])
        XCTAssertEqual(refused.0, 422, "a forged proof is refused")
        // A server key may still look up a bare id.
        let server = request("POST", eligibility, key: "server_key_0123456789", ["productId": "pro.monthly", "transactionId": "1000"])
        XCTAssertEqual(server.1["reason"], "ALREADY_SUBSCRIBED_TO_GROUP")
    }

    func testLinkingAndConflicts() throws {
        let other = "11111111-2222-4333-8444-555555555555"
        let untokened = try transaction("2000", original: "2000")
        XCTAssertEqual(
            request("POST", "/v1/transactions", ["signedTransaction": .string(untokened), "appAccountToken": .string(token)]).0, 200)
        XCTAssertNotNil(subscriber(token)?["subscriptions"]?["pro.monthly"])
        let (conflict, body) = request(
            "POST", "/v1/transactions", ["signedTransaction": .string(untokened), "appAccountToken": .string(other)])
        XCTAssertEqual(conflict, 409)
        XCTAssertEqual(body["error"]?["code"], "CONFLICT")
        XCTAssertNil(subscriber(other), "a conflict changes nothing")
    }

    func testRequestErrors() throws {
        XCTAssertEqual(request("GET", "/v1/subscribers/\(token)").0, 404)
        XCTAssertEqual(request("GET", "/v1/subscribers/not-a-uuid").0, 400)
        XCTAssertEqual(request("GET", "/v1/subscribers/\(token)", key: nil).0, 401)
        XCTAssertEqual(request("GET", "/v1/subscribers/\(token)?environment=Production").0, 400)
        XCTAssertEqual(request("GET", "/v1/notifications", key: "client_key_0123456789").0, 403)
        XCTAssertEqual(request("GET", "/v1/subscribers/\(token)?at=0").0, 403, "time travel is for server keys")
        XCTAssertEqual(request("GET", "/v1/subscribers/\(token)?at=yesterday", key: "server_key_0123456789").0, 400)
        XCTAssertEqual(request("GET", "/v1/notifications?limit=0", key: "server_key_0123456789").0, 400)
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": "x.y.z"]).0, 422)
        XCTAssertEqual(request("POST", "/v1/transactions", ["signedTransaction": 5]).0, 400)
        let stranger = try notification(
            "n-9", type: "TEST", subtype: nil, transaction: try transaction("1"), renewal: nil,
            signed: base + 1, bundle: "com.other.app")
        let (status, body) = request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": .string(stranger)])
        XCTAssertEqual(status, 422)
        XCTAssertEqual(body["error"]?["status"], "INVALID_APP_IDENTIFIER")
        XCTAssertEqual(request("POST", "/v1/notifications/apple", key: nil, ["signedPayload": "garbage"]).0, 422)
        XCTAssertEqual(request("GET", "/readyz", key: nil).0, 200)
    }
}

private extension JSONObject {
    func replacing(_ key: String, _ value: JSONValue) -> JSONObject {
        var copy = self
        copy[key] = value
        return copy
    }
}
