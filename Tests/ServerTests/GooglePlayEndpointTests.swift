import Crypto
import Foundation
import HTTP
import JSON
import TestSupport
import XCTest

/// Google Play over HTTP against the local Google stand-in: purchases posted by the app and
/// acknowledged, real-time developer notifications pushed with Pub/Sub OIDC tokens, the state
/// mapping, upgrades, voided purchases, license testers, offer selection, and one subscriber
/// across both stores.
final class GooglePlayEndpointTests: XCTestCase {
    private var google: GooglePlayStandIn!
    private var fixture: SupportFixture!
    private let audience = "https://entitle.example.com/v1/notifications/google"
    private let pushAccount = "pubsub-push@example-project.iam.gserviceaccount.com"
    private let hour: Int64 = 3_600_000

    override func setUpWithError() throws {
        google = try GooglePlayStandIn(packageName: "com.example.android")
        let play = """
            , "googlePlay": {"packageName": "com.example.android", "serviceAccountKeyFile": "\(google.serviceAccountFile.path)",
              "pubsub": {"audience": "\(audience)", "serviceAccountEmail": "\(pushAccount)"}, "jwks": "\(google.jwksFile.path)",
              "apiURL": "\(google.baseURL)", "tokenURL": "\(google.tokenURL)", "acknowledgementRetrySeconds": 0.2},
              "refunds": {"customerConsent": true, "retrySeconds": 0.2,
                          "rules": [{"name": "play subscriptions", "when": {"store": "play_store", "productType": "subscription"},
                                     "prefer": "DECLINE"}]}
            """
        fixture = try SupportFixture(app: play, environments: #"["Production", "Sandbox"]"#, googlePlayProducts: true)
    }

    override func tearDownWithError() throws {
        fixture = nil
        google = nil
    }

    private var token: String { fixture.token }
    private var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    private func iso(_ milliseconds: Int64) -> JSONValue {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return .string(formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)))
    }

    /// A subscription as `subscriptionsv2.get` answers it.
    private func subscription(
        state: String = "SUBSCRIPTION_STATE_ACTIVE", product: String = "pro", plan: String = "monthly", expires: Int64? = nil,
        renews: Bool = true, linked: String? = nil, tester: Bool = false, account: String? = nil
    ) -> JSONObject {
        var purchase: JSONObject = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "startTime": iso(now - 2 * hour), "subscriptionState": .string(state),
            "latestOrderId": "GPA.3345-1234-5678-00001", "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
            "externalAccountIdentifiers": .object(["obfuscatedExternalAccountId": .string(account ?? token)]),
            "lineItems": .array([
                .object([
                    "productId": .string(product), "expiryTime": iso(expires ?? now + 24 * hour),
                    "autoRenewingPlan": .object(["autoRenewEnabled": .bool(renews)]),
                    "offerDetails": .object(["basePlanId": .string(plan)]),
                ])
            ]),
        ]
        if let linked { purchase["linkedPurchaseToken"] = .string(linked) }
        if tester { purchase["testPurchase"] = .object([:]) }
        return purchase
    }

    /// A one-time product as `productsv2.getproductpurchasev2` answers it.
    private func oneTimeProduct(
        product: String = "extras", state: String = "PURCHASED", quantity: Int64 = 1, refundable: Int64? = nil,
        acknowledged: Bool = false
    ) -> JSONObject {
        [
            "kind": "androidpublisher#productPurchaseV2", "orderId": "GPA.9", "purchaseCompletionTime": iso(now - hour),
            "acknowledgementState": .string(acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING"),
            "obfuscatedExternalAccountId": .string(token), "purchaseStateContext": .object(["purchaseState": .string(state)]),
            "productLineItem": .array([
                .object([
                    "productId": .string(product),
                    "productOfferDetails": .object([
                        "purchaseOptionId": "single", "quantity": .int(quantity), "refundableQuantity": .int(refundable ?? quantity),
                        "consumptionState": "CONSUMPTION_STATE_YET_TO_BE_CONSUMED",
                    ]),
                ])
            ]),
        ]
    }

    private func post(_ purchaseToken: String, product: String = "pro", key: String = SupportFixture.client) throws -> SupportFixture.Reply
    {
        try fixture.call(
            "POST", "/v1/purchases/google", key: key, body: ["productId": .string(product), "purchaseToken": .string(purchaseToken)])
    }

    private func push(
        _ notification: JSONObject, messageId: String, authorization: String? = nil
    ) throws -> SupportFixture.Reply {
        var body = notification
        body["version"] = "1.0"
        body["packageName"] = "com.example.android"
        body["eventTimeMillis"] = .string(String(now))
        let bearer = try authorization ?? google.pushToken(audience: audience, email: pushAccount)
        return try fixture.call(
            "POST", "/v1/notifications/google", key: nil, body: GooglePlayStandIn.pushBody(body, messageId: messageId),
            headers: ["Authorization: Bearer \(bearer)"])
    }

    private func subscriptionNotification(_ purchaseToken: String, type: Int64 = 4, product: String = "pro") -> JSONObject {
        [
            "subscriptionNotification": .object([
                "version": "1.0", "notificationType": .int(type), "purchaseToken": .string(purchaseToken),
                "subscriptionId": .string(product),
            ])
        ]
    }

    private func subscriber() throws -> JSONValue? {
        let reply = try fixture.call("GET", "/v1/subscribers/\(token)", key: SupportFixture.client)
        return reply.status == 200 ? reply.json["subscriber"] : nil
    }

    // MARK: - Purchases

    func testAPostedPurchaseIsReadAcknowledgedAndGrantsTheEntitlement() throws {
        google.setSubscription("g-1", subscription())
        let reply = try post("g-1")
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(reply.json["purchase"]?["state"], "ACTIVE")
        XCTAssertEqual(reply.json["purchase"]?["store"], "play_store")
        XCTAssertEqual(reply.json["purchase"]?["productId"], "pro.monthly", "the catalog product it is")
        XCTAssertEqual(reply.json["purchase"]?["acknowledged"], true)
        XCTAssertEqual(google.acknowledgements, ["g-1"], "acknowledged once (Google refunds after three days otherwise)")
        let pro = try XCTUnwrap(reply.json["subscriber"]?["entitlements"]?["pro"])
        XCTAssertEqual(pro["isActive"], true)
        XCTAssertEqual(pro["store"], "play_store")
        XCTAssertEqual(pro["purchaseToken"], "g-1")
        XCTAssertEqual(pro["environment"], "Production")
        XCTAssertEqual(try subscriber()?["subscriptions"]?["googlePlay:pro:monthly"]?["state"], "ACTIVE")
        _ = try post("g-1")
        XCTAssertEqual(google.acknowledgements, ["g-1"], "an acknowledged purchase is not acknowledged again")
        XCTAssertEqual(try post("unknown").status, 404)
        XCTAssertEqual(try post("g-1", product: "not-in-catalog").json["error"]?["code"], "UNKNOWN_PRODUCT")
    }

    /// Google's answers carry the plan's price (`autoRenewingPlan.recurringPrice`): a Play
    /// subscription counts in the business figures, period by period as its reads show them (a
    /// free trial, then the order that renewed it), under the catalog's product.
    func testAPlaySubscriptionCountsInTheBusinessFigures() throws {
        let start = now - 8 * 24 * hour
        let trialEnd = now - hour
        func read(order: String, phase: String, expires: Int64) -> JSONObject {
            var purchase = subscription(expires: expires)
            purchase["startTime"] = iso(start)
            var item = purchase["lineItems"]!.arrayValue![0].objectValue!
            item["latestSuccessfulOrderId"] = .string(order)
            item["offerPhase"] = .object([phase: .object([:])])
            item["autoRenewingPlan"] = .object([
                "autoRenewEnabled": true, "recurringPrice": .object(["currencyCode": "EUR", "units": "4", "nanos": 990_000_000]),
            ])
            purchase["lineItems"] = .array([.object(item)])
            return purchase
        }
        func summary(at: Int64, _ filter: String = "store=play_store") throws -> JSONValue {
            let reply = try fixture.call("GET", "/v1/metrics/summary?at=\(at)&\(filter)", key: SupportFixture.server)
            XCTAssertEqual(reply.status, 200, reply.text)
            return reply.json["summary"] ?? .null
        }
        google.setSubscription("g-1", read(order: "GPA.1-0", phase: "freeTrial", expires: trialEnd))
        XCTAssertEqual(try post("g-1").status, 200)
        XCTAssertEqual(try summary(at: now - 2 * hour)["activeTrials"], 1)
        XCTAssertEqual(try summary(at: now - 2 * hour)["activeSubscriptions"], 0)

        google.setSubscription("g-1", read(order: "GPA.1-1", phase: "basePrice", expires: trialEnd + 30 * 24 * hour))
        XCTAssertEqual(try push(subscriptionNotification("g-1", type: 2), messageId: "renewed-1").status, 200)
        let renewed = try summary(at: now)
        XCTAssertEqual(renewed["activeSubscriptions"], 1)
        XCTAssertEqual(renewed["activeTrials"], 0)
        XCTAssertEqual(renewed["mrr"], .object(["EUR": .double(4.99)]), "a 30-day period is a month")
        XCTAssertEqual(try summary(at: now, "productId=pro.monthly")["mrr"], .object(["EUR": .double(4.99)]), "as the catalog names it")
        XCTAssertEqual(try summary(at: now, "productId=pro.yearly")["activeSubscriptions"], 0)
        XCTAssertEqual(try summary(at: now, "store=app_store")["activeSubscriptions"], 0)
        let today = (now / (24 * hour)) * 24 * hour
        let conversions = try fixture.call(
            "GET", "/v1/metrics/trial-conversions?from=\(today - 24 * hour)&to=\(today + 24 * hour)&interval=day&store=play_store",
            key: SupportFixture.server)
        XCTAssertEqual(
            conversions.json["buckets"]?.arrayValue?.compactMap { $0["value"]?.int64Value }.reduce(0, +), 1, conversions.text)
        let shown = try XCTUnwrap(try subscriber()?["subscriptions"]?["googlePlay:pro:monthly"])
        XCTAssertEqual(shown["recurringPrice"], 4990)
        XCTAssertEqual(shown["periods"]?.arrayValue?.map { $0["orderId"] }, ["GPA.1-0", "GPA.1-1"])

        let rebuild = try runProcess(
            entitleExecutable.path, ["metrics", "rebuild", "--config", fixture.folder.appendingPathComponent("entitle.json").path])
        XCTAssertEqual(rebuild.status, 0, rebuild.stderr)
        let rebuilt = try summary(at: now)
        XCTAssertEqual(rebuilt["activeSubscriptions"], 1, "a rebuild counts the Play subscription the same")
        XCTAssertEqual(rebuilt["mrr"], .object(["EUR": .double(4.99)]))
    }

    /// A failed acknowledgement is never swallowed: it stays queued with the purchase, is logged
    /// and counted, and is tried again (here after 0.2 s, then 0.4 s) until Google confirms.
    func testAFailedAcknowledgementIsRetriedUntilGoogleConfirms() throws {
        google.refuseAcknowledgements(2)
        google.setSubscription("g-7", subscription())
        let reply = try post("g-7")
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(reply.json["purchase"]?["acknowledged"], false, "Google refused the first attempt")
        XCTAssertEqual(reply.json["purchase"]?["state"], "ACTIVE", "the purchase counts all the same")
        try waitUntil(timeout: 15, "Google confirms a retry") { self.google.acknowledgements == ["g-7"] }
        try waitUntil(timeout: 5, "the purchase is stored acknowledged") {
            try self.subscriber()?["subscriptions"]?["googlePlay:pro:monthly"]?["acknowledged"] == true
        }
        let metrics = try fixture.call("GET", "/metrics", key: nil).text
        XCTAssertTrue(
            metrics.contains(
                #"entitle_background_errors_total{app="app",task="google_acknowledgements",code="GOOGLE_PLAY_UNAVAILABLE"} 2"#),
            metrics)
        let ready = try fixture.call("GET", "/readyz", key: nil)
        XCTAssertEqual(ready.json["checks"]?["googleAcknowledgements"]?["app"], "ok", ready.text)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(google.acknowledgements, ["g-7"], "acknowledged once, and then no more attempts")
    }

    /// A purchase without an account id is linked by the first post; another token cannot take it.
    func testThePurchaseStaysWithTheCustomerWhoLinkedItFirst() throws {
        var anonymous = subscription()
        anonymous["externalAccountIdentifiers"] = nil
        google.setSubscription("g-1", anonymous)
        XCTAssertEqual(try post("g-1").status, 400, "no account id and no appAccountToken: whose is it?")
        func claim(_ customer: String) throws -> SupportFixture.Reply {
            try fixture.call(
                "POST", "/v1/purchases/google", key: SupportFixture.client,
                body: ["productId": "pro", "purchaseToken": "g-1", "appAccountToken": .string(customer)])
        }
        XCTAssertEqual(try claim(token).status, 200)
        let other = try claim("0a5b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d")
        XCTAssertEqual(other.status, 409, other.text)
        XCTAssertEqual(other.json["error"]?["code"], "CONFLICT")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["purchaseToken"], "g-1", "still the first customer's")
    }

    func testGoogleStatesMapOntoEntitles() throws {
        let cases: [(String, Bool, String, Bool)] = [
            ("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", true, "GRACE_PERIOD", true),
            ("SUBSCRIPTION_STATE_ON_HOLD", true, "BILLING_RETRY", false),
            ("SUBSCRIPTION_STATE_PAUSED", true, "PAUSED", false),
            ("SUBSCRIPTION_STATE_CANCELED", false, "ACTIVE", true),
            ("SUBSCRIPTION_STATE_EXPIRED", false, "EXPIRED", false),
        ]
        for (index, (googleState, renews, expected, active)) in cases.enumerated() {
            google.setSubscription(
                "g-\(index)", subscription(state: googleState, expires: googleState.hasSuffix("EXPIRED") ? now - hour : nil, renews: renews)
            )
            let reply = try post("g-\(index)")
            XCTAssertEqual(reply.status, 200, reply.text)
            XCTAssertEqual(reply.json["purchase"]?["state"]?.stringValue, expected, googleState)
            XCTAssertEqual(reply.json["purchase"]?["isActive"]?.boolValue, active, googleState)
            if googleState.hasSuffix("CANCELED") { XCTAssertEqual(reply.json["purchase"]?["willRenew"], false, "active until expiry") }
        }
    }

    func testAnUpgradeSupersedesTheOlderPurchase() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        google.setSubscription("g-2", subscription(plan: "yearly", expires: now + 365 * 24 * hour, linked: "g-1"))
        XCTAssertEqual(try push(subscriptionNotification("g-2", type: 4), messageId: "m-upgrade").status, 200)
        let subscriptions = try XCTUnwrap(try subscriber()?["subscriptions"]?.objectValue)
        XCTAssertNil(subscriptions["googlePlay:pro:monthly"], "the replaced purchase is gone from the view")
        XCTAssertEqual(subscriptions["googlePlay:pro:yearly"]?["linkedPurchaseToken"], "g-1")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["productId"], "pro.yearly")
    }

    func testAVoidedPurchaseRevokes() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        let voided: JSONObject = [
            "voidedPurchaseNotification": .object([
                "purchaseToken": "g-1", "orderId": "GPA.3345-1234-5678-00001", "productType": 1, "refundType": 1,
            ])
        ]
        let reply = try push(voided, messageId: "m-void")
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["state"], "REVOKED")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["isActive"], false)
    }

    /// SUBSCRIPTION_REVOKED (12): Google's re-read answers EXPIRED; the notification type says it
    /// was revoked, so the entitlement is REVOKED and the event a REFUND, not an EXPIRATION.
    func testARevokedSubscriptionIsRevokedAndRefundedNotExpired() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        google.setSubscription("g-1", subscription(state: "SUBSCRIPTION_STATE_EXPIRED", expires: now - hour, renews: false))
        XCTAssertEqual(try push(subscriptionNotification("g-1", type: 12), messageId: "m-revoked").json["status"], "applied")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["state"], "REVOKED")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["isActive"], false)
        let events = try fixture.call("GET", "/v1/events", key: SupportFixture.server).json["events"]?.arrayValue ?? []
        XCTAssertEqual(events.compactMap { $0["type"]?.stringValue }, ["INITIAL_PURCHASE", "REFUND"])
    }

    /// Google's answers of today: the order is the line item's `latestSuccessfulOrderId` (the
    /// purchase-wide `latestOrderId` is deprecated and may be absent), and a notification without
    /// the deprecated `subscriptionId` is handled from the re-read purchase.
    func testTodaysSubscriptionAnswersAndNotifications() throws {
        var purchase = subscription()
        purchase["latestOrderId"] = nil
        var item = try XCTUnwrap(purchase["lineItems"]?.arrayValue?.first?.objectValue)
        item["latestSuccessfulOrderId"] = "GPA.3345-1234-5678-00002"
        purchase["lineItems"] = .array([.object(item)])
        google.setSubscription("g-1", purchase)
        let notification: JSONObject = [
            "subscriptionNotification": .object(["version": "1.0", "notificationType": 4, "purchaseToken": "g-1"])
        ]
        XCTAssertEqual(try push(notification, messageId: "m-no-product").json["status"], "applied")
        let subscriptions = try XCTUnwrap(try subscriber()?["subscriptions"]?.objectValue)
        XCTAssertEqual(subscriptions["googlePlay:pro:monthly"]?["orderId"], "GPA.3345-1234-5678-00002")
    }

    /// Every developer notification is stored and listed under Google's name for its type — each
    /// subscription type, a number Google adds later, the one-time and voided kinds, a test and a
    /// kind Entitle does not read — in the notifications list and in the customer's history.
    func testEveryNotificationTypeIsStoredAndListed() throws {
        google.setSubscription("g-all", subscription())
        XCTAssertEqual(try post("g-all").status, 200)
        // Google's names (Real-time developer notifications reference), and a number it may add.
        let names: [Int64: String] = [
            1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
            5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED",
            8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED",
            11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 13: "SUBSCRIPTION_EXPIRED", 17: "SUBSCRIPTION_ITEMS_CHANGED",
            18: "SUBSCRIPTION_CANCELLATION_SCHEDULED", 19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
            20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
            99: "SUBSCRIPTION_NOTIFICATION_TYPE_99",
        ]
        var expected: [String] = []
        for (type, name) in names.sorted(by: { $0.key < $1.key }) {
            let reply = try push(subscriptionNotification("g-all", type: type), messageId: "m-type-\(type)")
            XCTAssertEqual(reply.status, 200, "type \(type): \(reply.text)")
            expected.append(name)
        }
        let others: [(JSONObject, String)] = [
            (["testNotification": .object(["version": "1.0"])], "TEST_NOTIFICATION"),
            (
                ["futureKindNotification": .object(["version": "1.0"])],
                "futureKindNotification"
            ),
            (
                ["oneTimeProductNotification": .object(["notificationType": 1, "purchaseToken": "unknown", "sku": "coins"])],
                "ONE_TIME_PRODUCT_PURCHASED"
            ),
        ]
        for (index, (notification, name)) in others.enumerated() {
            XCTAssertEqual(try push(notification, messageId: "m-other-\(index)").status, 200, name)
            expected.append(name)
        }
        let listed =
            try fixture.call("GET", "/v1/notifications?limit=100", key: SupportFixture.server).json["notifications"]?.arrayValue ?? []
        let play = listed.filter { $0["store"] == "play_store" }
        XCTAssertEqual(Set(play.compactMap { $0["notificationType"]?.stringValue }), Set(expected), "\(listed)")
        XCTAssertEqual(play.count, expected.count, "each stored once")
        XCTAssertEqual(play.first { $0["notificationType"] == "SUBSCRIPTION_RENEWED" }?["purchaseToken"], "g-all")
        XCTAssertEqual(try push(subscriptionNotification("g-all", type: 2), messageId: "m-type-2").json["status"], "duplicate")

        let history = try fixture.call("GET", "/v1/subscribers/\(token)/history").json["history"]?.arrayValue ?? []
        let notified = history.filter { $0["kind"] == "notification" && $0["store"] == "play_store" }
        XCTAssertEqual(notified.count, 18, "the customer's purchase's own notifications, each subscription type")
        let renewed = try XCTUnwrap(notified.first { $0["notificationType"] == "SUBSCRIPTION_RENEWED" })
        XCTAssertEqual(renewed["payload"]?["subscriptionNotification"]?["notificationType"], 2, "the notification as Google sent it")
        XCTAssertEqual(renewed["purchaseToken"], "g-all")
    }

    /// A redelivered Pub/Sub message is answered from what is stored: Google is not asked again.
    func testARedeliveredMessageDoesNotAskGoogleAgain() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try push(subscriptionNotification("g-1", type: 2), messageId: "m-once").json["status"], "applied")
        let reads = google.requests.filter { $0.contains("/purchases/subscriptionsv2/tokens/g-1") }.count
        XCTAssertEqual(reads, 1, "\(google.requests)")
        XCTAssertEqual(try push(subscriptionNotification("g-1", type: 2), messageId: "m-once").json["status"], "duplicate")
        XCTAssertEqual(google.requests.filter { $0.contains("/purchases/subscriptionsv2/tokens/g-1") }.count, reads)
    }

    /// A refund whose notification was missed: the voided-purchases list marks it.
    func testTheVoidedPurchasesListRevokesWhatItNames() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        google.addVoided("g-1", at: now - 1_000, orderId: "GPA.3345-1234-5678-00001")
        google.addVoided("never-seen", at: now - 1_000)
        let reply = try fixture.call("POST", "/v1/purchases/google/voided", key: SupportFixture.server)
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(reply.json["voidedPurchases"]?["voided"], 1)
        XCTAssertEqual(reply.json["voidedPurchases"]?["notStored"], 1)
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["state"], "REVOKED")
        XCTAssertEqual(
            try fixture.call("POST", "/v1/purchases/google/voided", key: SupportFixture.server).json["voidedPurchases"]?["voided"], 0)
        XCTAssertEqual(try fixture.call("POST", "/v1/purchases/google/voided", key: SupportFixture.client).status, 403)
    }

    func testAOneTimeProductIsAcknowledgedAndListed() throws {
        google.setProduct("c-1", oneTimeProduct())
        let reply = try post("c-1", product: "extras")
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(google.acknowledgements, ["c-1"])
        XCTAssertEqual(reply.json["subscriber"]?["entitlements"]?["extras"]?["isActive"], true)
        XCTAssertEqual(reply.json["subscriber"]?["entitlements"]?["extras"]?["store"], "play_store")
        let listed = try subscriber()?["nonSubscriptions"]?.arrayValue?.first { $0["store"] == "play_store" }
        XCTAssertEqual(listed?["purchaseToken"], "c-1")
    }

    func testALicenseTestersPurchaseIsSandbox() throws {
        google.setSubscription("g-1", subscription(tester: true))
        let reply = try post("g-1")
        XCTAssertEqual(reply.json["purchase"]?["environment"], "Sandbox")
        XCTAssertEqual(try subscriber()?["subscriptions"]?["googlePlay:pro:monthly"]?["isSandbox"], true)
    }

    // MARK: - Pushes

    func testPushesAreTrustedOnlyWithGooglesToken() throws {
        google.setSubscription("g-1", subscription())
        let forger = try RSAKeyForTests.make()
        let refused = [
            try google.pushToken(audience: audience, email: pushAccount, forgedWith: forger),
            try google.pushToken(audience: audience, email: pushAccount, expiresIn: -10),
            try google.pushToken(audience: "https://elsewhere.example.com/", email: pushAccount),
            try google.pushToken(audience: audience, email: "attacker@example.com"),
        ]
        for (index, bearer) in refused.enumerated() {
            let reply = try push(subscriptionNotification("g-1"), messageId: "m-\(index)", authorization: bearer)
            XCTAssertEqual(reply.status, 401, "token \(index): \(reply.text)")
        }
        let unauthenticated = try fixture.call(
            "POST", "/v1/notifications/google", key: nil,
            body: GooglePlayStandIn.pushBody(subscriptionNotification("g-1"), messageId: "m-x"))
        XCTAssertEqual(unauthenticated.status, 401)
        XCTAssertNil(try subscriber(), "nothing stored")
        XCTAssertFalse(google.requests.contains { $0.contains("subscriptionsv2") }, "Google was not even asked")

        XCTAssertEqual(try push(subscriptionNotification("g-1"), messageId: "m-ok").json["status"], "applied")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["isActive"], true)
        XCTAssertEqual(try push(subscriptionNotification("g-1"), messageId: "m-ok").json["status"], "duplicate")
        XCTAssertEqual(try push(["testNotification": .object(["version": "1.0"])], messageId: "m-test").json["status"], "test")
        let unknownKind = try push(["somethingNew": .object(["version": "1.0"])], messageId: "m-new")
        XCTAssertEqual(unknownKind.status, 200, "answered, so Pub/Sub does not redeliver it forever")
        XCTAssertEqual(unknownKind.json["status"], "ignored")
    }

    func testGoogleFailingIsA503SoPubSubRedelivers() throws {
        google.setSubscription("g-1", subscription())
        google.script(.json(503, Array(#"{"error":{"code":503,"message":"Backend Error"}}"#.utf8)))
        let failed = try push(subscriptionNotification("g-1"), messageId: "m-1")
        XCTAssertEqual(failed.status, 503, failed.text)
        XCTAssertEqual(failed.json["error"]?["code"], "GOOGLE_PLAY_UNAVAILABLE")
        XCTAssertNotNil(failed.headers["retry-after"])
        XCTAssertNil(try subscriber(), "nothing half-stored")
        XCTAssertEqual(try push(subscriptionNotification("g-1"), messageId: "m-1").json["status"], "applied", "the redelivery applies")
    }

    /// Play facts cause events like App Store facts: a purchase, then a renewal read after a push.
    func testPlayFactsCauseEvents() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        google.setSubscription("g-1", subscription(expires: now + 31 * 24 * hour))
        XCTAssertEqual(try push(subscriptionNotification("g-1", type: 2), messageId: "m-renewed").json["status"], "applied")
        let events = try fixture.call("GET", "/v1/events", key: SupportFixture.server).json["events"]?.arrayValue ?? []
        XCTAssertEqual(events.compactMap { $0["type"]?.stringValue }, ["INITIAL_PURCHASE", "RENEWAL"])
        let first = try XCTUnwrap(events.first)
        XCTAssertEqual(first["store"], "play_store")
        XCTAssertEqual(first["purchaseToken"], "g-1")
        XCTAssertEqual(first["appAccountToken"]?.stringValue, token)
        XCTAssertEqual(first["entitlements"]?.arrayValue?.compactMap(\.stringValue), ["pro"])
        XCTAssertEqual(first["source"], "clientPost")
        XCTAssertEqual(first["subscriber"]?["entitlements"]?["pro"]?["store"], "play_store", "the subscriber after the purchase")
        XCTAssertEqual(events.last?["source"], "googlePlay")
        XCTAssertNotNil(events.last?["previousExpiresDate"])
    }

    /// subscriptionsv2 as Google answers in 2026: the offer phase gives the period type, a pending
    /// plan change is the next product, the order retried in grace is shown, a price step-up
    /// waiting for consent is the event PRICE_INCREASE with its deadline, and what the purchase
    /// replaced stays on it — each as Google sent it.
    func testTodaysSubscriptionDetailsAreShownAndEvented() throws {
        var trial = subscription()
        var item = try XCTUnwrap(trial["lineItems"]?.arrayValue?.first?.objectValue)
        item["offerPhase"] = .object(["freeTrial": .object([:])])
        item["itemReplacement"] = .object(["productId": "pro", "basePlanId": "weekly", "replacementMode": "WITH_TIME_PRORATION"])
        trial["lineItems"] = .array([.object(item)])
        google.setSubscription("g-1", trial)
        XCTAssertEqual(try post("g-1").status, 200)
        var shown = try XCTUnwrap(try subscriber()?["subscriptions"]?["googlePlay:pro:monthly"])
        XCTAssertEqual(shown["periodType"], "TRIAL")
        XCTAssertEqual(shown["offerPhase"], "freeTrial")
        XCTAssertEqual(shown["itemReplacement"]?["basePlanId"], "weekly", "what it replaced, as Google said")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["periodType"], "TRIAL")

        var later = subscription(state: "SUBSCRIPTION_STATE_IN_GRACE_PERIOD")
        let deadline = now + 20 * 24 * hour
        var plan = try XCTUnwrap(later["lineItems"]?.arrayValue?.first?.objectValue)
        plan["offerPhase"] = .object(["basePrice": .object([:])])
        plan["deferredItemReplacement"] = .object(["productId": "pro.annual"])
        plan["autoRenewingPlan"] = .object([
            "autoRenewEnabled": true,
            "priceStepUpConsentDetails": .object([
                "state": "PENDING", "consentDeadlineTime": iso(deadline),
                "newPrice": .object(["currencyCode": "EUR", "units": "12", "nanos": 990_000_000]),
            ]),
        ])
        later["lineItems"] = .array([.object(plan)])
        later["inGracePeriodStateContext"] = .object(["pendingOrderId": "GPA.3345-1234-5678-00001..1"])
        google.setSubscription("g-1", later)
        XCTAssertEqual(try push(subscriptionNotification("g-1", type: 22), messageId: "m-step-up").json["status"], "applied")
        shown = try XCTUnwrap(try subscriber()?["subscriptions"]?["googlePlay:pro:monthly"])
        XCTAssertEqual(shown["state"], "GRACE_PERIOD")
        XCTAssertEqual(shown["periodType"], "NORMAL")
        XCTAssertEqual(shown["nextProductId"], "pro.annual")
        XCTAssertEqual(shown["pendingOrderId"], "GPA.3345-1234-5678-00001..1")
        XCTAssertEqual(shown["priceStepUpConsentDetails"]?["state"], "PENDING")
        XCTAssertEqual(shown["priceStepUpConsentDetails"]?["newPrice"]?["units"], "12")

        let events = try fixture.call("GET", "/v1/events", key: SupportFixture.server).json["events"]?.arrayValue ?? []
        let increase = try XCTUnwrap(events.first { $0["type"] == "PRICE_INCREASE" }, "\(events)")
        XCTAssertEqual(increase["priceIncreaseKind"], "PRICE_STEP_UP")
        XCTAssertEqual(increase["consentDeadlineMs"], .int(deadline))
        XCTAssertEqual(increase["newPrice"]?["currencyCode"], "EUR")
        XCTAssertEqual(increase["notificationType"], "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED")
        let change = try XCTUnwrap(events.first { $0["type"] == "PRODUCT_CHANGE" }, "\(events)")
        XCTAssertEqual(change["newProductId"], "pro.annual")
        XCTAssertEqual(change["takesEffect"], "AT_RENEWAL")
        XCTAssert(events.contains { $0["type"] == "BILLING_ISSUE" })
        XCTAssertEqual(try push(subscriptionNotification("g-1", type: 22), messageId: "m-step-up-2").json["status"], "applied")
        let again = try fixture.call("GET", "/v1/events", key: SupportFixture.server).json["events"]?.arrayValue ?? []
        XCTAssertEqual(again.filter { $0["type"] == "PRICE_INCREASE" }.count, 1, "the same pending increase is told once")
    }

    /// A one-time product read through productsv2 shows its purchase option and units; a
    /// quantity-based partial refund (voided, `refundType` 2) leaves the purchase with fewer
    /// units and is a REFUND of those units — not a revocation of the whole purchase.
    func testAOneTimeProductsUnitsAndAPartialRefund() throws {
        google.setProduct("c-3", oneTimeProduct(quantity: 3))
        XCTAssertEqual(try post("c-3", product: "extras").status, 200)
        var listed = try XCTUnwrap(try subscriber()?["nonSubscriptions"]?.arrayValue?.first { $0["purchaseToken"] == "c-3" })
        XCTAssertEqual(listed["purchaseOptionId"], "single")
        XCTAssertEqual(listed["quantity"], 3)
        XCTAssertEqual(listed["entitledQuantity"], 3)
        google.setProduct("c-3", oneTimeProduct(quantity: 3, refundable: 1, acknowledged: true))
        let voided: JSONObject = [
            "voidedPurchaseNotification": .object([
                "purchaseToken": "c-3", "orderId": "GPA.9", "productType": 2, "refundType": 2,
            ])
        ]
        XCTAssertEqual(try push(voided, messageId: "m-partial").json["status"], "applied")
        listed = try XCTUnwrap(try subscriber()?["nonSubscriptions"]?.arrayValue?.first { $0["purchaseToken"] == "c-3" })
        XCTAssertEqual(listed["state"], "ACTIVE", "the units not refunded are still owned")
        XCTAssertEqual(listed["entitledQuantity"], 1)
        XCTAssertNil(listed["revocationDate"])
        XCTAssertEqual(try subscriber()?["entitlements"]?["extras"]?["isActive"], true)
        let events = try fixture.call("GET", "/v1/events", key: SupportFixture.server).json["events"]?.arrayValue ?? []
        let refund = try XCTUnwrap(events.first { $0["type"] == "REFUND" }, "\(events)")
        XCTAssertEqual(refund["refundedQuantity"], 2)
        XCTAssertEqual(refund["remainingQuantity"], 1)

        google.setProduct("c-3", oneTimeProduct(quantity: 3, refundable: 0, acknowledged: true))
        XCTAssertEqual(try push(voided, messageId: "m-partial-2").json["status"], "applied")
        listed = try XCTUnwrap(try subscriber()?["nonSubscriptions"]?.arrayValue?.first { $0["purchaseToken"] == "c-3" })
        XCTAssertEqual(listed["state"], "REVOKED", "every unit refunded")
    }

    /// A one-time product's revenue: `productsv2` carries no price, its order does (the Orders
    /// API's `orders.get`, `total`); a void refunds it whole. Before, one-time products added
    /// nothing to revenue.
    func testAOneTimeProductsRevenueIsItsOrdersTotal() throws {
        google.setProduct("c-1", oneTimeProduct())
        google.setOrder(
            "GPA.9",
            [
                "orderId": "GPA.9", "purchaseToken": "c-1", "state": "PROCESSED",
                "total": .object(["currencyCode": "EUR", "units": "5", "nanos": 490_000_000]),
                "tax": .object(["currencyCode": "EUR", "units": "0", "nanos": 880_000_000]),
            ])
        XCTAssertEqual(try post("c-1", product: "extras").status, 200)
        let midnight = (now - hour) - (now - hour) % (24 * hour)
        func revenue() throws -> [JSONValue] {
            let answer = try fixture.call(
                "GET",
                "/v1/metrics/revenue?environment=Production&from=\(midnight)&to=\(midnight + 24 * hour)&interval=day&productId=extras",
                key: SupportFixture.server)
            XCTAssertEqual(answer.status, 200, answer.text)
            return answer.json["buckets"]?.arrayValue ?? []
        }
        XCTAssertEqual(try revenue().first?["value"], .object(["EUR": .double(5.49)]), "what the buyer paid")
        let voided: JSONObject = [
            "voidedPurchaseNotification": .object(["purchaseToken": "c-1", "orderId": "GPA.9", "productType": 2, "refundType": 1])
        ]
        google.setProduct("c-1", oneTimeProduct(refundable: 0, acknowledged: true))
        XCTAssertEqual(try push(voided, messageId: "m-void-c1").json["status"], "applied")
        let refunds = try fixture.call(
            "GET", "/v1/metrics/refunds?environment=Production&from=\(midnight)&to=\(midnight + 48 * hour)&interval=day",
            key: SupportFixture.server)
        let amounts = (refunds.json["buckets"]?.arrayValue ?? []).compactMap { $0["amounts"]?["EUR"]?.doubleValue }
        XCTAssertEqual(amounts.reduce(0, +), 5.49, accuracy: 0.000_1, refunds.text)
    }

    /// A resubscription bought in the Play Store after the app's lapsed (`outOfAppPurchaseContext`)
    /// names no customer: it is linked to the lapsed purchase's customer and acknowledged with
    /// that customer's `obfuscatedAccountId`, so Google does not refund it after three days.
    func testAnOutOfAppResubscriptionStaysWithItsCustomer() throws {
        google.setSubscription("g-old", subscription(state: "SUBSCRIPTION_STATE_EXPIRED", expires: now - hour, renews: false))
        XCTAssertEqual(try post("g-old").status, 200)
        var resubscribed = subscription()
        resubscribed["externalAccountIdentifiers"] = nil
        resubscribed["outOfAppPurchaseContext"] = .object(["expiredPurchaseToken": "g-old"])
        google.setSubscription("g-new", resubscribed)
        XCTAssertEqual(try push(subscriptionNotification("g-new", type: 4), messageId: "m-out-of-app").json["status"], "applied")
        let shown = try XCTUnwrap(try subscriber()?["subscriptions"]?["googlePlay:pro:monthly"])
        XCTAssertEqual(shown["purchaseToken"], "g-new")
        XCTAssertEqual(shown["state"], "ACTIVE")
        XCTAssertEqual(shown["expiredPurchaseToken"], "g-old")
        XCTAssertEqual(try subscriber()?["entitlements"]?["pro"]?["isActive"], true)
        XCTAssertEqual(
            google.acknowledgementBody("g-new")?["externalAccountIds"]?["obfuscatedAccountId"]?.stringValue, token,
            "acknowledged for the customer")
    }

    /// Google's pending refund review: stored with its 24-hour deadline, answered once
    /// (`orders.reviewrefund`) by the policy with the app's usage events, a redelivery answered
    /// from the database; Google's void is the outcome.
    func testAPendingRefundReviewIsAnsweredOnce() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        let usage = try fixture.call(
            "POST", "/v1/subscribers/\(token)/usage", key: SupportFixture.server,
            body: [
                "purchaseToken": "g-1", "delivered": true,
                "events": .array([.object(["at": iso(now - hour), "description": "watched episode 3"])]),
            ])
        XCTAssertEqual(usage.status, 201, usage.text)
        let review: JSONObject = [
            "pendingRefundReviewNotification": .object([
                "pendingRefundToken": "prt-1", "orderId": "GPA.3345-1234-5678-00001", "refundReason": 3,
                "obfuscatedAccountId": .string(token),
            ])
        ]
        XCTAssertEqual(try push(review, messageId: "m-review").json["status"], "applied")
        try waitUntil(timeout: 10, "Google is answered") { self.google.refundReviewCalls.count == 1 }
        let answer = try XCTUnwrap(google.refundReview("GPA.3345-1234-5678-00001"))
        XCTAssertEqual(answer["pendingRefundToken"], "prt-1")
        XCTAssertEqual(answer["refundPreference"], "DECLINE")
        XCTAssertEqual(answer["sampleContentProvided"], false)
        let event = try XCTUnwrap(answer["consumptionUsageEvents"]?.arrayValue?.first)
        XCTAssertEqual(event["consumptionItemDescription"], "watched episode 3")
        XCTAssertEqual(event["obfuscatedAccountId"]?.stringValue, token)
        XCTAssertEqual(try push(review, messageId: "m-review").json["status"], "duplicate")
        // Another Pub/Sub message about the same review (its own message id) is stored, but the
        // review is the one already answered: it was keyed by the message and answered twice.
        XCTAssertEqual(try push(review, messageId: "m-review-again").json["status"], "applied")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(google.refundReviewCalls.count, 1, "Google keeps the first answer: exactly one is sent")

        let requests = try fixture.call("GET", "/v1/refund-requests", key: SupportFixture.server).json["refundRequests"]?.arrayValue ?? []
        let request = try XCTUnwrap(requests.first)
        XCTAssertEqual(request["store"], "play_store")
        XCTAssertEqual(request["purchaseToken"], "g-1")
        XCTAssertEqual(request["reason"], "3")
        XCTAssertEqual(request["status"], "SENT")
        XCTAssertEqual(request["decidedBy"], "rule play subscriptions")
        XCTAssertEqual(
            request["deadlineMs"]?.int64Value.map { $0 - (request["requestedAtMs"]?.int64Value ?? 0) }, 24 * hour, "Google's 24 hours")
        let listed = try fixture.call("GET", "/v1/notifications", key: SupportFixture.server).json["notifications"]?.arrayValue ?? []
        XCTAssertEqual(listed.first { $0["notificationType"] == "PENDING_REFUND_REVIEW" }?["purchaseToken"], "g-1")

        let voided: JSONObject = ["voidedPurchaseNotification": .object(["purchaseToken": "g-1", "productType": 1, "refundType": 1])]
        XCTAssertEqual(try push(voided, messageId: "m-voided").json["status"], "applied")
        let decided = try fixture.call("GET", "/v1/refund-requests", key: SupportFixture.server).json["refundRequests"]?.arrayValue ?? []
        XCTAssertEqual(decided.first?["outcome"], "REFUNDED")
    }

    /// Support sees Play: the overview counts the customer, search finds them by purchase token
    /// and Google order id, the history shows the purchase as Google answered.
    func testSupportSeesPlayPurchases() throws {
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        let stats = try fixture.call("GET", "/v1/stats").json["stats"]
        XCTAssertEqual(stats?["activeSubscribers"]?["Production"]?["pro"], 1)
        for (query, matchedBy) in [(token, "appAccountToken"), ("g-1", "purchaseToken"), ("GPA.3345-1234-5678-00001", "googleOrderId")] {
            let found = try fixture.call("GET", "/v1/subscribers?query=\(query)").json["matches"]?.arrayValue?.first
            XCTAssertEqual(found?["matchedBy"]?.stringValue, matchedBy)
            XCTAssertEqual(found?["appAccountToken"]?.stringValue, token)
        }
        let history = try fixture.call("GET", "/v1/subscribers/\(token)/history").json["history"]?.arrayValue ?? []
        let purchase = try XCTUnwrap(history.first { $0["kind"] == "playPurchase" })
        XCTAssertEqual(purchase["payload"]?["subscriptionState"], "SUBSCRIPTION_STATE_ACTIVE", "Google's answer as read")
        XCTAssertEqual(purchase["purchaseToken"], "g-1")
        XCTAssert(history.contains { $0["kind"] == "event" && $0["type"] == "INITIAL_PURCHASE" })
    }

    // MARK: - Both stores

    func testOneSubscriberHoldsAnAppStoreAndAPlaySubscription() throws {
        try fixture.seedCustomer()  // an expired App Store subscription of pro.monthly (Sandbox)
        google.setSubscription("g-1", subscription(product: "pro", plan: "yearly", tester: true))
        XCTAssertEqual(try post("g-1").status, 200)
        let view = try XCTUnwrap(try subscriber())
        XCTAssertEqual(view["subscriptions"]?["pro.monthly"]?["store"], "app_store")
        XCTAssertEqual(view["subscriptions"]?["pro.monthly"]?["state"], "EXPIRED")
        XCTAssertEqual(view["subscriptions"]?["googlePlay:pro:yearly"]?["store"], "play_store")
        XCTAssertEqual(view["entitlements"]?["pro"]?["store"], "play_store", "the active grant wins, whichever store")
        XCTAssertEqual(view["entitlements"]?["pro"]?["isActive"], true)
    }

    // MARK: - Offers

    private func select(
        _ offers: [JSONValue], offerId: String? = nil, plan: String = "monthly", customer: String? = nil
    ) throws -> SupportFixture.Reply {
        var body: JSONObject = [
            "productId": "pro", "basePlanId": .string(plan), "offers": .array(offers), "appAccountToken": .string(customer ?? token),
        ]
        if let offerId { body["offerId"] = .string(offerId) }
        return try fixture.call("POST", "/v1/offers/google/select", key: SupportFixture.client, body: body)
    }

    private func offer(_ id: String, tags: [String] = [], free: String? = "P1W", paid: Bool = false) -> JSONValue {
        var phases: [JSONValue] = []
        if paid { phases.append(.object(["billingPeriod": "P1M", "priceAmountMicros": 990_000, "billingCycleCount": 1])) }
        if let free { phases.append(.object(["billingPeriod": .string(free), "priceAmountMicros": 0, "billingCycleCount": 1])) }
        phases.append(.object(["billingPeriod": "P1M", "priceAmountMicros": 4_990_000, "billingCycleCount": 0]))
        return .object(["offerId": .string(id), "tags": .array(tags.map(JSONValue.string)), "phases": .array(phases)])
    }

    func testTheIntroductoryOfferIsChosenByTheRules() throws {
        XCTAssertEqual(try select([offer("week"), offer("month", free: "P1M")]).json["offerId"], "month", "the longest free trial")
        XCTAssertEqual(
            try select([offer("month", free: "P1M"), offer("tagged", tags: ["entitle-intro"], free: nil, paid: true)]).json["offerId"],
            "tagged",
            "the entitle-intro tag wins, even a paid start")
        XCTAssertEqual(try select([offer("ignored", tags: ["entitle-ignore"], free: "P1Y"), offer("week")]).json["offerId"], "week")
        XCTAssertEqual(try select([offer("paid-first", free: "P1M", paid: true)]).json["offerId"], .null, "a paid start needs the tag")
        XCTAssertEqual(
            try select([offer("winback-offer", free: "P3M"), offer("week")]).json["offerId"], "week",
            "an offer a catalog entry lists is not the intro")
        google.setSubscription("g-1", subscription())
        XCTAssertEqual(try post("g-1").status, 200)
        XCTAssertEqual(try select([offer("week")]).json["offerId"], .null, "a customer with Play history pays the base plan")
    }

    func testACatalogOfferIsGivenExactlyOrRefused() throws {
        let listed = [offer("winback-offer", free: "P3M"), offer("week")]
        let notEligible = try select(listed, offerId: "playwinback")
        XCTAssertEqual(notEligible.status, 422)
        XCTAssertEqual(notEligible.json["error"]?["code"], "OFFER_UNAVAILABLE")
        XCTAssertEqual(notEligible.json["error"]?["reason"], "NOT_ELIGIBLE", "lapsed customers only")
        google.setSubscription("g-1", subscription(state: "SUBSCRIPTION_STATE_EXPIRED", expires: now - hour))
        XCTAssertEqual(try post("g-1").status, 200)
        let chosen = try select(listed, offerId: "playwinback")
        XCTAssertEqual(chosen.status, 200, chosen.text)
        XCTAssertEqual(chosen.json["offerId"], "winback-offer")
        XCTAssertEqual(chosen.json["catalogOfferId"], "playwinback")
        XCTAssertEqual(try select([offer("week")], offerId: "playwinback").json["error"]?["reason"], "NOT_OFFERED")
        XCTAssertEqual(try select(listed, offerId: "welcome").json["error"]?["reason"], "NOT_IN_CATALOG")
        XCTAssertEqual(try select(listed, offerId: "playwinback", plan: "yearly").json["error"]?["reason"], "NOT_IN_CATALOG")
    }
}

/// A throwaway RSA key (made by OpenSSL's command line) to forge tokens with.
enum RSAKeyForTests {
    static func make() throws -> RSA.PrivateKey {
        try RSA.PrivateKey(
            pemRepresentation: try GooglePlayStandIn.rsaKey(in: makeTemporaryDirectory("entitle-forger"), name: "forger").privatePEM)
    }
}
