import Instants

/// The figures of docs/METRICS.md over time: buckets of UTC days, ISO weeks (Monday first) or
/// calendar months, each figure as a value per bucket.
package enum MetricsInterval: String, Sendable, CaseIterable {
    case day, week, month

    private static let dayMs: Int64 = 86_400_000

    /// The bucket boundaries covering [from, to): the first bucket starts at or before `from`.
    /// Nil when there would be more than `limit` (a range of centuries in days must cost nothing).
    /// Buckets are clipped to the instants Entitle accepts (a week holding 0000-12-30 would begin
    /// before it, a month of December 9999 end in year 10000), so every boundary written reads back.
    package func buckets(from: Int64, to: Int64, limit: Int) -> [(start: Int64, end: Int64)]? {
        var buckets: [(Int64, Int64)] = []
        var start = floor(from)
        while start < to {
            guard buckets.count < limit else { return nil }
            let end = next(start)
            buckets.append((max(start, Milliseconds.range.lowerBound), min(end, Milliseconds.range.upperBound)))
            start = end
        }
        return buckets
    }

    /// The start of the bucket holding `instant`.
    func floor(_ instant: Int64) -> Int64 {
        let days = instant.floorDivided(by: Self.dayMs)
        switch self {
        case .day: return days * Self.dayMs
        case .week:
            // 1970-01-01 was a Thursday: Monday is three days later, modulo seven.
            let sinceMonday = ((days - 4) % 7 + 7) % 7
            return (days - sinceMonday) * Self.dayMs
        case .month:
            let date = CivilDate(daysSince1970: days)
            return CivilDate(year: date.year, month: date.month, day: 1).daysSince1970 * Self.dayMs
        }
    }

    private func next(_ start: Int64) -> Int64 {
        switch self {
        case .day: return start + Self.dayMs
        case .week: return start + 7 * Self.dayMs
        case .month:
            let date = CivilDate(daysSince1970: start.floorDivided(by: Self.dayMs))
            let next =
                date.month == 12
                ? CivilDate(year: date.year + 1, month: 1, day: 1) : CivilDate(year: date.year, month: date.month + 1, day: 1)
            return next.daysSince1970 * Self.dayMs
        }
    }
}

/// Which figure a series shows.
package enum MetricName: String, Sendable, CaseIterable {
    case activeSubscriptions = "active-subscriptions"
    case activeTrials = "active-trials"
    case mrr
    case revenue
    case newTrials = "new-trials"
    case trialConversions = "trial-conversions"
    case trialConversionRate = "trial-conversion-rate"
    case churnedSubscriptions = "churned-subscriptions"
    case churnRate = "churn-rate"
    case refunds
    case refundRate = "refund-rate"

    /// Stocks are read at an instant (the end of the bucket, or now); the rest over the bucket.
    package var isStock: Bool { self == .activeSubscriptions || self == .activeTrials || self == .mrr }

    /// How the figure is named for people (the console's chart titles come from here).
    package var title: String {
        switch self {
        case .activeSubscriptions: "Active subscriptions"
        case .activeTrials: "Active trials"
        case .mrr: "MRR"
        case .revenue: "Revenue"
        case .newTrials: "New trials"
        case .trialConversions: "Trial conversions"
        case .trialConversionRate: "Trial conversion rate"
        case .churnedSubscriptions: "Churned subscriptions"
        case .churnRate: "Churn rate"
        case .refunds: "Refunds"
        case .refundRate: "Refund rate"
        }
    }

    /// What a bucket's value is: `money` (per currency), `count`, `rate` (a share, or none), or
    /// `churn` (by kind).
    package var valueKind: String {
        switch self {
        case .mrr, .revenue: "money"
        case .activeSubscriptions, .activeTrials, .newTrials, .trialConversions, .refunds: "count"
        case .trialConversionRate, .churnRate, .refundRate: "rate"
        case .churnedSubscriptions: "churn"
        }
    }
}

/// One bucket's value: a count, a rate (nil when nothing was there to divide), money per
/// currency, or churn by kind.
package enum MetricValue: Sendable, Equatable {
    case count(Int)
    case rate(Double?)
    case money(MetricAmounts)
    case churn(MetricChurn)
    case refunds(count: Int, amounts: MetricAmounts)
}
