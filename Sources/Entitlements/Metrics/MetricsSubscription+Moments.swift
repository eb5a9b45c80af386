import Instants

extension MetricsSubscription {
    /// What this subscription adds to the figures, moment by moment (docs/METRICS.md, "Kept by the
    /// writer"). The writer stores these beside the facts and adds their difference to the day
    /// sums whenever the facts change; `entitle metrics rebuild` computes them again.
    package var moments: [MetricMoment: Int64] {
        var moments: [MetricMoment: Int64] = [:]
        func add(_ moment: MetricMoment, _ value: Int64) {
            guard value != 0 else { return }
            let sum = moments[moment, default: 0].addingSaturating(value)
            moments[moment] = sum == 0 ? nil : sum
        }
        let ends = periods.indices.map(effectiveEnd(of:))
        addStocks(ends: ends, add)
        for (index, period) in periods.enumerated() {
            add(MetricMoment(.revenue, at: period.start, productId: period.productId, currency: period.currency), period.priceMilliunits)
            if let refunded = period.refundedAt {
                add(
                    MetricMoment(.revenue, at: refunded, productId: period.productId, currency: period.currency),
                    period.priceMilliunits.negatedSaturating)
                add(MetricMoment(.refund, at: refunded, productId: period.productId), 1)
                add(
                    MetricMoment(.refundAmount, at: refunded, productId: period.productId, currency: period.currency),
                    period.priceMilliunits)
            }
            if period.isTrial {
                add(MetricMoment(.newTrial, at: period.start, productId: period.productId), 1)
                if index + 1 < periods.count, !periods[index + 1].isTrial {
                    add(MetricMoment(.convertedTrial, at: period.start, productId: period.productId), 1)
                    add(MetricMoment(.conversion, at: periods[index + 1].start, productId: periods[index + 1].productId), 1)
                } else {
                    let startDay = period.start.floorDivided(by: MetricMoment.dayMs)
                    add(MetricMoment(.lapsedTrial, at: ends[index], productId: period.productId, originDay: startDay), 1)
                }
            } else {
                add(MetricMoment(.paidPurchase, at: period.start, productId: period.productId), 1)
                if period.refundedAt != nil { add(MetricMoment(.refundedPurchase, at: period.start, productId: period.productId), 1) }
            }
        }
        for purchase in purchases where purchase.priceMilliunits > 0 {
            add(
                MetricMoment(.revenue, at: purchase.at, productId: purchase.productId, currency: purchase.currency),
                purchase.priceMilliunits)
            add(MetricMoment(.paidPurchase, at: purchase.at, productId: purchase.productId), 1)
            guard let refunded = purchase.refundedAt else { continue }
            let amount = purchase.refundedMilliunits ?? purchase.priceMilliunits
            add(MetricMoment(.revenue, at: refunded, productId: purchase.productId, currency: purchase.currency), amount.negatedSaturating)
            add(MetricMoment(.refund, at: refunded, productId: purchase.productId), 1)
            add(MetricMoment(.refundAmount, at: refunded, productId: purchase.productId, currency: purchase.currency), amount)
            add(MetricMoment(.refundedPurchase, at: purchase.at, productId: purchase.productId), 1)
        }
        if !isInBillingRetry, let last = periods.indices.last, !periods[last].isTrial {
            let kind: MetricFigure =
                expirationReason == 2 ? .churnInvoluntary : (expirationReason == 1 || autoRenewOff) ? .churnVoluntary : .churnOther
            add(MetricMoment(kind, at: ends[last], productId: periods[last].productId), 1)
        }
        return moments
    }

    /// The stocks as changes: between any two of its periods' starts and ends the subscription is
    /// either paid by one period (the latest begun of those not yet ended: its product, price
    /// and length) or not, and in a trial or not; where that changes, the old state leaves and
    /// the new one enters.
    private func addStocks(ends: [Int64], _ add: (MetricMoment, Int64) -> Void) {
        let boundaries = Set(periods.map(\.start) + ends).sorted()
        var paid: Int?
        var trial: Int?
        func inForce(_ isTrial: Bool, at t: Int64) -> Int? {
            periods.indices.last { periods[$0].isTrial == isTrial && periods[$0].start <= t && t < ends[$0] }
        }
        func paidMoments(_ index: Int, at t: Int64) -> [MetricMoment] {
            let period = periods[index]
            return [
                MetricMoment(.active, at: t, productId: period.productId),
                MetricMoment(
                    .mrr, at: t, productId: period.productId, currency: period.currency,
                    period: MetricPeriod.measured(from: period.start, to: period.end)),
            ]
        }
        for t in boundaries {
            let nowPaid = inForce(false, at: t)
            if nowPaid != paid {
                let leaving = paid.map { (paidMoments($0, at: t), periods[$0].priceMilliunits) }
                let entering = nowPaid.map { (paidMoments($0, at: t), periods[$0].priceMilliunits) }
                if let (moments, price) = leaving {
                    add(moments[0], -1)
                    add(moments[1], price.negatedSaturating)
                }
                if let (moments, price) = entering {
                    add(moments[0], 1)
                    add(moments[1], price)
                }
                paid = nowPaid
            }
            let nowTrial = inForce(true, at: t)
            if nowTrial != trial {
                if let trial { add(MetricMoment(.trial, at: t, productId: periods[trial].productId), -1) }
                if let nowTrial { add(MetricMoment(.trial, at: t, productId: periods[nowTrial].productId), 1) }
                trial = nowTrial
            }
        }
    }
}
