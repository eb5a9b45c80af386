/// The business figures of docs/METRICS.md, computed exactly from subscriptions' periods. Pure:
/// every instant is a parameter (`now` is the instant the facts are read at: a trial that has
/// not ended by then is still running, a subscription still in billing retry has not churned).
package struct BusinessMetrics: Sendable {
    package let subscriptions: [MetricsSubscription]
    /// Every period of every subscription, gathered once for the flows.
    private let allPeriods: [MetricsPeriod]
    /// Months in a product's period, from its configured ISO 8601 `period` (`P1W`, `P1M`, …);
    /// a product without one is measured from its period's length.
    package let monthsPerPeriod: [String: Double]

    package init(subscriptions: [MetricsSubscription], configuredPeriods: [String: String] = [:]) {
        self.subscriptions = subscriptions
        allPeriods = subscriptions.flatMap(\.periods)
        monthsPerPeriod = configuredPeriods.compactMapValues(Self.months(ofPeriod:))
    }

    /// Money per currency (milliunits), in the order currencies were first met.
    package typealias Amounts = [String: Int64]

    // MARK: - Stocks at an instant

    /// Subscriptions with a paid period at `t`, and the period.
    private func paid(at t: Int64) -> [(subscription: MetricsSubscription, period: MetricsPeriod)] {
        subscriptions.compactMap { subscription in
            for index in subscription.periods.indices.reversed() {
                let period = subscription.periods[index]
                if !period.isTrial, period.start <= t, t < subscription.effectiveEnd(of: index) { return (subscription, period) }
            }
            return nil
        }
    }

    package func activeSubscriptions(at t: Int64) -> Int { paid(at: t).count }

    package func activeTrials(at t: Int64) -> Int {
        subscriptions.count { subscription in
            subscription.periods.indices.contains { index in
                let period = subscription.periods[index]
                return period.isTrial && period.start <= t && t < subscription.effectiveEnd(of: index)
            }
        }
    }

    /// Monthly recurring revenue at `t` per currency, in milliunits (rounded to the nearest).
    package func mrr(at t: Int64) -> Amounts {
        var total: [String: Double] = [:]
        for (_, period) in paid(at: t) {
            total[period.currency, default: 0] += Double(period.priceMilliunits) / months(of: period)
        }
        return total.mapValues { Int64($0.rounded()) }
    }

    /// The months a period stands for: the product's configured period, else its length rounded
    /// to the nearest of one week, one, two, three or six months, or a year.
    func months(of period: MetricsPeriod) -> Double {
        if let configured = monthsPerPeriod[period.productId] { return configured }
        let days = Double(period.end - period.start) / 86_400_000
        let candidates: [(days: Double, months: Double)] = [
            (7, 12.0 / 52), (30.44, 1), (60.88, 2), (91.31, 3), (182.62, 6), (365.25, 12),
        ]
        return candidates.min { abs($0.days - days) < abs($1.days - days) }!.months
    }

    package static func months(ofPeriod text: String) -> Double? {
        switch text {
        case "P1W", "P7D": 12.0 / 52
        case "P1M": 1
        case "P2M": 2
        case "P3M": 3
        case "P6M": 6
        case "P1Y", "P12M": 12
        default: nil
        }
    }

    // MARK: - Flows over [a, b)

    /// Prices of transactions purchased in [a, b), less the prices of those refunded in [a, b).
    package func revenue(from a: Int64, to b: Int64) -> Amounts {
        var amounts: Amounts = [:]
        for period in allPeriods {
            if (a..<b).contains(period.start) { amounts[period.currency, default: 0] += period.priceMilliunits }
            if let refunded = period.refundedAt, (a..<b).contains(refunded) {
                amounts[period.currency, default: 0] -= period.priceMilliunits
            }
        }
        return amounts
    }

    package func newTrials(from a: Int64, to b: Int64) -> Int {
        allPeriods.count { $0.isTrial && (a..<b).contains($0.start) }
    }

    /// Each trial and whether the period after it is paid (nil: the trial has not ended by `now`
    /// and nothing followed yet).
    private func trialOutcomes(now: Int64) -> [(trial: MetricsPeriod, converted: Bool?)] {
        subscriptions.flatMap { subscription in
            subscription.periods.indices.compactMap { index -> (MetricsPeriod, Bool?)? in
                let trial = subscription.periods[index]
                guard trial.isTrial else { return nil }
                if index + 1 < subscription.periods.count, !subscription.periods[index + 1].isTrial { return (trial, true) }
                return (trial, subscription.effectiveEnd(of: index) <= now ? false : nil)
            }
        }
    }

    /// Paid periods starting in [a, b) that directly follow a free trial of the same subscription.
    package func trialConversions(from a: Int64, to b: Int64) -> Int {
        subscriptions.reduce(0) { count, subscription in
            count
                + subscription.periods.indices.dropFirst().count { index in
                    let period = subscription.periods[index]
                    return !period.isTrial && subscription.periods[index - 1].isTrial && (a..<b).contains(period.start)
                }
        }
    }

    /// Of the trials started in [a, b) that have ended by `now`: converted ÷ (converted + lapsed);
    /// nil when none has ended.
    package func trialConversionRate(from a: Int64, to b: Int64, now: Int64) -> Double? {
        let decided = trialOutcomes(now: now).filter { (a..<b).contains($0.trial.start) }.compactMap(\.converted)
        guard !decided.isEmpty else { return nil }
        return Double(decided.count { $0 }) / Double(decided.count)
    }

    package struct Churn: Sendable, Equatable {
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

    /// Subscriptions whose last paid period ended in [a, b) (grace included) and did not renew,
    /// by `now`; one still in billing retry has not churned, a trial that lapsed never paid.
    package func churned(from a: Int64, to b: Int64, now: Int64) -> Churn {
        var churn = Churn()
        for subscription in subscriptions where !subscription.isInBillingRetry {
            guard let last = subscription.periods.indices.last, !subscription.periods[last].isTrial else { continue }
            let end = subscription.effectiveEnd(of: last)
            guard end <= now, (a..<b).contains(end) else { continue }
            if subscription.expirationReason == 2 {
                churn.involuntary += 1
            } else if subscription.expirationReason == 1 || subscription.autoRenewOff {
                churn.voluntary += 1
            } else {
                churn.other += 1
            }
        }
        return churn
    }

    /// Churned in [a, b) ÷ active subscriptions at a (nil when none was active).
    package func churnRate(from a: Int64, to b: Int64, now: Int64) -> Double? {
        let active = activeSubscriptions(at: a)
        guard active > 0 else { return nil }
        return Double(churned(from: a, to: b, now: now).total) / Double(active)
    }

    /// Transactions refunded in [a, b): how many, and their prices per currency.
    package func refunds(from a: Int64, to b: Int64) -> (count: Int, amounts: Amounts) {
        var amounts: Amounts = [:]
        var count = 0
        for period in allPeriods {
            guard let refunded = period.refundedAt, (a..<b).contains(refunded) else { continue }
            count += 1
            amounts[period.currency, default: 0] += period.priceMilliunits
        }
        return (count, amounts)
    }

    /// Of the paid transactions purchased in [a, b) (free trials excluded), the share refunded
    /// by `now`; nil when none was purchased.
    package func refundRate(from a: Int64, to b: Int64, now: Int64) -> Double? {
        let purchased = allPeriods.filter { !$0.isTrial && (a..<b).contains($0.start) }
        guard !purchased.isEmpty else { return nil }
        return Double(purchased.count { ($0.refundedAt ?? .max) <= now }) / Double(purchased.count)
    }
}
