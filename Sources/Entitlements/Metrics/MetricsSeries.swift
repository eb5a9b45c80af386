/// The figures of docs/METRICS.md over time: buckets of UTC days, ISO weeks (Monday first) or
/// calendar months, each figure as a value per bucket.
package enum MetricsInterval: String, Sendable, CaseIterable {
    case day, week, month

    private static let dayMs: Int64 = 86_400_000

    /// The bucket boundaries covering [from, to): the first bucket starts at or before `from`.
    /// Nil when there would be more than `limit` (a range of centuries in days must cost nothing).
    package func buckets(from: Int64, to: Int64, limit: Int) -> [(start: Int64, end: Int64)]? {
        var buckets: [(Int64, Int64)] = []
        var start = floor(from)
        while start < to {
            guard buckets.count < limit else { return nil }
            let end = next(start)
            buckets.append((start, end))
            start = end
        }
        return buckets
    }

    /// The start of the bucket holding `instant`.
    func floor(_ instant: Int64) -> Int64 {
        let days = instant >= 0 ? instant / Self.dayMs : (instant - Self.dayMs + 1) / Self.dayMs
        switch self {
        case .day: return days * Self.dayMs
        case .week:
            // 1970-01-01 was a Thursday: Monday is three days later, modulo seven.
            let sinceMonday = ((days - 4) % 7 + 7) % 7
            return (days - sinceMonday) * Self.dayMs
        case .month:
            let (year, month, _) = Self.civil(days)
            return Self.days(year: year, month: month, day: 1) * Self.dayMs
        }
    }

    private func next(_ start: Int64) -> Int64 {
        switch self {
        case .day: return start + Self.dayMs
        case .week: return start + 7 * Self.dayMs
        case .month:
            let (year, month, _) = Self.civil(start / Self.dayMs)
            return Self.days(year: month == 12 ? year + 1 : year, month: month == 12 ? 1 : month + 1, day: 1) * Self.dayMs
        }
    }

    /// Year, month, day of a count of days since 1970-01-01 (proleptic Gregorian).
    static func civil(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days since 1970-01-01 of a civil date.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
}

/// One bucket's value: a count, a rate (nil when nothing was there to divide), money per
/// currency, or churn by kind.
package enum MetricValue: Sendable, Equatable {
    case count(Int)
    case rate(Double?)
    case money(BusinessMetrics.Amounts)
    case churn(BusinessMetrics.Churn)
    case refunds(count: Int, amounts: BusinessMetrics.Amounts)
}

extension BusinessMetrics {
    /// The value of `name` for the bucket [start, end), the facts read at `now`.
    package func value(_ name: MetricName, start: Int64, end: Int64, now: Int64) -> MetricValue {
        let at = min(end, now)
        switch name {
        case .activeSubscriptions: return .count(activeSubscriptions(at: at))
        case .activeTrials: return .count(activeTrials(at: at))
        case .mrr: return .money(mrr(at: at))
        case .revenue: return .money(revenue(from: start, to: end))
        case .newTrials: return .count(newTrials(from: start, to: end))
        case .trialConversions: return .count(trialConversions(from: start, to: end))
        case .trialConversionRate: return .rate(trialConversionRate(from: start, to: end, now: now))
        case .churnedSubscriptions: return .churn(churned(from: start, to: end, now: now))
        case .churnRate: return .rate(churnRate(from: start, to: end, now: now))
        case .refunds:
            let refunds = refunds(from: start, to: end)
            return .refunds(count: refunds.count, amounts: refunds.amounts)
        case .refundRate: return .rate(refundRate(from: start, to: end, now: now))
        }
    }
}
