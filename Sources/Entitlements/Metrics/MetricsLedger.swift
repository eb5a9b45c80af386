import Instants

/// A stored moment, with the store of the subscription that made it.
package struct StoredMetricMoment: Sendable, Equatable {
    package var store: String
    package var moment: MetricMoment
    package var value: Int64

    package init(store: String, moment: MetricMoment, value: Int64) {
        self.store = store
        self.moment = moment
        self.value = value
    }
}

/// The figures read from the writer-kept day sums: the sums of the days from `firstDay` on, and
/// every moment of the days an instant asked falls inside (where a day's sum is too coarse).
///
/// Flows are asked over whole UTC days (the series' buckets); stocks at any instant whose day's
/// moments were read, or at a midnight. (`MetricsService` asks nothing else; the asserts say so
/// in debug builds, and never stop a server.) A stock at t is minus the changes after t: every stretch
/// that began has its end among the moments, so the changes of all time add up to zero, and the
/// changes still to come are few (the ends of the periods running now).
package struct MetricsLedger: MetricsFigures {
    /// Per figure, its sums by day (MRR in `MetricPeriod` units), with running totals.
    private var days: [MetricFigure: DaySums] = [:]
    /// Lapsed trials by start day: (day they lapsed, how many).
    private var lapsedByOrigin: [Int64: [(day: Int64, count: Int64)]] = [:]
    private var moments: [StoredMetricMoment] = []
    private let firstDay: Int64
    private let momentDays: Set<Int64>

    /// `includes`: whether a store and product count (the filter asked); `configuredPeriods`:
    /// products' `"period"`, which replaces the measured one for MRR.
    package init(
        firstDay: Int64, sums: [(key: MetricDayKey, value: Int64)], momentDays: Set<Int64>, moments: [StoredMetricMoment],
        configuredPeriods: [String: String], includes: (_ store: String, _ productId: String) -> Bool
    ) {
        self.firstDay = firstDay
        self.momentDays = momentDays
        func scaled(_ figure: MetricFigure, _ productId: String, _ period: String, _ value: Int64) -> Int64 {
            guard figure == .mrr else { return value }
            let length = configuredPeriods[productId] ?? period
            return value.multipliedSaturating(by: MetricPeriod.scale(of: length) ?? MetricPeriod.unitsPerMilliunit)
        }
        var byFigure: [MetricFigure: [Int64: MetricAmounts]] = [:]
        for (key, value) in sums where key.day >= firstDay && includes(key.store, key.productId) {
            byFigure[key.figure, default: [:]][key.day, default: [:]][key.currency, default: 0].addSaturating(
                scaled(key.figure, key.productId, key.period, value))
            if key.figure == .lapsedTrial { lapsedByOrigin[key.originDay, default: []].append((key.day, value)) }
        }
        days = byFigure.mapValues(DaySums.init)
        self.moments = moments.compactMap { stored in
            guard includes(stored.store, stored.moment.productId) else { return nil }
            var scaledMoment = stored
            scaledMoment.value = scaled(stored.moment.figure, stored.moment.productId, stored.moment.period, stored.value)
            return scaledMoment
        }
    }

    private static func day(_ t: Int64) -> Int64 { t.floorDivided(by: MetricMoment.dayMs) }
    private static func midnight(_ day: Int64) -> Int64 { day * MetricMoment.dayMs }

    // MARK: - Stocks

    /// Σ of a stock's changes up to and including `t`.
    private func stock(_ figure: MetricFigure, at t: Int64) -> MetricAmounts {
        let day = Self.day(t)
        assert(day + 1 >= firstDay, "the sums begin after the instant asked")
        var total = (days[figure] ?? DaySums()).total(from: day + 1, to: .max).mapValues(\.negatedSaturating)
        if t != Self.midnight(day) {
            assert(momentDays.contains(day), "the moments of the instant's day were not read")
            for stored in moments where stored.moment.figure == figure && stored.moment.at > Self.midnight(day) && stored.moment.at <= t {
                total[stored.moment.currency, default: 0].addSaturating(stored.value)
            }
        }
        return total
    }

    package func activeSubscriptions(at t: Int64) -> Int { Int(stock(.active, at: t)[""] ?? 0) }
    package func activeTrials(at t: Int64) -> Int { Int(stock(.trial, at: t)[""] ?? 0) }
    package func mrr(at t: Int64) -> MetricAmounts { Self.nonZero(stock(.mrr, at: t).mapValues(MetricPeriod.milliunits(ofScaled:))) }

    // MARK: - Flows over whole days

    /// Σ of a flow over the days of [a, b); one that waits for its instant only up to `now`.
    private func flow(_ figure: MetricFigure, from a: Int64, to b: Int64, now: Int64 = .max) -> MetricAmounts {
        let (first, end) = Self.days(from: a, to: b)
        assert(first >= firstDay, "the sums begin after the range asked")
        let nowDay = Self.day(now)
        var total = (days[figure] ?? DaySums()).total(from: first, to: figure.waitsForItsInstant ? min(end, nowDay) : end)
        if figure.waitsForItsInstant, nowDay >= first, nowDay < end { add(figure, on: nowDay, upTo: now, to: &total) }
        return total
    }

    /// The moments of `day` up to `t` (the day `now` is in).
    private func add(
        _ figure: MetricFigure, on day: Int64, upTo t: Int64, where accepts: (MetricMoment) -> Bool = { _ in true },
        to total: inout MetricAmounts
    ) {
        assert(momentDays.contains(day), "the moments of now's day were not read")
        for stored in moments where stored.moment.figure == figure && Self.day(stored.moment.at) == day && stored.moment.at <= t {
            if accepts(stored.moment) { total[stored.moment.currency, default: 0].addSaturating(stored.value) }
        }
    }

    /// [a, b) as days; both must be midnights.
    private static func days(from a: Int64, to b: Int64) -> (Int64, Int64) {
        assert(a == midnight(day(a)) && b == midnight(day(b)), "flows are read over whole days")
        return (day(a), day(b))
    }

    private func count(_ figure: MetricFigure, from a: Int64, to b: Int64, now: Int64 = .max) -> Int {
        Int(flow(figure, from: a, to: b, now: now)[""] ?? 0)
    }

    package func revenue(from a: Int64, to b: Int64) -> MetricAmounts { Self.nonZero(flow(.revenue, from: a, to: b)) }
    package func newTrials(from a: Int64, to b: Int64) -> Int { count(.newTrial, from: a, to: b) }
    package func trialConversions(from a: Int64, to b: Int64) -> Int { count(.conversion, from: a, to: b) }

    package func trialConversionRate(from a: Int64, to b: Int64, now: Int64) -> Double? {
        let converted = count(.convertedTrial, from: a, to: b)
        let (first, end) = Self.days(from: a, to: b)
        let nowDay = Self.day(now)
        var lapsed: Int64 = 0
        for origin in first..<end {
            for entry in lapsedByOrigin[origin] ?? [] where entry.day < nowDay { lapsed.addSaturating(entry.count) }
        }
        var today: MetricAmounts = [:]
        add(.lapsedTrial, on: nowDay, upTo: now, where: { (first..<end).contains($0.originDay) }, to: &today)
        lapsed.addSaturating(today[""] ?? 0)
        let decided = Int64(converted).addingSaturating(lapsed)
        return decided == 0 ? nil : Double(converted) / Double(decided)
    }

    package func churned(from a: Int64, to b: Int64, now: Int64) -> MetricChurn {
        MetricChurn(
            voluntary: count(.churnVoluntary, from: a, to: b, now: now), involuntary: count(.churnInvoluntary, from: a, to: b, now: now),
            other: count(.churnOther, from: a, to: b, now: now))
    }

    package func refunds(from a: Int64, to b: Int64) -> (count: Int, amounts: MetricAmounts) {
        (count(.refund, from: a, to: b), Self.nonZero(flow(.refundAmount, from: a, to: b)))
    }

    package func refundRate(from a: Int64, to b: Int64) -> Double? {
        let purchased = count(.paidPurchase, from: a, to: b)
        guard purchased > 0 else { return nil }
        return Double(count(.refundedPurchase, from: a, to: b)) / Double(purchased)
    }

    private static func nonZero(_ amounts: MetricAmounts) -> MetricAmounts { amounts.filter { $0.value != 0 } }
}

/// One figure's sums by day, in day order, with running totals: the sum over any run of days is
/// two lookups and a difference (a 90-day series asks 90 of them).
private struct DaySums {
    private var days: [Int64] = []
    /// `before[i]`: the sum of the days before `days[i]`; one more at the end, the sum of all.
    private var before: [MetricAmounts] = [[:]]

    init() {}

    init(_ byDay: [Int64: MetricAmounts]) {
        days = byDay.keys.sorted()
        before.reserveCapacity(days.count + 1)
        var running: MetricAmounts = [:]
        for day in days {
            for (currency, value) in byDay[day]! { running[currency, default: 0].addSaturating(value) }
            before.append(running)
        }
    }

    /// The sum of the days in [from, to).
    func total(from: Int64, to: Int64) -> MetricAmounts {
        guard from < to else { return [:] }
        let upper = before[index(to)]
        let lower = before[index(from)]
        return upper.merging(lower.mapValues(\.negatedSaturating)) { $0.addingSaturating($1) }
    }

    /// The position of the first day at or after `day`.
    private func index(_ day: Int64) -> Int {
        var low = 0
        var high = days.count
        while low < high {
            let middle = (low + high) / 2
            if days[middle] < day { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
