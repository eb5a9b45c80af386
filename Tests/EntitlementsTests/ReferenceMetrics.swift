import Entitlements

/// The figures of docs/METRICS.md read straight from the definitions, over whole subscriptions:
/// what the tests compare the writer-kept sums (`MetricsLedger`) with. Written apart from them
/// on purpose: it walks periods, the ledger adds up moments.
struct ReferenceMetrics: MetricsFigures {
    let subscriptions: [MetricsSubscription]
    /// Every period of every subscription, gathered once for the flows.
    private let allPeriods: [MetricsPeriod]
    /// Products' configured ISO 8601 `period`s; a product without one is measured from its length.
    let configuredPeriods: [String: String]

    init(subscriptions: [MetricsSubscription], configuredPeriods: [String: String] = [:]) {
        self.subscriptions = subscriptions
        allPeriods = subscriptions.flatMap(\.periods)
        self.configuredPeriods = configuredPeriods
    }

    typealias Amounts = MetricAmounts
    typealias Churn = MetricChurn

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

    func activeSubscriptions(at t: Int64) -> Int { paid(at: t).count }

    func activeTrials(at t: Int64) -> Int {
        subscriptions.count { subscription in
            subscription.periods.indices.contains { index in
                let period = subscription.periods[index]
                return period.isTrial && period.start <= t && t < subscription.effectiveEnd(of: index)
            }
        }
    }

    /// Each paid period's price over its months, summed exactly (`MetricPeriod`'s units).
    func mrr(at t: Int64) -> Amounts {
        var total: [String: Int64] = [:]
        for (_, period) in paid(at: t) {
            let length = configuredPeriods[period.productId] ?? MetricPeriod.measured(from: period.start, to: period.end)
            total[period.currency, default: 0] += period.priceMilliunits * MetricPeriod.scale(of: length)!
        }
        return total.mapValues(MetricPeriod.milliunits(ofScaled:)).filter { $0.value != 0 }
    }

    // MARK: - Flows over [a, b)

    /// Prices of transactions purchased in [a, b), less the prices of those refunded in [a, b).
    func revenue(from a: Int64, to b: Int64) -> Amounts {
        var amounts: Amounts = [:]
        for period in allPeriods {
            if (a..<b).contains(period.start) { amounts[period.currency, default: 0] += period.priceMilliunits }
            if let refunded = period.refundedAt, (a..<b).contains(refunded) {
                amounts[period.currency, default: 0] -= period.priceMilliunits
            }
        }
        return amounts.filter { $0.value != 0 }
    }

    func newTrials(from a: Int64, to b: Int64) -> Int {
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
    func trialConversions(from a: Int64, to b: Int64) -> Int {
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
    func trialConversionRate(from a: Int64, to b: Int64, now: Int64) -> Double? {
        let decided = trialOutcomes(now: now).filter { (a..<b).contains($0.trial.start) }.compactMap(\.converted)
        guard !decided.isEmpty else { return nil }
        return Double(decided.count { $0 }) / Double(decided.count)
    }

    /// Subscriptions whose last paid period ended in [a, b) (grace included) and did not renew,
    /// by `now`; one still in billing retry has not churned, a trial that lapsed never paid.
    func churned(from a: Int64, to b: Int64, now: Int64) -> Churn {
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

    /// Transactions refunded in [a, b): how many, and their prices per currency.
    func refunds(from a: Int64, to b: Int64) -> (count: Int, amounts: Amounts) {
        var amounts: Amounts = [:]
        var count = 0
        for period in allPeriods {
            guard let refunded = period.refundedAt, (a..<b).contains(refunded) else { continue }
            count += 1
            amounts[period.currency, default: 0] += period.priceMilliunits
        }
        return (count, amounts.filter { $0.value != 0 })
    }

    func refundRate(from a: Int64, to b: Int64) -> Double? {
        let purchased = allPeriods.filter { !$0.isTrial && (a..<b).contains($0.start) }
        guard !purchased.isEmpty else { return nil }
        return Double(purchased.count { $0.refundedAt != nil }) / Double(purchased.count)
    }
}
