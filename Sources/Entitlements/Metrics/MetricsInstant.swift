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
/// the day's facts: the total of its day's whole hours before its hour, of its hour's whole minutes
/// before its minute, and the moments of its minute. Each total stands as one moment, placed where
/// the ledger counts it, so the ledger adds up exactly what every moment of the day would have
/// given it at that instant, and nothing else.
///
/// A stock's bucket k holds the changes in ((k − 1)w, kw] (a change at a boundary is the bucket's
/// that ends there, as for days), a flow's those in [kw, (k + 1)w).
package enum MetricsInstant {
    /// Which buckets of `width` lie wholly in [from, to) (flows) and in (from, to] (stocks).
    private static func spans(width: Int64, from: Int64, to: Int64) -> (stocks: MetricBucketSpan, flows: MetricBucketSpan) {
        (MetricBucketSpan(from / width + 1, through: to / width), MetricBucketSpan(from / width, through: to / width - 1))
    }

    /// The hour buckets whose totals stand for the part of `t`'s day before its hour.
    package static func hours(before t: Int64) -> (stocks: MetricBucketSpan, flows: MetricBucketSpan) {
        spans(width: MetricBucketWidth.hour.rawValue, from: midnight(t), to: start(t, .hour))
    }

    /// The minute buckets whose totals stand for the part of `t`'s hour before its minute.
    package static func minutes(before t: Int64) -> (stocks: MetricBucketSpan, flows: MetricBucketSpan) {
        spans(width: MetricBucketWidth.minute.rawValue, from: start(t, .hour), to: start(t, .minute))
    }

    /// The moments to read for `t`: those of its minute, [from, to).
    package static func momentRange(around t: Int64) -> (from: Int64, to: Int64) {
        (start(t, .minute), start(t, .minute) + MetricBucketWidth.minute.rawValue)
    }

    private static func midnight(_ t: Int64) -> Int64 { t.floorDivided(by: MetricMoment.dayMs) * MetricMoment.dayMs }
    private static func start(_ t: Int64, _ width: MetricBucketWidth) -> Int64 {
        t.floorDivided(by: width.rawValue) * width.rawValue
    }

    /// The moments that stand for the day of `t` at `t`: the hours' and minutes' totals read over
    /// the spans above (a key's `day` is not used), and the moments read over `momentRange`.
    package static func moments(
        at t: Int64, hours: [(key: MetricDayKey, value: Int64)], minutes: [(key: MetricDayKey, value: Int64)],
        moments: [StoredMetricMoment]
    ) -> [StoredMetricMoment] {
        let hourStart = start(t, .hour)
        let minuteStart = start(t, .minute)
        var standing: [StoredMetricMoment] = []
        // A total counts where the ledger looks for it: a stock's at its span's end (after the
        // day's midnight, at or before t), a flow's at its span's start (in t's day, before t).
        func add(_ totals: [(key: MetricDayKey, value: Int64)], stocksAt: Int64, flowsAt: Int64) {
            for (key, value) in totals where value != 0 {
                let moment = MetricMoment(
                    key.figure, at: key.figure.isStock ? stocksAt : flowsAt, productId: key.productId, currency: key.currency,
                    period: key.period, originDay: key.originDay)
                standing.append(StoredMetricMoment(store: key.store, moment: moment, value: value))
            }
        }
        add(hours, stocksAt: hourStart, flowsAt: midnight(t))
        add(minutes, stocksAt: minuteStart, flowsAt: hourStart)
        for stored in moments {
            // A stock change at the minute's start is its previous minute's (a bucket's end is in it).
            let inMinute =
                stored.moment.figure.isStock
                ? stored.moment.at > minuteStart && stored.moment.at <= minuteStart + MetricBucketWidth.minute.rawValue
                : stored.moment.at >= minuteStart && stored.moment.at < minuteStart + MetricBucketWidth.minute.rawValue
            if inMinute { standing.append(stored) }
        }
        return standing
    }
}
