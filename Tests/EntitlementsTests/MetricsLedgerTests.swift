import Entitlements
import Instants
import XCTest

/// The day sums give every figure the definitions give, on populations no one chose: random
/// periods (trials, renewals at and off midnight, upgrades, refunds, grace, billing retry, two
/// currencies, several products), asked on every day, week and month and at random instants.
final class MetricsLedgerTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// SplitMix64: the same populations on every run.
    private struct Random {
        var state: UInt64
        mutating func next(_ bound: Int64) -> Int64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int64((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    private func population(_ random: inout Random) -> [MetricsSubscription] {
        (0..<40).map { index in
            var periods: [MetricsPeriod] = []
            // Half begin at a midnight, half within a day.
            var t = start + random.next(60) * day + (random.next(2) == 0 ? 0 : random.next(day))
            let product = ["monthly", "yearly", "weekly"][Int(random.next(3))]
            let currency = random.next(3) == 0 ? "EUR" : "USD"
            if random.next(2) == 0 {
                let end = t + 7 * day
                periods.append(
                    MetricsPeriod(
                        transactionId: "\(index)-t", productId: product, start: t, end: end, isTrial: true, priceMilliunits: 0,
                        currency: currency))
                t = end + (random.next(4) == 0 ? random.next(3 * day) : 0)
            }
            for renewal in 0..<random.next(4) {
                let length = (product == "yearly" ? 365 : product == "weekly" ? 7 : 30) * day
                let refunded: Int64? = random.next(8) == 0 ? t + random.next(length) : nil
                periods.append(
                    MetricsPeriod(
                        transactionId: "\(index)-\(renewal)", productId: product, start: t, end: t + length, isTrial: false,
                        priceMilliunits: 990 + random.next(50_000), currency: currency, refundedAt: refunded))
                // Renewals start where the last ended, a little before (Apple's do), or after a gap.
                t = t + length - (random.next(3) == 0 ? random.next(day) : 0) + (random.next(5) == 0 ? random.next(10 * day) : 0)
            }
            if random.next(6) == 0, periods.count >= 2 {
                // An upgrade: the last period is cut where a new product's begins.
                let last = periods[periods.count - 1]
                let upgradeAt = last.start + random.next(max(1, last.end - last.start))
                periods[periods.count - 1].end = upgradeAt
                periods.append(
                    MetricsPeriod(
                        transactionId: "\(index)-u", productId: "premium", start: upgradeAt, end: upgradeAt + 30 * day, isTrial: false,
                        priceMilliunits: 19_990, currency: currency))
            }
            let grace: Int64? = random.next(5) == 0 ? (periods.last?.end ?? t) + random.next(16 * day) : nil
            return MetricsSubscription(
                store: random.next(4) == 0 ? "play_store" : "app_store", periods: periods, gracePeriodExpiresDate: grace,
                isInBillingRetry: random.next(6) == 0, autoRenewOff: random.next(3) == 0,
                expirationReason: [nil, 1, 2][Int(random.next(3))])
        }
    }

    func testTheDaySumsGiveWhatTheDefinitionsGive() {
        var random = Random(state: 20_261_202)
        let configured = ["weekly": "P1W"]
        for _ in 0..<25 {
            let subscriptions = population(&random)
            let now = start + random.next(200) * day + random.next(day)
            let instants = (0..<20).map { _ in start - 10 * day + random.next(220 * day) } + [now]
            let nowDay = now / day
            let momentDays = Set(instants.map { $0 / day } + [nowDay])
            let ledger = BusinessMetricsTests.ledger(subscriptions, configuredPeriods: configured, momentDays: Array(momentDays))
            let reference = ReferenceMetrics(subscriptions: subscriptions, configuredPeriods: configured)
            for t in instants {
                XCTAssertEqual(ledger.activeSubscriptions(at: t), reference.activeSubscriptions(at: t), "active at \(t)")
                XCTAssertEqual(ledger.activeTrials(at: t), reference.activeTrials(at: t), "trials at \(t)")
                XCTAssertEqual(ledger.mrr(at: t), reference.mrr(at: t), "MRR at \(t)")
            }
            for interval in MetricsInterval.allCases {
                let buckets = interval.buckets(from: start - 20 * day, to: start + 460 * day, limit: 1000)!
                for bucket in buckets {
                    for name in MetricName.allCases {
                        XCTAssertEqual(
                            ledger.value(name, start: bucket.start, end: bucket.end, now: now),
                            reference.value(name, start: bucket.start, end: bucket.end, now: now), "\(name) in \(interval) \(bucket)")
                    }
                }
            }
        }
    }

    /// A read at an instant takes, of its day, only the hours before its hour, the minutes before
    /// its minute and the moments of its minute (`MetricsInstant`): the figures are still the
    /// definitions' at every instant, on and beside every bucket's boundary (a stock change at a
    /// midnight, an hour or a minute belongs to the bucket that ends there).
    func testHourAndMinuteSumsGiveWhatEveryMomentOfTheDayGives() {
        var random = Random(state: 20_261_204)
        let configured = ["weekly": "P1W"]
        let hour: Int64 = 3_600_000
        let minute: Int64 = 60_000
        for _ in 0..<12 {
            // A quarter of the periods begin and end on a minute, a quarter on ten minutes, a quarter
            // on an hour: stock changes
            // exactly at a bucket's boundary are where a bucket is easiest to count twice.
            let subscriptions = population(&random).enumerated().map { index, subscription in
                var aligned = subscription
                let width = [minute, 10 * minute, hour, 1][index % 4]
                aligned.periods = subscription.periods.map { period in
                    var period = period
                    period.start -= period.start % width
                    period.end = max(period.start, period.end - period.end % width)
                    period.refundedAt = period.refundedAt.map { $0 - $0 % width }
                    return period
                }
                return aligned
            }
            var sums: [MetricDayKey: Int64] = [:]
            var buckets: [MetricBucketWidth: [MetricDayKey: Int64]] = [:]
            var stored: [StoredMetricMoment] = []
            for subscription in subscriptions {
                let change = MetricMomentsChange(from: [:], to: subscription.moments, store: subscription.store)
                for (key, delta) in change.dayDeltas { sums[key, default: 0] += delta }
                for (width, key, delta) in change.bucketDeltas { buckets[width, default: [:]][key, default: 0] += delta }
                stored += change.put.map { StoredMetricMoment(store: subscription.store, moment: $0.moment, value: $0.value) }
            }
            let reference = ReferenceMetrics(subscriptions: subscriptions, configuredPeriods: configured)
            // Instants at and beside the moments themselves and the boundaries of their buckets.
            var instants: [Int64] = []
            for _ in 0..<12 {
                let at = stored[Int(random.next(Int64(stored.count)))].moment.at
                for base in [at, at - at % minute, at - at % (10 * minute), at - at % hour, at - at % day] {
                    instants += [base - 1, base, base + 1]
                }
                instants.append(start + random.next(200 * day))
            }
            for t in instants {
                func read(
                    _ width: MetricBucketWidth, _ spans: (stocks: MetricBucketSpan, flows: MetricBucketSpan)
                ) -> [(key: MetricDayKey, value: Int64)] {
                    MetricBucketSpan.totals((buckets[width] ?? [:]).map { ($0.key, $0.value) }, stocks: spans.stocks, flows: spans.flows)
                }
                let standing = MetricsInstant.standing(
                    at: t, totals: read,
                    moments: { from, to in stored.filter { $0.moment.at >= from && $0.moment.at < to } })
                let ledger = MetricsLedger(
                    firstDay: 0, sums: sums.map { ($0.key, $0.value) }, momentDays: [t.floorDivided(by: day)], moments: standing,
                    configuredPeriods: configured, includes: { _, _ in true })
                XCTAssertEqual(ledger.activeSubscriptions(at: t), reference.activeSubscriptions(at: t), "active at \(t)")
                XCTAssertEqual(ledger.activeTrials(at: t), reference.activeTrials(at: t), "trials at \(t)")
                XCTAssertEqual(ledger.mrr(at: t), reference.mrr(at: t), "MRR at \(t)")
                let stocksOnly = MetricsLedger(
                    firstDay: t.floorDivided(by: day), sums: sums.map { ($0.key, $0.value) }, momentDays: [t.floorDivided(by: day)],
                    moments: MetricsInstant.standing(
                        at: t, flows: false, totals: read,
                        moments: { from, to in stored.filter { $0.moment.at >= from && $0.moment.at < to } }),
                    configuredPeriods: configured, includes: { _, _ in true })
                XCTAssertEqual(stocksOnly.activeSubscriptions(at: t), reference.activeSubscriptions(at: t), "active at \(t), stocks only")
                XCTAssertEqual(stocksOnly.activeTrials(at: t), reference.activeTrials(at: t), "trials at \(t), stocks only")
                XCTAssertEqual(stocksOnly.mrr(at: t), reference.mrr(at: t), "MRR at \(t), stocks only")
                let today = t - ((t % day) + day) % day
                for bucket in [(today - day, today), (today, today + day), (today - 7 * day, today + day)] {
                    for name in MetricName.allCases {
                        XCTAssertEqual(
                            ledger.value(name, start: bucket.0, end: bucket.1, now: t),
                            reference.value(name, start: bucket.0, end: bucket.1, now: t), "\(name) over \(bucket) at \(t)")
                    }
                }
            }
        }
    }

    /// The writer adds each change's difference: after any sequence of a subscription's states
    /// (periods arriving one by one, a refund, the renewal info changing), the sums are those of
    /// its last state alone.
    func testChangesAddUpToTheLastStatesSums() {
        var random = Random(state: 7)
        for subscription in population(&random) {
            var states: [MetricsSubscription] = (0...subscription.periods.count).map { count in
                var state = subscription
                state.periods = Array(subscription.periods.prefix(count))
                state.gracePeriodExpiresDate = nil
                state.isInBillingRetry = false
                return state
            }
            states.append(subscription)
            var stored: [MetricMoment: Int64] = [:]
            var sums: [MetricDayKey: Int64] = [:]
            for state in states {
                let change = MetricMomentsChange(from: stored, to: state.moments, store: state.store)
                for moment in change.removed { stored[moment] = nil }
                for (moment, value) in change.put { stored[moment] = value }
                for (key, delta) in change.dayDeltas { sums[key, default: 0] += delta }
            }
            XCTAssertEqual(stored, subscription.moments)
            let direct = MetricMomentsChange(from: [:], to: subscription.moments, store: subscription.store).dayDeltas
            XCTAssertEqual(sums.filter { $0.value != 0 }, Dictionary(uniqueKeysWithValues: direct.map { ($0.key, $0.delta) }))
        }
    }
}
