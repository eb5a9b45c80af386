import Entitlements
import Foundation
import GooglePlay
import Instants
import JSON
import Synchronization
import TestSupport
import XCTest

@testable import Application

/// A Google Play purchase posted by the app, without HTTP: read through the Developer API port
/// (a recording fake), stored, acknowledged once, and answered as the subscriber. (Google's
/// purchases are Production's: the app enables it here.)
final class GooglePlayUseCaseTests: XCTestCase {
    func testAPostedPurchaseIsReadStoredAcknowledgedOnceAndEntitles() async throws {
        let google = RecordingGooglePlay()
        let files = try GooglePlayStandIn(packageName: "com.example.android")
        let fixture = try UseCaseFixture(google: google, googleFiles: files)
        let now = fixture.clock.milliseconds
        google.sell("g-1", to: fixture.token, now: now, expires: now + 86_400_000)
        let play = try XCTUnwrap(fixture.services.googlePlay)
        func post() async throws -> JSONValue {
            .object(try await play.post(productId: "pro", purchaseToken: "g-1", appAccountToken: fixture.token, now: fixture.clock.now()))
        }
        let posted = try await post()
        XCTAssertEqual(posted["purchase"]?["state"], "ACTIVE", "\(posted)")
        XCTAssertEqual(posted["subscriber"]?["entitlements"]?["pro"]?["store"], "play_store")
        XCTAssertEqual(google.acknowledged.all, ["g-1"])
        _ = try await post()
        XCTAssertEqual(google.acknowledged.all, ["g-1"], "an acknowledged purchase is not acknowledged again")
        fixture.clock.advance(by: 2 * 86_400)
        XCTAssertNotEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], true, "expired at the server's clock")
    }

    /// Google's voided purchases list marks a stored purchase refunded (its notification was
    /// missed), once; a token never stored is only counted.
    func testTheVoidedPurchasesListMarksStoredPurchasesRefunded() async throws {
        let google = RecordingGooglePlay()
        let files = try GooglePlayStandIn(packageName: "com.example.android")
        let fixture = try UseCaseFixture(google: google, googleFiles: files)
        let now = fixture.clock.milliseconds
        google.sell("g-1", to: fixture.token, now: now, expires: now + 30 * 86_400_000, acknowledged: true)
        let play = try XCTUnwrap(fixture.services.googlePlay)
        _ = try await play.post(productId: "pro", purchaseToken: "g-1", appAccountToken: nil, now: fixture.clock.now())
        XCTAssertEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], true)
        google.voided.withLock {
            $0 = [
                VoidedPurchase(purchaseToken: "g-1", orderId: "GPA.1", voidedTime: now - 60_000, voidedReason: 1),
                VoidedPurchase(purchaseToken: "g-unknown", orderId: "GPA.2", voidedTime: now - 60_000, voidedReason: 1),
            ]
        }
        let marked = JSONValue.object(try await play.syncVoided(since: now - 86_400_000, now: fixture.clock.now()))
        XCTAssertEqual(marked, .object(["voided": 1, "notStored": 1]))
        XCTAssertNotEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], true, "refunded: no access")
        let again = JSONValue.object(try await play.syncVoided(since: now - 86_400_000, now: fixture.clock.now()))
        XCTAssertEqual(again["voided"], 0, "marked once")
    }
}

/// The Google Play Developer API port: subscriptions and voided purchases as the test sets them,
/// acknowledgements recorded, every other call refused.
final class RecordingGooglePlay: GooglePlayAPI, Sendable {
    let subscriptions = Mutex<[String: JSONObject]>([:])
    let acknowledged = LockedList<String>()
    let voided = Mutex<[VoidedPurchase]>([])

    private func refused() -> GooglePlayAPIError { .api(status: 404, message: "not part of this test") }

    /// A monthly `pro` subscription bought an hour before `now` by `customer`, active until `expires`.
    func sell(_ token: String, to customer: String, now: Int64, expires: Int64, acknowledged: Bool = false) {
        subscriptions.withLock {
            $0[token] = [
                "kind": "androidpublisher#subscriptionPurchaseV2", "startTime": .string(Timestamps.iso(now - 3_600_000)),
                "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "latestOrderId": "GPA.3345-1234-5678-00001",
                "acknowledgementState": acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING",
                "externalAccountIdentifiers": .object(["obfuscatedExternalAccountId": .string(customer)]),
                "lineItems": .array([
                    .object([
                        "productId": "pro", "expiryTime": .string(Timestamps.iso(expires)),
                        "autoRenewingPlan": .object(["autoRenewEnabled": true]), "offerDetails": .object(["basePlanId": "monthly"]),
                    ])
                ]),
            ]
        }
    }

    func subscription(purchaseToken: String) throws(GooglePlayAPIError) -> SubscriptionPurchaseV2 {
        guard let json = subscriptions.withLock({ $0[purchaseToken] }) else { throw refused() }
        return try SubscriptionPurchaseV2(json: json)
    }
    func order(orderId: String) throws(GooglePlayAPIError) -> PlayOrder { throw refused() }
    func product(purchaseToken: String) throws(GooglePlayAPIError) -> ProductPurchaseV2 { throw refused() }
    /// As Google does, the purchase reads acknowledged from then on.
    func acknowledgeSubscription(subscriptionId: String, purchaseToken: String, obfuscatedAccountId: String?) throws(GooglePlayAPIError) {
        acknowledged.append(purchaseToken)
        subscriptions.withLock { $0[purchaseToken]?["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" }
    }
    func acknowledgeProduct(productId: String, purchaseToken: String) throws(GooglePlayAPIError) { throw refused() }
    func reviewRefund(orderId: String, _ body: JSONObject) throws(GooglePlayAPIError) { throw refused() }
    func voidedPurchases(since startTime: Int64?) throws(GooglePlayAPIError) -> [VoidedPurchase] { voided.withLock { $0 } }
}
