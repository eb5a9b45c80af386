import Entitlements
import Instants
import XCTest

/// Money that no store charges can still be stored (a row from before prices were checked, a
/// database edited by hand): no figure may trap on it. Sums hold at Int64's bounds instead.
final class MetricsExtremeValuesTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    private func subscription(price: Int64, refunded: Bool) -> MetricsSubscription {
        MetricsSubscription(
            store: "app_store",
            periods: [
                MetricsPeriod(
                    transactionId: "1", productId: "weekly", start: start + 1000, end: start + 7 * day + 1000, isTrial: false,
                    priceMilliunits: price, currency: "USD", refundedAt: refunded ? start + 2 * day : nil),
                MetricsPeriod(
                    transactionId: "2", productId: "weekly", start: start + 7 * day + 1000, end: start + 14 * day, isTrial: false,
                    priceMilliunits: price, currency: "USD"),
            ])
    }

    func testMomentsAndEveryFigureHoldAtTheEdgesOfInt64() {
        for price in [Int64.max, .min, .max - 1, .min + 1] {
            var sums: [MetricDayKey: Int64] = [:]
            var moments: [StoredMetricMoment] = []
            for refunded in [false, true] {
                // Three subscriptions of the same key: their sums overflow whatever the price's sign.
                for _ in 0..<3 {
                    for (moment, value) in subscription(price: price, refunded: refunded).moments {
                        let key = MetricDayKey(
                            store: "app_store", figure: moment.figure, day: moment.day, productId: moment.productId,
                            currency: moment.currency, period: moment.period, originDay: moment.originDay)
                        sums[key] = (sums[key] ?? 0).addingSaturating(value)
                        moments.append(StoredMetricMoment(store: "app_store", moment: moment, value: value))
                    }
                }
            }
            let ledger = MetricsLedger(
                firstDay: start / day - 1, sums: sums.map { ($0.key, $0.value) }, momentDays: Set((start / day - 1)...(start / day + 30)),
                moments: moments, configuredPeriods: ["weekly": "P1W"], includes: { _, _ in true })
            for offset in stride(from: Int64(0), through: 20 * day, by: Int(day / 2)) {
                let t = start + offset
                _ = ledger.activeSubscriptions(at: t)
                _ = ledger.mrr(at: t)
                _ = ledger.churned(from: start, to: start + 21 * day, now: t)
                _ = ledger.trialConversionRate(from: start, to: start + 21 * day, now: t)
            }
            for name in MetricName.allCases {
                _ = ledger.value(name, start: start, end: start + 21 * day, now: start + 10 * day + 123)
            }
            XCTAssertNotNil(ledger.revenue(from: start, to: start + 21 * day)["USD"], "revenue of price \(price) is held, not lost")
        }
    }

    func testSaturatingArithmeticHoldsAtBothEdges() {
        XCTAssertEqual(Int64.max.addingSaturating(1), .max)
        XCTAssertEqual(Int64.min.addingSaturating(-1), .min)
        XCTAssertEqual(Int64(5).addingSaturating(-7), -2)
        XCTAssertEqual(Int64.max.multipliedSaturating(by: 676), .max)
        XCTAssertEqual(Int64.min.multipliedSaturating(by: 676), .min)
        XCTAssertEqual(Int64.min.multipliedSaturating(by: -1), .max)
        XCTAssertEqual(Int64.min.negatedSaturating, .max)
        XCTAssertEqual(MetricPeriod.milliunits(ofScaled: .max), Int64.max / 156)
        XCTAssertEqual(MetricPeriod.milliunits(ofScaled: .min), -(Int64.max / 156))
        XCTAssertEqual(MetricPeriod.milliunits(ofScaled: 78), 1)
        XCTAssertEqual(MetricPeriod.milliunits(ofScaled: -78), -1)
    }
}
