import Entitlements
import XCTest

/// The figures of docs/METRICS.md on a scripted population, each computed by hand below (the
/// comments give the arithmetic): trials that convert and that lapse, monthly and yearly plans in
/// two currencies, grace, billing retry, voluntary and involuntary churn, a refund, an upgrade.
/// Each figure is asked of both readings: the definitions read straight (`ReferenceMetrics`) and
/// the day sums of the subscriptions' moments (`MetricsLedger`, what the server reads).
final class BusinessMetricsTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    private func d(_ n: Int64) -> Int64 { start + n * day }

    private func period(
        _ id: String, _ product: String, _ from: Int64, _ to: Int64, trial: Bool = false, price: Int64, _ currency: String,
        refunded: Int64? = nil
    ) -> MetricsPeriod {
        MetricsPeriod(
            transactionId: id, productId: product, start: d(from), end: d(to), isTrial: trial, priceMilliunits: price,
            currency: currency, refundedAt: refunded.map(d))
    }

    private func population() -> [MetricsSubscription] {
        // H, an upgrade, comes from stored facts: monthly from day 0, upgraded on day 12 to yearly.
        let upgraded = MetricsSubscription(
            SubscriptionFacts(
                originalTransactionId: "h", environment: "Production", appAccountToken: nil,
                transactions: [
                    TransactionRecord(
                        transactionId: "h1", originalTransactionId: "h", productId: "monthly", purchaseDate: d(0), expiresDate: d(30),
                        isUpgraded: true, environment: "Production", signedDate: d(12), price: 9990, currency: "USD"),
                    TransactionRecord(
                        transactionId: "h2", originalTransactionId: "h", productId: "yearly", purchaseDate: d(12), expiresDate: d(377),
                        environment: "Production", signedDate: d(12), price: 99_990, currency: "USD"),
                ], renewal: nil, signals: []))
        return [
            // A: a trial that converts, then renews.
            MetricsSubscription(
                store: "app_store",
                periods: [
                    period("a1", "monthly", 0, 7, trial: true, price: 0, "USD"), period("a2", "monthly", 7, 37, price: 9990, "USD"),
                    period("a3", "monthly", 37, 67, price: 9990, "USD"),
                ]),
            // B: a trial that lapses.
            MetricsSubscription(store: "app_store", periods: [period("b1", "monthly", 0, 7, trial: true, price: 0, "USD")]),
            // C: yearly in euros.
            MetricsSubscription(store: "app_store", periods: [period("c1", "yearly", 10, 375, price: 49_990, "EUR")]),
            // D: monthly in euros, turned off: voluntary churn on day 60.
            MetricsSubscription(
                store: "app_store",
                periods: [period("d1", "monthly.eur", 0, 30, price: 4990, "EUR"), period("d2", "monthly.eur", 30, 60, price: 4990, "EUR")],
                autoRenewOff: true, expirationReason: 1),
            // E: billing failed, grace until day 41: paid until then, involuntary churn on day 41.
            MetricsSubscription(
                store: "app_store", periods: [period("e1", "monthly", 5, 35, price: 9990, "USD")], gracePeriodExpiresDate: d(41),
                expirationReason: 2),
            // F: still in billing retry after day 50: not paid, not churned.
            MetricsSubscription(
                store: "app_store", periods: [period("f1", "monthly", 20, 50, price: 9990, "USD")], isInBillingRetry: true),
            // G: refunded on day 25.
            MetricsSubscription(store: "app_store", periods: [period("g1", "monthly", 15, 45, price: 9990, "USD", refunded: 25)]),
            upgraded,
        ]
    }

    /// Both readings of `subscriptions`; the ledger has every moment of the days in `momentDays`.
    private func readings(
        _ subscriptions: [MetricsSubscription], configuredPeriods: [String: String] = [:], momentDays: [Int64] = []
    ) -> [any MetricsFigures] {
        [
            ReferenceMetrics(subscriptions: subscriptions, configuredPeriods: configuredPeriods),
            Self.ledger(subscriptions, configuredPeriods: configuredPeriods, momentDays: momentDays.map { d($0) / day }),
        ]
    }

    /// The sums a writer would keep for `subscriptions`, from the first day on.
    static func ledger(
        _ subscriptions: [MetricsSubscription], configuredPeriods: [String: String], momentDays: [Int64]
    )
        -> MetricsLedger
    {
        var sums: [MetricDayKey: Int64] = [:]
        var stored: [StoredMetricMoment] = []
        for subscription in subscriptions {
            let change = MetricMomentsChange(from: [:], to: subscription.moments, store: subscription.store)
            for (key, delta) in change.dayDeltas { sums[key, default: 0] += delta }
            stored += change.put.map { StoredMetricMoment(store: subscription.store, moment: $0.moment, value: $0.value) }
        }
        return MetricsLedger(
            firstDay: 0, sums: sums.map { ($0.key, $0.value) }, momentDays: Set(momentDays),
            moments: stored.filter { momentDays.contains($0.moment.at / 86_400_000) },
            configuredPeriods: configuredPeriods, includes: { _, _ in true })
    }

    func testTheUpgradedPeriodEndsWhereTheNewOneBegins() {
        let upgraded = population()[7]
        XCTAssertEqual(upgraded.periods.map(\.transactionId), ["h1", "h2"])
        XCTAssertEqual(upgraded.periods[0].end, d(12))
    }

    func testStocks() {
        for metrics in readings(population(), momentDays: [3, 26]) {
            // Day 26: A (a2), C, D (d1), E, F, H (h2); G was refunded on day 25, B lapsed.
            XCTAssertEqual(metrics.activeSubscriptions(at: d(26)), 6)
            XCTAssertEqual(metrics.activeTrials(at: d(3)), 2, "A's and B's")
            XCTAssertEqual(metrics.activeTrials(at: d(26)), 0)
            // USD: A 9,990 + E 9,990 + F 9,990 + H 99,990 / 12 (8,332.5) = 38,302.5 → 38,303;
            // EUR: C 49,990 / 12 (4,165.83) + D 4,990 = 9,155.83 → 9,156.
            XCTAssertEqual(metrics.mrr(at: d(26)), ["USD": 38_303, "EUR": 9_156])
            // Day 38: E in grace (to day 41) still pays; F is in billing retry since day 50, not yet.
            XCTAssertEqual(metrics.activeSubscriptions(at: d(38)), 6, "A, C, D, E (grace), F, H")
            XCTAssertEqual(metrics.activeSubscriptions(at: d(51)), 4, "A, C, D, H: E's grace ended, F is in billing retry")
            XCTAssertEqual(metrics.activeSubscriptions(at: d(61)), 3, "A, C, H: D ended on day 60")
            XCTAssertEqual(metrics.activeSubscriptions(at: d(26) + 3_600_000), 6, "an hour into the day: the day's moments")
        }
    }

    func testFlows() {
        for metrics in readings(population(), momentDays: [62, 45]) {
            // Purchased in [0, 30): USD a2, e1, f1, g1, h1 (9,990 each) + h2 99,990 = 149,940, less
            // g1's refund on day 25: 139,950; EUR c1 49,990 + d1 4,990 = 54,980.
            XCTAssertEqual(metrics.revenue(from: d(0), to: d(30)), ["USD": 139_950, "EUR": 54_980])
            XCTAssertEqual(metrics.newTrials(from: d(0), to: d(30)), 2)
            XCTAssertEqual(metrics.trialConversions(from: d(0), to: d(30)), 1, "a2 follows a1")
            XCTAssertEqual(metrics.trialConversions(from: d(30), to: d(60)), 0, "a3 follows a paid period")
            XCTAssertEqual(metrics.trialConversionRate(from: d(0), to: d(30), now: d(62)), 0.5, "A converted, B lapsed")
            XCTAssertNil(metrics.trialConversionRate(from: d(30), to: d(60), now: d(62)), "no trial started then")
            XCTAssertEqual(metrics.churned(from: d(30), to: d(62), now: d(62)), .init(voluntary: 1, involuntary: 1), "D on 60, E on 41")
            XCTAssertEqual(metrics.churned(from: d(0), to: d(30), now: d(62)), .init(other: 1), "G, refunded on day 25")
            // Active on day 30: A, C, D (d2 starts), E, F, H = 6; churned 2.
            XCTAssertEqual(metrics.churnRate(from: d(30), to: d(62), now: d(62)), 2.0 / 6.0)
            XCTAssertEqual(metrics.churned(from: d(30), to: d(62), now: d(45)), .init(involuntary: 1), "D's end is after now")
            let refunds = metrics.refunds(from: d(0), to: d(30))
            XCTAssertEqual(refunds.count, 1)
            XCTAssertEqual(refunds.amounts, ["USD": 9990])
            // Paid purchases in [0, 30): a2, c1, d1, e1, f1, g1, h1, h2 = 8, of which g1 was refunded.
            XCTAssertEqual(metrics.refundRate(from: d(0), to: d(30)), 1.0 / 8.0)
        }
    }

    func testAConfiguredPeriodNormalisesThePrice() {
        let weekly = [MetricsSubscription(store: "app_store", periods: [period("w", "weekly", 0, 8, price: 1990, "USD")])]
        for metrics in readings(weekly, configuredPeriods: ["weekly": "P1W"]) {
            // 1,990 × 52 / 12 = 8,623.33 → 8,623 (the 8-day period would round to a week anyway).
            XCTAssertEqual(metrics.mrr(at: d(1)), ["USD": 8623])
        }
        for metrics in readings(weekly, configuredPeriods: ["weekly": "P1M"]) {
            XCTAssertEqual(metrics.mrr(at: d(1)), ["USD": 1990], "configured as a month")
        }
    }

    func testBucketsAreUTCDaysISOWeeksAndCalendarMonths() {
        // 2026-01-01 is a Thursday: its ISO week began on Monday 2025-12-29.
        XCTAssertEqual(MetricsInterval.week.buckets(from: d(0), to: d(1), limit: 10)?.map(\.start), [d(-3)])
        XCTAssertEqual(MetricsInterval.week.buckets(from: d(0), to: d(12), limit: 10)?.map(\.end), [d(4), d(11), d(18)])
        // January has 31 days, February 2026 28.
        XCTAssertEqual(
            MetricsInterval.month.buckets(from: d(10), to: d(60), limit: 10)?.map(\.start), [d(0), d(31), d(59)])
        XCTAssertEqual(MetricsInterval.day.buckets(from: d(0) + 5, to: d(2), limit: 10)?.map(\.start), [d(0), d(1)])
        // 2024 is a leap year: February has 29 days.
        let march2024: Int64 = 1_709_251_200_000  // 2024-03-01T00:00:00Z
        XCTAssertEqual(MetricsInterval.month.buckets(from: march2024 - 1, to: march2024, limit: 10)?.map(\.start), [march2024 - 29 * day])
        XCTAssertNil(MetricsInterval.day.buckets(from: d(0), to: d(1001), limit: 1000), "over the limit, nothing built")
        XCTAssertEqual(MetricsInterval.day.buckets(from: d(0), to: d(1000), limit: 1000)?.count, 1000)
    }
}
