import Entitlements
import XCTest

/// Google names only a subscription's latest order: the periods before it are kept from earlier
/// reads, and each read adds or extends one.
final class PlayPeriodTests: XCTestCase {
    private func read(_ order: String?, phase: String = "basePrice", expires: Int64?, readAt: Int64, price: Int64? = 4990) -> PlayPurchase {
        var details = PlayPurchaseDetails()
        details.offerPhase = phase
        details.recurringPrice = price
        details.recurringPriceCurrency = price == nil ? nil : "EUR"
        return PlayPurchase(
            purchaseToken: "t", kind: .subscription, productId: "pro", basePlanId: "monthly", offerId: nil, environment: "Production",
            googleState: "SUBSCRIPTION_STATE_ACTIVE", startTime: 100, expiryTime: expires, autoRenewing: true, linkedPurchaseToken: nil,
            acknowledged: true, appAccountToken: nil, orderId: order, voidedAt: nil, readAt: readAt, details: details)
    }

    func testEachOrderIsAPeriodFromTheLastOnesEnd() {
        let trial = read("GPA.1-0", phase: "freeTrial", expires: 200, readAt: 110).replacing(nil)
        XCTAssertEqual(
            trial.details.periods,
            [PlayPeriod(orderId: "GPA.1-0", start: 100, end: 200, priceMilliunits: 0, currency: "EUR", isTrial: true)],
            "a free trial charges nothing, whatever the plan's price")
        let renewed = read("GPA.1-1", expires: 300, readAt: 210).replacing(trial)
        XCTAssertEqual(renewed.details.periods.map(\.orderId), ["GPA.1-0", "GPA.1-1"])
        XCTAssertEqual(
            renewed.details.periods[1],
            PlayPeriod(orderId: "GPA.1-1", start: 200, end: 300, priceMilliunits: 4990, currency: "EUR", isTrial: false))
        let grace = read("GPA.1-1", expires: 320, readAt: 305).replacing(renewed)
        XCTAssertEqual(grace.details.periods.map(\.end), [200, 320], "the same order again moves its end")
        XCTAssertEqual(read("GPA.1-2", expires: 400, readAt: 150).replacing(grace), grace, "an older read changes nothing")
        XCTAssertEqual(
            read("GPA.1-2", expires: 400, readAt: 330, price: nil).replacing(grace).details.periods, grace.details.periods,
            "a read without a price adds no period")
    }

    func testTheFiguresCountThePeriodsAndAVoidRefundsTheLatest() {
        var purchase = read("GPA.1-1", expires: 300, readAt: 210).replacing(
            read("GPA.1-0", phase: "freeTrial", expires: 200, readAt: 110).replacing(nil))
        purchase.voidedAt = 250
        let metrics = MetricsSubscription(play: purchase)
        XCTAssertEqual(metrics.store, "play_store")
        XCTAssertEqual(metrics.periods.map(\.productId), ["pro:monthly", "pro:monthly"])
        XCTAssertEqual(metrics.periods.map(\.isTrial), [true, false])
        XCTAssertEqual(metrics.periods.map(\.refundedAt), [nil, 250])
    }
}
