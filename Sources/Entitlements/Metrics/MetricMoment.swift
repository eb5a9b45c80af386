import Instants

/// What one subscription adds to the business figures at one instant (docs/METRICS.md, "Kept by
/// the writer"). The writer keeps each subscription's moments and their sums per day; every figure
/// is read back from those sums, so reading costs the same however many subscriptions there are.
///
/// A stock (active subscriptions, active trials, MRR) is kept as its changes: +1 where a paid
/// stretch begins, −1 where it ends. A flow is kept where it happens. Two flows are only known
/// later: a churn and a lapsed trial count once their instant has passed.
package enum MetricFigure: String, Sendable, CaseIterable, Comparable {
    case active, trial, mrr
    case revenue
    case newTrial = "new_trial"
    /// A paid period that directly follows a free trial, at its start.
    case conversion
    /// A trial that converted, at the trial's start (the conversion rate counts trials by start).
    case convertedTrial = "converted_trial"
    /// A trial that ended without converting, at its end; `originDay` is the day it started.
    case lapsedTrial = "lapsed_trial"
    case churnVoluntary = "churn_voluntary"
    case churnInvoluntary = "churn_involuntary"
    case churnOther = "churn_other"
    case refund
    case refundAmount = "refund_amount"
    /// A paid (not trial) transaction, at its purchase; and the same when it was refunded.
    case paidPurchase = "paid_purchase"
    case refundedPurchase = "refunded_purchase"

    /// Kept as changes, summed up to an instant.
    package var isStock: Bool { self == .active || self == .trial || self == .mrr }
    /// Counted only once `now` has passed the moment.
    package var waitsForItsInstant: Bool {
        self == .lapsedTrial || self == .churnVoluntary || self == .churnInvoluntary || self == .churnOther
    }
    /// Read to the instant within a day: the stocks, and the flows that wait for their instant.
    /// Only these have hour, ten-minute and minute sums; every other flow is read by whole days.
    package var isReadToTheInstant: Bool { isStock || waitsForItsInstant }

    package static func < (a: MetricFigure, b: MetricFigure) -> Bool { a.rawValue < b.rawValue }
}

/// One moment's identity; its value (a count, milliunits, ±1) is kept beside it.
package struct MetricMoment: Hashable, Sendable, Comparable {
    package var figure: MetricFigure
    package var at: Int64
    package var productId: String
    /// The currency of money; empty for counts.
    package var currency: String
    /// MRR only: the period measured from the transaction's length (`P1W` … `P1Y`); a product's
    /// configured `"period"` replaces it when the figures are read.
    package var period: String
    /// A lapsed trial's start day (days since 1970); 0 otherwise.
    package var originDay: Int64

    package init(
        _ figure: MetricFigure, at: Int64, productId: String, currency: String = "", period: String = "", originDay: Int64 = 0
    ) {
        self.figure = figure
        self.at = at
        self.productId = productId
        self.currency = currency
        self.period = period
        self.originDay = originDay
    }

    package static let dayMs: Int64 = 86_400_000

    /// The day whose sum holds the moment. A flow's is the day it happens in. A stock change's is
    /// the first day whose midnight it reaches (a change at exactly midnight counts there), so a
    /// stock at any midnight is read from sums alone.
    package var day: Int64 { bucket(Self.dayMs) }

    /// The same for buckets of `width` milliseconds (an hour, a minute): a flow's holds it, a stock
    /// change's is the first whose end it reaches, so the bucket `k` of a stock covers
    /// ((k − 1) × width, k × width] and a flow's [k × width, (k + 1) × width).
    package func bucket(_ width: Int64) -> Int64 {
        figure.isStock ? (at - 1).floorDivided(by: width) + 1 : at.floorDivided(by: width)
    }

    package static func < (a: MetricMoment, b: MetricMoment) -> Bool {
        (a.figure, a.at, a.productId, a.currency, a.period, a.originDay) < (b.figure, b.at, b.productId, b.currency, b.period, b.originDay)
    }
}

/// How a subscription's moments changed: what the writer deletes, puts and adds to the day sums.
package struct MetricMomentsChange: Sendable {
    package var removed: [MetricMoment] = []
    package var put: [(moment: MetricMoment, value: Int64)] = []
    /// Per day sum: the amount it changes by.
    package var dayDeltas: [(key: MetricDayKey, delta: Int64)] = []
    /// Per hour and per minute sum (`MetricBucketWidth`; the key's `day` is the bucket's number):
    /// what a read of one instant adds up instead of every moment of its day.
    package var bucketDeltas: [(width: MetricBucketWidth, key: MetricDayKey, delta: Int64)] = []

    package var isEmpty: Bool { removed.isEmpty && put.isEmpty }

    package init(from old: [MetricMoment: Int64], to new: [MetricMoment: Int64], store: String) {
        var deltas: [MetricDayKey: Int64] = [:]
        var bucketed: [MetricBucketWidth: [MetricDayKey: Int64]] = [:]
        func add(_ moment: MetricMoment, _ value: Int64) {
            deltas[MetricDayKey(moment, store: store), default: 0].addSaturating(value)
            guard moment.figure.isReadToTheInstant else { return }
            for width in MetricBucketWidth.allCases {
                bucketed[width, default: [:]][MetricDayKey(moment, store: store, bucket: moment.bucket(width.rawValue)), default: 0]
                    .addSaturating(value)
            }
        }
        for (moment, value) in old where new[moment] != value {
            if new[moment] == nil { removed.append(moment) }
            add(moment, value.negatedSaturating)
        }
        for (moment, value) in new where old[moment] != value {
            put.append((moment, value))
            add(moment, value)
        }
        removed.sort()
        put.sort { $0.moment < $1.moment }
        dayDeltas = deltas.filter { $0.value != 0 }.map { ($0.key, $0.value) }.sorted { $0.key < $1.key }
        for width in MetricBucketWidth.allCases {
            bucketDeltas += (bucketed[width] ?? [:]).filter { $0.value != 0 }.map { (width, $0.key, $0.value) }.sorted { $0.key < $1.key }
        }
    }
}

/// One day sum's key: a figure of one store, product and currency on one day.
package struct MetricDayKey: Hashable, Sendable, Comparable {
    package var store: String
    package var figure: MetricFigure
    package var day: Int64
    package var productId: String
    package var currency: String
    package var period: String
    package var originDay: Int64

    package init(
        store: String, figure: MetricFigure, day: Int64, productId: String, currency: String, period: String, originDay: Int64
    ) {
        self.store = store
        self.figure = figure
        self.day = day
        self.productId = productId
        self.currency = currency
        self.period = period
        self.originDay = originDay
    }

    init(_ moment: MetricMoment, store: String, bucket: Int64? = nil) {
        self.init(
            store: store, figure: moment.figure, day: bucket ?? moment.day, productId: moment.productId, currency: moment.currency,
            period: moment.period,
            originDay: moment.originDay)
    }

    package static func < (a: MetricDayKey, b: MetricDayKey) -> Bool {
        // Swift compares tuples of at most six.
        (a.store, a.figure, a.day) != (b.store, b.figure, b.day)
            ? (a.store, a.figure, a.day) < (b.store, b.figure, b.day)
            : (a.productId, a.currency, a.period, a.originDay) < (b.productId, b.currency, b.period, b.originDay)
    }
}

/// The finer sums kept beside the day sums, so that reading the figures at an instant costs the
/// same whatever its day holds (`MetricsInstant.standing`), coarsest first: each divides the one
/// before it, and the day divides by the first.
package enum MetricBucketWidth: Int64, Sendable, CaseIterable, Hashable {
    case hour = 3_600_000
    case tenMinutes = 600_000
    case minute = 60_000

    /// The width of the bucket this one's lie in (the day, for hours).
    package var coarser: Int64 {
        switch self {
        case .hour: MetricMoment.dayMs
        case .tenMinutes: MetricBucketWidth.hour.rawValue
        case .minute: MetricBucketWidth.tenMinutes.rawValue
        }
    }

    /// The width whose moments a read takes one bucket of.
    package static let finest = MetricBucketWidth.minute
}
