import Foundation
import JSON
import TestSupport
import XCTest

/// What changes a subscription in the test store's App Store without a purchase: plan changes,
/// price increases, Family Sharing, partial refunds, Ask to Buy and the cancel sheet. Each sends
/// what Apple sends, and Entitle derives what it should from it.
final class TestStoreChangesTests: TestStoreTestCase {
    /// The customer's events of one type, oldest first.
    private func events(_ type: String, customer: String? = nil) -> [JSONValue] {
        let all = call("GET", "/v1/events?limit=1000", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        return all.filter { $0["type"]?.stringValue == type && (customer == nil || $0["appAccountToken"]?.stringValue == customer) }
    }

    /// An upgrade takes effect now (a new transaction of the new product, the old one marked
    /// upgraded); a downgrade waits for the renewal, and choosing the current product again
    /// withdraws it.
    func testUpgradesTakeEffectNowAndDowngradesAtRenewal() throws {
        let original = try buy(trial: false)
        let (status, upgraded) = act(original, "upgrade", ["productId": "pro.yearly", "price": 99990])
        XCTAssertEqual(status, 200, "\(upgraded)")
        XCTAssertEqual(notified(upgraded), ["DID_CHANGE_RENEWAL_PREF/UPGRADE"])
        XCTAssertEqual(pro()?["productId"], "pro.yearly")
        let change = try XCTUnwrap(events("PRODUCT_CHANGE").last)
        XCTAssertEqual(change["takesEffect"], "IMMEDIATELY", "\(change)")

        XCTAssertEqual(notified(act(original, "downgrade", ["productId": "pro.monthly"]).1), ["DID_CHANGE_RENEWAL_PREF/DOWNGRADE"])
        XCTAssertEqual(pro()?["productId"], "pro.yearly", "until the renewal")
        XCTAssertEqual(events("PRODUCT_CHANGE").count, 2)
        XCTAssertEqual(notified(act(original, "crossgrade", ["productId": "pro.yearly"]).1), ["DID_CHANGE_RENEWAL_PREF"], "withdrawn")
        XCTAssertEqual(
            notified(act(original, "downgrade", ["productId": "pro.monthly", "price": 4990]).1), ["DID_CHANGE_RENEWAL_PREF/DOWNGRADE"])
        XCTAssertEqual(act(original, "downgrade", ["productId": "pro.monthly", "atRenewal": false]).0, 400)
        XCTAssertEqual(act(original, "upgrade", ["productId": "gems"]).0, 422, "not of the group")
        XCTAssertEqual(advance("P1Y"), ["DID_RENEW"])
        XCTAssertEqual(pro()?["productId"], "pro.monthly")
        XCTAssertEqual(act(original, "cancel").1["subscription"]?["price"], 4990)
    }

    /// A price increase the customer never accepts ends the subscription at renewal; one they
    /// accept renews at the new price.
    func testAPriceIncreaseNeedsConsent() throws {
        let original = try buy(trial: false)
        let (status, pending) = act(original, "price-increase", ["price": 12990, "consent": false])
        XCTAssertEqual(status, 200, "\(pending)")
        XCTAssertEqual(notified(pending), ["PRICE_INCREASE/PENDING"])
        XCTAssertEqual(events("PRICE_INCREASE").count, 1)
        XCTAssertEqual(advance("P1M"), ["EXPIRED/PRICE_INCREASE"])
        XCTAssertEqual(pro()?["isActive"], false)

        let again = try buy(trial: false, notified: "SUBSCRIBED/RESUBSCRIBE")
        XCTAssertEqual(notified(act(again, "price-increase", ["price": 12990, "consent": false]).1), ["PRICE_INCREASE/PENDING"])
        XCTAssertEqual(notified(act(again, "price-increase", ["consent": true]).1), ["PRICE_INCREASE/ACCEPTED"])
        XCTAssertEqual(act(again, "price-increase", ["price": 100]).0, 409, "an increase only")
        XCTAssertEqual(advance("P1M"), ["DID_RENEW"])
        XCTAssertEqual(pro()?["isActive"], true)
        XCTAssertEqual(act(again, "cancel").1["subscription"]?["price"], 12990)
    }

    /// A subscription shared through Family Sharing, then revoked: `REVOKE`, access ends, and
    /// the refund event says `FAMILY_REVOKE`. A partial refund says `REFUND_PRORATED`.
    func testFamilySharingRevokedAndAPartialRefund() throws {
        let (status, shared) = call(
            "POST", "/v1/test-store/apple/purchases",
            ["appAccountToken": .string(token), "productId": "pro.monthly", "inAppOwnershipType": "FAMILY_SHARED"])
        XCTAssertEqual(status, 200, "\(shared)")
        let original = try XCTUnwrap(shared["originalTransactionId"]?.stringValue)
        XCTAssertEqual(pro()?["isActive"], true)
        let (revoked, revoke) = act(original, "revoke-family")
        XCTAssertEqual(revoked, 200, "\(revoke)")
        XCTAssertEqual(notified(revoke), ["REVOKE"])
        XCTAssertEqual(pro()?["isActive"], false)
        XCTAssertEqual(events("REFUND").last?["revocationType"], "FAMILY_REVOKE", "\(events("REFUND"))")

        let other = "5f0c1a4e-52f5-4d35-9a43-3c2a77d7c2a1"
        let (_, bought) = call("POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(other), "productId": "pro.monthly"])
        let purchased = try XCTUnwrap(bought["originalTransactionId"]?.stringValue)
        XCTAssertEqual(act(purchased, "revoke-family").0, 409, "not shared")
        XCTAssertEqual(notified(act(purchased, "refund", ["percentage": 50000]).1), ["REFUND"])
        let refund = try XCTUnwrap(events("REFUND", customer: other).last)
        XCTAssertEqual(refund["revocationType"], "REFUND_PRORATED", "\(refund)")
        XCTAssertEqual(refund["revocationPercentage"], 50000)
        XCTAssertEqual(act(purchased, "refund", ["percentage": 100_000]).0, 400)
    }

    /// Ask to Buy: the purchase waits, notifying nothing; a declined one never happens; an
    /// approved one is bought then.
    func testAskToBuyWaitsForTheParent() throws {
        let body: JSONObject = ["appAccountToken": .string(token), "productId": "pro.monthly", "askToBuy": true]
        let (status, pending) = call("POST", "/v1/test-store/apple/purchases", body)
        XCTAssertEqual(status, 200, "\(pending)")
        XCTAssertEqual(pending["askToBuy"]?["status"], "PENDING")
        XCTAssertNil(pending["happened"])
        XCTAssertNil(pro())
        let declined = try XCTUnwrap(pending["askToBuy"]?["requestId"]?.stringValue)
        XCTAssertEqual(call("POST", "/v1/test-store/apple/ask-to-buy/\(declined)/decline").1["askToBuy"]?["status"], "DECLINED")
        XCTAssertNil(pro())
        XCTAssertEqual(call("POST", "/v1/test-store/apple/ask-to-buy/\(declined)/approve").0, 404, "decided already")

        let requestId = try XCTUnwrap(call("POST", "/v1/test-store/apple/purchases", body).1["askToBuy"]?["requestId"]?.stringValue)
        XCTAssertEqual(call("POST", "/v1/test-store/apple/ask-to-buy/\(requestId)/maybe").0, 404)
        let (approved, answer) = call("POST", "/v1/test-store/apple/ask-to-buy/\(requestId)/approve")
        XCTAssertEqual(approved, 200, "\(answer)")
        XCTAssertEqual(notified(answer), ["SUBSCRIBED/INITIAL_BUY"])
        XCTAssertEqual(answer["askToBuy"]?["status"], "APPROVED")
        XCTAssertEqual(pro()?["isActive"], true)
    }

    /// The customer opens the cancel sheet: Apple's realtime Retention Messaging request, signed
    /// by the test store, reaches Entitle's route, which answers by the app's retention policy;
    /// the answer is recorded (`RETENTION_OFFERED`).
    func testTheCancelSheetAsksEntitleWhatToShow() throws {
        let original = try buy(trial: false)
        let (status, answer) = act(original, "open-cancel-sheet", ["locale": "de-DE"])
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer["retention"]?["status"], 200, "\(answer)")
        XCTAssertEqual(answer["retention"]?["answer"]?["message"]?["messageIdentifier"], "msg-stay", "\(answer)")
        XCTAssertEqual(events("RETENTION_OFFERED").count, 1)
        XCTAssertEqual(act(original, "cancel").0, 200)
        XCTAssertEqual(act(original, "open-cancel-sheet").0, 409, "the sheet is for a subscription that renews")
    }
}
