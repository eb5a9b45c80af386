import Instants

/// What the ledger needs of the day an instant falls in, from sums whose number does not grow with
/// the day's facts: the instant's day's hours before its hour, its hour's minutes before its
/// minute, and the moments of its minute. Each whole bucket stands as one moment, placed where the
/// ledger counts it (a stock's bucket at its end, a flow's at its start), so the ledger adds up
/// exactly what every moment of the day would have given it at that instant, and nothing else.
package enum MetricsInstant {
    /// The hour buckets to read for `t`: from its day's first through its own.
    package static func hours(around t: Int64) -> ClosedRange<Int64> {
        let width = MetricBucketWidth.hour.rawValue
        return t.floorDivided(by: MetricMoment.dayMs) * (MetricMoment.dayMs / width)...t.floorDivided(by: width)
    }

    /// The minute buckets to read for `t`: from its hour's first through its own.
    package static func minutes(around t: Int64) -> ClosedRange<Int64> {
        let width = MetricBucketWidth.minute.rawValue
        return t.floorDivided(by: MetricBucketWidth.hour.rawValue) * (MetricBucketWidth.hour.rawValue / width)...t.floorDivided(by: width)
    }

    /// The moments to read for `t`: those of its minute, [start, end).
    package static func momentRange(around t: Int64) -> (from: Int64, to: Int64) {
        let start = t.floorDivided(by: MetricBucketWidth.minute.rawValue) * MetricBucketWidth.minute.rawValue
        return (start, start + MetricBucketWidth.minute.rawValue)
    }

    /// The moments that stand for the day of `t` at `t`, from the sums and moments read with the
    /// ranges above (more may be given: only what belongs is kept).
    package static func moments(
        at t: Int64, hours: [(key: MetricDayKey, value: Int64)], minutes: [(key: MetricDayKey, value: Int64)],
        moments: [StoredMetricMoment]
    ) -> [StoredMetricMoment] {
        let midnight = t.floorDivided(by: MetricMoment.dayMs) * MetricMoment.dayMs
        let hourStart = t.floorDivided(by: MetricBucketWidth.hour.rawValue) * MetricBucketWidth.hour.rawValue
        let minuteStart = momentRange(around: t).from
        var standing: [StoredMetricMoment] = []
        // Whole buckets inside [from, to): a stock's bucket k is ((k − 1)w, kw], a flow's [kw, (k + 1)w).
        func add(_ sums: [(key: MetricDayKey, value: Int64)], width: Int64, from: Int64, to: Int64) {
            for (key, value) in sums where value != 0 {
                let start = key.figure.isStock ? (key.day - 1) * width : key.day * width
                guard start >= from, start + width <= to else { continue }
                let moment = MetricMoment(
                    key.figure, at: key.figure.isStock ? start + width : start, productId: key.productId, currency: key.currency,
                    period: key.period, originDay: key.originDay)
                standing.append(StoredMetricMoment(store: key.store, moment: moment, value: value))
            }
        }
        add(hours, width: MetricBucketWidth.hour.rawValue, from: midnight, to: hourStart)
        add(minutes, width: MetricBucketWidth.minute.rawValue, from: hourStart, to: minuteStart)
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
