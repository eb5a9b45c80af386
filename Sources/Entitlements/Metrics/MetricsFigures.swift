import Instants

/// The figures of docs/METRICS.md, as every reading of them answers: the writer-kept day sums
/// (`MetricsLedger`) and the tests' direct reading of the definitions over whole subscriptions.
/// Instants are epoch milliseconds; `now` is when the facts are read (a trial that has not ended
/// by then is still running, a subscription still in billing retry has not churned).
package protocol MetricsFigures {
    func activeSubscriptions(at t: Int64) -> Int
    func activeTrials(at t: Int64) -> Int
    /// Monthly recurring revenue at `t` per currency, in milliunits (rounded to the nearest).
    func mrr(at t: Int64) -> MetricAmounts
    func revenue(from a: Int64, to b: Int64) -> MetricAmounts
    func newTrials(from a: Int64, to b: Int64) -> Int
    func trialConversions(from a: Int64, to b: Int64) -> Int
    /// Of the trials started in [a, b) that have ended by `now`: converted ÷ (converted + lapsed);
    /// nil when none has ended.
    func trialConversionRate(from a: Int64, to b: Int64, now: Int64) -> Double?
    func churned(from a: Int64, to b: Int64, now: Int64) -> MetricChurn
    func refunds(from a: Int64, to b: Int64) -> (count: Int, amounts: MetricAmounts)
    /// Of the paid transactions purchased in [a, b) (free trials excluded), the share refunded;
    /// nil when none was purchased.
    func refundRate(from a: Int64, to b: Int64) -> Double?
}

/// Money per currency, in milliunits.
package typealias MetricAmounts = [String: Int64]

/// Churned subscriptions by kind.
package struct MetricChurn: Sendable, Equatable {
    package var voluntary = 0
    package var involuntary = 0
    package var other = 0
    package var total: Int { voluntary + involuntary + other }

    package init(voluntary: Int = 0, involuntary: Int = 0, other: Int = 0) {
        self.voluntary = voluntary
        self.involuntary = involuntary
        self.other = other
    }
}

extension MetricsFigures {
    /// Churned in [a, b) ÷ active subscriptions at a (nil when none was active).
    package func churnRate(from a: Int64, to b: Int64, now: Int64) -> Double? {
        let active = activeSubscriptions(at: a)
        guard active > 0 else { return nil }
        return Double(churned(from: a, to: b, now: now).total) / Double(active)
    }

    /// The value of `name` for the bucket [start, end), the facts read at `now`: a stock at the
    /// bucket's end, or now for the current one.
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
        case .refundRate: return .rate(refundRate(from: start, to: end))
        }
    }
}

/// A subscription period's length as MRR counts it (docs/METRICS.md, "MRR").
package enum MetricPeriod {
    /// A month's price is the period's price × scale ÷ 156 (156 = 12 × 13, so that every
    /// period's month is a whole number of these units: sums stay exact, in any order).
    package static let unitsPerMilliunit: Int64 = 156

    /// The scale of an ISO 8601 period (`P1W`, `P1M`, `P2M`, `P3M`, `P6M`, `P1Y`; `P7D` and
    /// `P12M` too); nil for any other.
    package static func scale(of period: String) -> Int64? {
        switch period {
        case "P1W", "P7D": 676  // 156 × 52 ÷ 12
        case "P1M": 156
        case "P2M": 78
        case "P3M": 52
        case "P6M": 26
        case "P1Y", "P12M": 13
        default: nil
        }
    }

    /// `expiresDate − purchaseDate` rounded to the nearest of the periods above.
    package static func measured(from start: Int64, to end: Int64) -> String {
        let days = Double(end - start) / 86_400_000
        let candidates: [(days: Double, period: String)] = [
            (7, "P1W"), (30.44, "P1M"), (60.88, "P2M"), (91.31, "P3M"), (182.62, "P6M"), (365.25, "P1Y"),
        ]
        return candidates.min { abs($0.days - days) < abs($1.days - days) }!.period
    }

    /// Scaled units to milliunits, to the nearest (halves away from zero).
    package static func milliunits(ofScaled units: Int64) -> Int64 {
        let half = unitsPerMilliunit / 2
        return units >= 0
            ? units.addingSaturating(half) / unitsPerMilliunit : -(units.negatedSaturating.addingSaturating(half) / unitsPerMilliunit)
    }
}
