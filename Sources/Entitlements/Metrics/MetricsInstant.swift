import Instants

/// A run of bucket numbers, `first` through `last`; empty when `last < first`.
package struct MetricBucketSpan: Sendable, Equatable {
    package var first: Int64
    package var last: Int64

    package init(_ first: Int64, through last: Int64) {
        self.first = first
        self.last = last
    }

    package func contains(_ bucket: Int64) -> Bool { first <= bucket && bucket <= last }

    package var isEmpty: Bool { last < first }

    /// What a read asks for of the figures it does not need.
    package static let none = MetricBucketSpan(0, through: -1)

    /// The buckets from the first of either span to the last of either (the key range a store
    /// reads), nil when both are empty.
    package static func covering(_ a: MetricBucketSpan, _ b: MetricBucketSpan) -> ClosedRange<Int64>? {
        switch (a.isEmpty, b.isEmpty) {
        case (true, true): nil
        case (false, true): a.first...a.last
        case (true, false): b.first...b.last
        case (false, false): min(a.first, b.first)...max(a.last, b.last)
        }
    }
}

extension MetricBucketSpan {
    /// The totals per key of `sums` (a key's `day` its bucket) over `stocks` for the stock figures
    /// and `flows` for the others, held at Int64's bounds: what every store answers, computed here
    /// from rows where a store cannot sum them itself.
    package static func totals(
        _ sums: [(key: MetricDayKey, value: Int64)], stocks: MetricBucketSpan, flows: MetricBucketSpan
    ) -> [(key: MetricDayKey, value: Int64)] {
        var totals: [MetricDayKey: Int64] = [:]
        for (key, value) in sums where (key.figure.isStock ? stocks : flows).contains(key.day) {
            var total = key
            total.day = 0
            totals[total, default: 0].addSaturating(value)
        }
        return totals.map { ($0.key, $0.value) }
    }

    /// The stock figures' names, as the stores' SQL lists them.
    package static let stockFigures = MetricFigure.allCases.filter(\.isStock).map(\.rawValue)
}

/// What the ledger needs of the day an instant falls in, from sums whose number does not grow with
/// the day's facts: for each width of `MetricBucketWidth`, coarsest first, the total of the whole
/// buckets of that width between the start of the instant's coarser bucket (its day, for hours)
/// and the start of its own, then the moments of its minute. Each total stands as one moment,
/// placed where the ledger counts it, so the ledger adds up exactly what every moment of the day
/// would have given it at that instant, and nothing else. A read takes at most 23 hour, 5
/// ten-minute and 9 minute rows a key, whatever the day holds.
///
/// A stock's bucket k holds the changes in ((k − 1)w, kw] (a change at a boundary is the bucket's
/// that ends there, as for days), a flow's those in [kw, (k + 1)w).
package enum MetricsInstant {
    /// Which buckets of `width` lie wholly in [from, to) (flows) and in (from, to] (stocks).
    private static func spans(width: Int64, from: Int64, to: Int64) -> (stocks: MetricBucketSpan, flows: MetricBucketSpan) {
        (MetricBucketSpan(from / width + 1, through: to / width), MetricBucketSpan(from / width, through: to / width - 1))
    }

    /// The buckets of `width` whose totals stand for the part of `t`'s coarser bucket before its
    /// own bucket of `width`.
    package static func spans(_ width: MetricBucketWidth, before t: Int64) -> (stocks: MetricBucketSpan, flows: MetricBucketSpan) {
        spans(width: width.rawValue, from: start(t, width.coarser), to: start(t, width.rawValue))
    }

    /// The moments to read for `t`: those of its minute, [from, to).
    package static func momentRange(around t: Int64) -> (from: Int64, to: Int64) {
        let minute = MetricBucketWidth.finest.rawValue
        return (start(t, minute), start(t, minute) + minute)
    }

    private static func start(_ t: Int64, _ width: Int64) -> Int64 { t.floorDivided(by: width) * width }

    /// The moments that stand for the day of `t` at `t`, from the totals `totals` gives for each
    /// width over `spans(width, before: t)` (a key's `day` is not used) and the moments `moments`
    /// gives over `momentRange(around: t)`. `flows` false: only the stocks are asked (their flow
    /// span is `MetricBucketSpan.none`), for a read of the figures at `t` alone.
    package static func standing(
        at t: Int64, flows: Bool = true,
        totals: (_ width: MetricBucketWidth, _ spans: (stocks: MetricBucketSpan, flows: MetricBucketSpan)) throws -> [(
            key: MetricDayKey, value: Int64
        )],
        moments: (_ from: Int64, _ to: Int64) throws -> [StoredMetricMoment]
    ) rethrows -> [StoredMetricMoment] {
        var standing: [StoredMetricMoment] = []
        for width in MetricBucketWidth.allCases {
            // A total counts where the ledger looks for it: a stock's at its span's end (after the
            // coarser bucket's start, at or before t), a flow's at its span's start (before t).
            let (stocksAt, flowsAt) = (start(t, width.rawValue), start(t, width.coarser))
            var asked = spans(width, before: t)
            if !flows { asked.flows = .none }
            for (key, value) in try totals(width, asked) where value != 0 {
                let moment = MetricMoment(
                    key.figure, at: key.figure.isStock ? stocksAt : flowsAt, productId: key.productId, currency: key.currency,
                    period: key.period, originDay: key.originDay)
                standing.append(StoredMetricMoment(store: key.store, moment: moment, value: value))
            }
        }
        let (from, to) = momentRange(around: t)
        for stored in try moments(from, to) where stored.moment.figure.isReadToTheInstant && (flows || stored.moment.figure.isStock) {
            // A stock change at the minute's start is its previous minute's (a bucket's end is in it).
            let inMinute =
                stored.moment.figure.isStock
                ? stored.moment.at > from && stored.moment.at <= to : stored.moment.at >= from && stored.moment.at < to
            if inMinute { standing.append(stored) }
        }
        return standing
    }
}
