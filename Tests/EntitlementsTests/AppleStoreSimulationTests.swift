import Entitlements
import Instants
import JSON
import XCTest

/// The test store's App Store, step by step (pure): the notifications Apple documents for each
/// path, in order, at their instants, and what it refuses.
final class AppleStoreSimulationTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_796_119_200_000  // 2026-12-01T10:00:00Z
    private var counter = 100

    private func newId() -> String {
        counter += 1
        return String(counter)
    }

    private func buy(trial: Bool = false) throws -> SimulatedAppleSubscription {
        let offer =
            trial
            ? SimulatedAppleSubscription.Offer(
                type: 1, identifier: "trial", discountType: "FREE_TRIAL", price: 0, periods: 1, period: ISO8601Duration("P1W")) : nil
        let (subscription, step) = try AppleStoreSimulation.purchase(
            bundleId: "com.example.app", environment: "Sandbox", productId: "pro.monthly", subscriptionGroup: "G1",
            period: ISO8601Duration("P1M")!, price: 9990, currency: "USD", appAccountToken: nil, offer: offer, transactionId: "100",
            now: start)
        XCTAssertEqual(step.name, "SUBSCRIBED/INITIAL_BUY")
        XCTAssertEqual(step.transaction["transactionReason"], "PURCHASE")
        return subscription
    }

    /// Every step due by `until`, as `TYPE/SUBTYPE`.
    private func run(_ subscription: inout SimulatedAppleSubscription, until: Int64) -> [AppleStoreSimulation.Step] {
        var steps: [AppleStoreSimulation.Step] = []
        while let due = AppleStoreSimulation.nextDue(subscription), due <= until {
            if let step = AppleStoreSimulation.advance(&subscription, to: until, newTransactionId: newId) { steps.append(step) }
        }
        return steps
    }

    func testATrialConvertsAndRenewsMonthByCalendarMonth() throws {
        var subscription = try buy(trial: true)
        XCTAssertEqual(subscription.expiresDate, start + 7 * day, "the trial lasts its own week")
        let converted = start + 7 * day
        let steps = run(&subscription, until: ISO8601Duration("P2M")!.end(from: converted)!)
        XCTAssertEqual(steps.map(\.name), ["DID_RENEW", "DID_RENEW", "DID_RENEW"])
        guard steps.count == 3 else { return }
        XCTAssertEqual(
            steps.map(\.at), [converted, ISO8601Duration("P1M")!.end(from: converted)!, ISO8601Duration("P2M")!.end(from: converted)!])
        XCTAssertEqual(steps[0].transaction["price"], 9990, "converted: the regular price")
        XCTAssertNil(steps[0].transaction["offerType"])
        XCTAssertEqual(steps[0].transaction["transactionReason"], "RENEWAL")
        XCTAssertEqual(Set(steps.compactMap { $0.transaction["transactionId"]?.stringValue }).count, 3, "a new transaction each")
        XCTAssertEqual(steps.map(\.status), [.active, .active, .active])
    }

    func testAFailedRenewalGoesThroughGraceAndRetryToExpiry() throws {
        var subscription = try buy()
        try AppleStoreSimulation.failNextRenewal(&subscription, gracePeriod: true)
        let renewal = subscription.expiresDate
        let steps = run(&subscription, until: renewal + 100 * day)
        XCTAssertEqual(steps.map(\.name), ["DID_FAIL_TO_RENEW/GRACE_PERIOD", "GRACE_PERIOD_EXPIRED", "EXPIRED/BILLING_RETRY"])
        guard steps.count == 3 else { return }
        XCTAssertEqual(steps[0].renewalInfo?["gracePeriodExpiresDate"], .int(renewal + 16 * day))
        XCTAssertEqual(steps[0].renewalInfo?["isInBillingRetryPeriod"], true)
        XCTAssertEqual(steps[0].status, .gracePeriod)
        XCTAssertEqual(steps[1].at, renewal + 16 * day, "the grace period's end")
        XCTAssertEqual(steps[1].status, .billingRetry)
        XCTAssertNil(steps[1].renewalInfo?["gracePeriodExpiresDate"])
        XCTAssertEqual(steps[2].at, renewal + 60 * day, "Apple retries for 60 days")
        XCTAssertEqual(steps[2].renewalInfo?["expirationIntent"], 2)
        XCTAssertThrowsError(try AppleStoreSimulation.recover(&subscription, now: renewal + 61 * day, transactionId: "x"))
    }

    func testRecoveryInTheGracePeriodKeepsTheRenewalDate() throws {
        var subscription = try buy()
        try AppleStoreSimulation.failNextRenewal(&subscription, gracePeriod: true)
        let renewal = subscription.expiresDate
        _ = run(&subscription, until: renewal + day)
        let step = try AppleStoreSimulation.recover(&subscription, now: renewal + 3 * day, transactionId: "200")
        XCTAssertEqual(step.name, "DID_RENEW/BILLING_RECOVERY")
        XCTAssertEqual(step.transaction["purchaseDate"], .int(renewal), "the period the failed renewal was for")
        XCTAssertEqual(subscription.status, .active)
    }

    func testCancelExpiresVoluntarilyAndRefundRevokes() throws {
        var subscription = try buy()
        XCTAssertEqual(
            try AppleStoreSimulation.setAutoRenew(false, &subscription, now: start + day).name,
            "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED")
        XCTAssertThrowsError(try AppleStoreSimulation.setAutoRenew(false, &subscription, now: start + day))
        XCTAssertThrowsError(try AppleStoreSimulation.failNextRenewal(&subscription, gracePeriod: false), "it does not renew")
        let steps = run(&subscription, until: start + 90 * day)
        XCTAssertEqual(steps.map(\.name), ["EXPIRED/VOLUNTARY"])
        XCTAssertEqual(steps[0].renewalInfo?["autoRenewStatus"], 0)

        var refunded = try buy()
        let refund = try AppleStoreSimulation.refund(&refunded, now: start + 2 * day)
        XCTAssertEqual(refund.name, "REFUND")
        XCTAssertEqual(refund.transaction["revocationDate"], .int(start + 2 * day))
        XCTAssertEqual(refund.status, .revoked)
        XCTAssertEqual(run(&refunded, until: start + 90 * day).map(\.name), [], "no renewal after a refund")
        XCTAssertThrowsError(try AppleStoreSimulation.refund(&refunded, now: start + 3 * day))
    }

    /// Buying again after the subscription ended keeps its original transaction and starts a new
    /// run of periods; buying while subscribed is refused.
    func testAResubscriptionKeepsTheOriginalTransaction() throws {
        var subscription = try buy()
        let period = ISO8601Duration("P1M")!
        XCTAssertThrowsError(
            try AppleStoreSimulation.resubscribe(
                &subscription, productId: "pro.monthly", period: period, price: 9990, offer: nil, transactionId: "900", now: start + day))
        _ = try AppleStoreSimulation.refund(&subscription, now: start + day)
        let later = start + 40 * day
        let step = try AppleStoreSimulation.resubscribe(
            &subscription, productId: "pro.monthly", period: period, price: 8990, offer: nil, transactionId: "900", now: later)
        XCTAssertEqual(step.name, "SUBSCRIBED/RESUBSCRIBE")
        XCTAssertEqual(step.transaction["originalTransactionId"], "100")
        XCTAssertEqual(step.transaction["transactionId"], "900")
        XCTAssertEqual(step.transaction["transactionReason"], "PURCHASE")
        XCTAssertEqual(step.transaction["price"], 8990)
        XCTAssertNil(step.transaction["revocationDate"], "the new transaction is not refunded")
        XCTAssertEqual(step.renewalInfo?["recentSubscriptionStartDate"], .int(later))
        XCTAssertEqual(step.status, .active)
        XCTAssertEqual(run(&subscription, until: later + 31 * day).map(\.name), ["DID_RENEW"])
    }

    /// A downgrade waits for the renewal; an unconsented price increase ends the subscription
    /// there; an upgrade starts a new period now and marks the replaced transaction.
    func testPlanChangesAndPriceIncreases() throws {
        var subscription = try buy()
        let yearly = SimulatedAppleSubscription.Plan(productId: "pro.yearly", period: ISO8601Duration("P1Y")!, price: 99990)
        let (replaced, upgrade) = try AppleStoreSimulation.changePlanNow(&subscription, to: yearly, transactionId: "500", now: start + day)
        XCTAssertEqual(upgrade.name, "DID_CHANGE_RENEWAL_PREF/UPGRADE")
        XCTAssertEqual(AppleStoreSimulation.transaction(replaced, signedAt: start + day)["isUpgraded"], true)
        XCTAssertEqual(upgrade.transaction["productId"], "pro.yearly")
        XCTAssertEqual(upgrade.transaction["purchaseDate"], .int(start + day))
        let monthly = SimulatedAppleSubscription.Plan(productId: "pro.monthly", period: ISO8601Duration("P1M")!, price: 4990)
        let downgrade = try AppleStoreSimulation.changePlanAtRenewal(&subscription, to: monthly, now: start + 2 * day)
        XCTAssertEqual(downgrade.name, "DID_CHANGE_RENEWAL_PREF/DOWNGRADE")
        XCTAssertEqual(downgrade.renewalInfo?["autoRenewProductId"], "pro.monthly")
        XCTAssertEqual(downgrade.renewalInfo?["renewalPrice"], 4990)
        let renewal = run(&subscription, until: start + 370 * day).first
        XCTAssertEqual(renewal?.transaction["productId"], "pro.monthly")
        XCTAssertEqual(renewal?.transaction["price"], 4990)

        let increase = try AppleStoreSimulation.increasePrice(&subscription, to: 5990, consent: false, now: start + 371 * day)
        XCTAssertEqual(increase.name, "PRICE_INCREASE/PENDING")
        XCTAssertEqual(increase.renewalInfo?["priceIncreaseStatus"], 0)
        let ended = run(&subscription, until: start + 500 * day)
        XCTAssertEqual(ended.map(\.name), ["EXPIRED/PRICE_INCREASE"])
        XCTAssertEqual(ended.first?.renewalInfo?["expirationIntent"], 3)
        XCTAssertThrowsError(try AppleStoreSimulation.revokeFamilySharing(&subscription, now: start + 501 * day), "not shared")
    }

    func testTheClockAdvanceTakesCalendarAndClockParts() {
        XCTAssertEqual(ClockAdvance("P1M")?.end(from: start), ISO8601Duration("P1M")!.end(from: start))
        XCTAssertEqual(ClockAdvance("PT13H")?.end(from: start), start + 13 * 3_600_000)
        XCTAssertEqual(ClockAdvance("P1DT2H30M5S")?.end(from: start), start + day + 9_005_000)
        for refused in ["", "P", "PT", "1M", "P1H", "PT1D", "PT1M1H", "P1MT", "PT99999999999H"] {
            XCTAssertNil(ClockAdvance(refused)?.end(from: start), refused)
        }
        XCTAssertNil(ClockAdvance("P9000Y")?.end(from: start), "past the instants Entitle accepts")
    }
}
