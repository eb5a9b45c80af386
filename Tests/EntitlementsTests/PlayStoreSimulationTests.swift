import Entitlements
import Instants
import JSON
import XCTest

/// The test store's Google Play, step by step (pure): the notifications Google documents for each
/// path, at their instants, the orders each charges, and what Google's API then answers.
final class PlayStoreSimulationTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_796_119_200_000  // 2026-12-01T10:00:00Z

    private func subscribe(offer: SimulatedPlaySubscription.Offer? = nil) throws -> SimulatedPlaySubscription {
        let (subscription, step) = try PlayStoreSimulation.subscribe(
            packageName: "com.example.app", purchaseToken: "token-1", productId: "pro", basePlanId: "monthly",
            period: ISO8601Duration("P1M")!, price: 9990, currency: "USD", obfuscatedAccountId: "customer", offer: offer,
            orderId: "GPA.1111-2222-3333-44444", now: start)
        XCTAssertEqual(step.name, "SUBSCRIPTION_PURCHASED")
        XCTAssertEqual(step.body["notificationType"], 4)
        XCTAssertEqual(step.order?.total, offer?.phase == "freeTrial" ? 0 : offer?.price ?? 9990)
        return subscription
    }

    /// Every step due by `until`, by name.
    private func run(_ subscription: inout SimulatedPlaySubscription, until: Int64) -> [PlayStoreSimulation.Step] {
        var steps: [PlayStoreSimulation.Step] = []
        while let due = PlayStoreSimulation.nextDue(subscription), due <= until {
            steps += PlayStoreSimulation.advance(&subscription, to: until)
        }
        return steps
    }

    /// An introductory price for three periods, then the base price; orders `GPA.…..0`, `..1`, …
    func testAnIntroductoryPriceForThreePeriodsThenTheBasePrice() throws {
        var subscription = try subscribe(
            offer: .init(id: "intro", tags: [], phase: "introductoryPrice", price: 2990, period: nil, cycles: 3))
        subscription.acknowledged = true
        let steps = run(&subscription, until: start + 100 * day)
        XCTAssertEqual(steps.map(\.name), Array(repeating: "SUBSCRIPTION_RENEWED", count: 3))
        XCTAssertEqual(steps.compactMap(\.order?.total), [2990, 2990, 9990], "two more introductory periods, then the base price")
        XCTAssertEqual(
            steps.compactMap(\.order?.id), ["GPA.1111-2222-3333-44444..0", "GPA.1111-2222-3333-44444..1", "GPA.1111-2222-3333-44444..2"])
        let answer = PlayStoreSimulation.subscriptionPurchase(subscription)
        XCTAssertEqual(answer["lineItems"]?.arrayValue?.first?["offerPhase"], .object(["basePrice": .object([:])]))
        XCTAssertEqual(answer["lineItems"]?.arrayValue?.first?["latestSuccessfulOrderId"], "GPA.1111-2222-3333-44444..2")
    }

    /// A failed charge: the expiry stretched over the grace period, then account hold (no access,
    /// expiry in the past), then after 30 days of hold the end, system-initiated.
    func testGraceThenHoldThenTheEnd() throws {
        var subscription = try subscribe()
        subscription.acknowledged = true
        let renewal = subscription.expiryTime
        try PlayStoreSimulation.failNextRenewal(&subscription, graceDays: 3)
        XCTAssertEqual(run(&subscription, until: renewal).map(\.name), ["SUBSCRIPTION_IN_GRACE_PERIOD"])
        XCTAssertEqual(subscription.expiryTime, renewal + 3 * day)
        XCTAssertEqual(
            PlayStoreSimulation.subscriptionPurchase(subscription)["inGracePeriodStateContext"]?["renewalDeclined"]?["pendingOrderId"],
            "GPA.1111-2222-3333-44444..0")
        XCTAssertEqual(run(&subscription, until: renewal + 3 * day).map(\.name), ["SUBSCRIPTION_ON_HOLD"])
        XCTAssertEqual(subscription.state, .onHold)
        XCTAssertEqual(run(&subscription, until: renewal + 40 * day).map(\.name), ["SUBSCRIPTION_EXPIRED"])
        XCTAssertEqual(subscription.cancellation, .system)
        XCTAssertThrowsError(try PlayStoreSimulation.recover(&subscription, now: renewal + 41 * day))
    }

    /// Google refunds a purchase not acknowledged within three days, before anything else falls due.
    func testAnUnacknowledgedPurchaseIsRevokedAfterThreeDays() throws {
        var subscription = try subscribe()
        XCTAssertEqual(PlayStoreSimulation.nextDue(subscription), start + 3 * day)
        let steps = run(&subscription, until: start + 3 * day)
        XCTAssertEqual(steps.map(\.name), ["SUBSCRIPTION_REVOKED", "VOIDED_PURCHASE"])
        XCTAssertEqual(steps.last?.voided?.reason, 8, "Google's reason: not acknowledged")
        XCTAssertEqual(steps.last?.voided?.source, 2)
        XCTAssertNil(PlayStoreSimulation.nextDue(subscription))
    }

    /// Quantity-based refunds: fewer units than bought is a partial refund (`refundType` 2); the
    /// last units void the purchase, still a partial refund of what was left; all at once is full.
    func testQuantityBasedRefunds() throws {
        var (product, bought) = try PlayStoreSimulation.buy(
            packageName: "com.example.app", purchaseToken: "gems-1", productId: "gems", quantity: 3, price: 990, currency: "USD",
            obfuscatedAccountId: nil, orderId: "GPA.1", now: start)
        XCTAssertEqual(bought.order?.total, 2970)
        XCTAssertEqual(try PlayStoreSimulation.void(&product, quantity: 2, now: start + day).body["refundType"], 2)
        XCTAssertThrowsError(try PlayStoreSimulation.void(&product, quantity: 2, now: start + day), "one unit is left")
        XCTAssertEqual(try PlayStoreSimulation.void(&product, quantity: nil, now: start + 2 * day).body["refundType"], 2)
        XCTAssertEqual(product.voidedAt, start + 2 * day)
        var (whole, _) = try PlayStoreSimulation.buy(
            packageName: "com.example.app", purchaseToken: "gems-2", productId: "gems", quantity: 2, price: 990, currency: "USD",
            obfuscatedAccountId: nil, orderId: "GPA.2", now: start)
        XCTAssertEqual(try PlayStoreSimulation.void(&whole, quantity: nil, now: start).body["refundType"], 1)
        XCTAssertThrowsError(
            try PlayStoreSimulation.buy(
                packageName: "p", purchaseToken: "t", productId: "gems", quantity: 0, price: 1, currency: "USD", obfuscatedAccountId: nil,
                orderId: "o", now: start))
    }
}
