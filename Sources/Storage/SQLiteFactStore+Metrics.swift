package import Entitlements

/// The business figures' moments and day sums (migration 17; docs/METRICS.md, "Kept by the writer").
extension SQLiteWriteTransaction {
    func metricMoments(environment: String, subscription: String) throws -> [MetricMoment: Int64] {
        let query = try database.statement(
            """
            SELECT figure, at, product_id, currency, period, origin_day, value FROM metric_moments
            WHERE app_id = ? AND environment = ? AND subscription = ?
            """
        ).bind([.text(appId), .text(environment), .text(subscription)])
        var moments: [MetricMoment: Int64] = [:]
        while try query.step() {
            guard let moment = SQLiteFactStore.moment(query, from: 0) else { continue }
            moments[moment] = query.int64(6) ?? 0
        }
        return moments
    }

    /// A day sum past Int64's range is held at its bound, as the ledger's own sums are (SQLite
    /// would turn it into a REAL): a figure no real data reaches must not stop the writer.
    func applyMetricMoments(environment: String, subscription: String, store: String, _ change: MetricMomentsChange) throws {
        for moment in change.removed {
            try database.statement(
                """
                DELETE FROM metric_moments WHERE app_id = ? AND environment = ? AND subscription = ? AND figure = ? AND at = ?
                    AND product_id = ? AND currency = ? AND period = ? AND origin_day = ?
                """
            ).bind([.text(appId), .text(environment), .text(subscription)] + SQLiteFactStore.values(moment)).run()
        }
        for (moment, value) in change.put {
            try database.statement(
                """
                INSERT OR REPLACE INTO metric_moments (app_id, environment, subscription, figure, at, product_id, currency, period,
                    origin_day, store, value)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
            ).bind(
                [.text(appId), .text(environment), .text(subscription)] + SQLiteFactStore.values(moment) + [.text(store), .integer(value)]
            )
            .run()
        }
        for (key, delta) in change.dayDeltas {
            try database.statement(
                """
                INSERT INTO metric_days (app_id, environment, day, store, figure, product_id, currency, period, origin_day, value)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_id, environment, day, store, figure, product_id, currency, period, origin_day)
                DO UPDATE SET value = MAX(MIN(value + excluded.value, 9223372036854775807), -9223372036854775808)
                """
            ).bind([
                .text(appId), .text(environment), .integer(key.day), .text(key.store), .text(key.figure.rawValue), .text(key.productId),
                .text(key.currency), .text(key.period), .integer(key.originDay), .integer(delta),
            ]).run()
        }
        for (width, key, delta) in change.bucketDeltas {
            try database.statement(
                """
                INSERT INTO metric_buckets (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day, value)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day)
                DO UPDATE SET value = MAX(MIN(value + excluded.value, 9223372036854775807), -9223372036854775808)
                """
            ).bind([
                .text(appId), .text(environment), .integer(width.rawValue), .integer(key.day), .text(key.store), .text(key.figure.rawValue),
                .text(key.productId), .text(key.currency), .text(key.period), .integer(key.originDay), .integer(delta),
            ]).run()
        }
    }

    func clearMetrics(environment: String) throws {
        for table in ["metric_moments", "metric_days", "metric_buckets"] {
            try database.statement("DELETE FROM \(table) WHERE app_id = ? AND environment = ?").bind([.text(appId), .text(environment)])
                .run()
        }
    }
}

extension SQLiteFactStore {
    package func metricSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] {
        try daySums(appId: appId, environment: environment, fromDay: fromDay, figures: "")
    }

    package func metricStockSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] {
        try daySums(appId: appId, environment: environment, fromDay: fromDay, figures: "AND figure IN (\(Self.stockList))")
    }

    private func daySums(appId: String, environment: String, fromDay: Int64, figures: String) throws -> [(key: MetricDayKey, value: Int64)]
    {
        try read { database in
            let query = try database.statement(
                """
                SELECT day, store, figure, product_id, currency, period, origin_day, value FROM metric_days
                WHERE app_id = ? AND environment = ? AND day >= ? \(figures)
                """
            ).bind([.text(appId), .text(environment), .integer(fromDay)])
            return try Self.sums(query)
        }
    }

    /// The stock figures' names as an SQL list.
    private static let stockList = MetricBucketSpan.stockFigures.map { "'\($0)'" }.joined(separator: ", ")

    package func metricBucketSums(
        appId: String, environment: String, width: MetricBucketWidth, buckets: ClosedRange<Int64>
    ) throws -> [(key: MetricDayKey, value: Int64)] {
        try read { database in
            let query = try database.statement(
                """
                SELECT bucket, store, figure, product_id, currency, period, origin_day, value FROM metric_buckets
                WHERE app_id = ? AND environment = ? AND width = ? AND bucket BETWEEN ? AND ?
                """
            ).bind([
                .text(appId), .text(environment), .integer(width.rawValue), .integer(buckets.lowerBound), .integer(buckets.upperBound),
            ])
            return try Self.sums(query)
        }
    }

    /// The rows of the spans' figures, summed here: SQLite's GROUP BY sorts them in a temporary
    /// B-tree first, which cost more than reading them (and its SUM refuses a total past Int64's
    /// range, which is held at its bound here).
    package func metricBucketTotals(
        appId: String, environment: String, width: MetricBucketWidth, stocks: MetricBucketSpan, flows: MetricBucketSpan
    ) throws -> [(key: MetricDayKey, value: Int64)] {
        guard let range = MetricBucketSpan.covering(stocks, flows) else { return [] }
        let stockList = Self.stockList
        let rows = try read { database in
            let query = try database.statement(
                """
                SELECT bucket, store, figure, product_id, currency, period, origin_day, value FROM metric_buckets
                WHERE app_id = ? AND environment = ? AND width = ? AND bucket BETWEEN ? AND ?
                    AND ((figure IN (\(stockList)) AND bucket BETWEEN ? AND ?) OR (figure NOT IN (\(stockList)) AND bucket BETWEEN ? AND ?))
                """
            ).bind([
                .text(appId), .text(environment), .integer(width.rawValue), .integer(range.lowerBound), .integer(range.upperBound),
                .integer(stocks.first), .integer(stocks.last), .integer(flows.first), .integer(flows.last),
            ])
            return try Self.sums(query)
        }
        return MetricBucketSpan.totals(rows, stocks: stocks, flows: flows)
    }

    /// Sums from eight columns: bucket (or day), store, figure, product, currency, period, origin day, value.
    static func sums(_ query: SQLiteStatement) throws -> [(key: MetricDayKey, value: Int64)] {
        var sums: [(key: MetricDayKey, value: Int64)] = []
        while try query.step() {
            guard let figure = query.text(2).flatMap(MetricFigure.init(rawValue:)) else { continue }
            let key = MetricDayKey(
                store: query.text(1) ?? "", figure: figure, day: query.int64(0) ?? 0, productId: query.text(3) ?? "",
                currency: query.text(4) ?? "", period: query.text(5) ?? "", originDay: query.int64(6) ?? 0)
            sums.append((key, query.int64(7) ?? 0))
        }
        return sums
    }

    package func metricMoments(appId: String, environment: String, from: Int64, to: Int64) throws -> [StoredMetricMoment] {
        try read { database in
            let query = try database.statement(
                """
                SELECT figure, at, product_id, currency, period, origin_day, value, store FROM metric_moments
                WHERE app_id = ? AND environment = ? AND at >= ? AND at < ?
                """
            ).bind([.text(appId), .text(environment), .integer(from), .integer(to)])
            var moments: [StoredMetricMoment] = []
            while try query.step() {
                guard let moment = Self.moment(query, from: 0) else { continue }
                moments.append(StoredMetricMoment(store: query.text(7) ?? "", moment: moment, value: query.int64(6) ?? 0))
            }
            return moments
        }
    }

    /// A moment from six columns: figure, at, product, currency, period, origin day (nil: a
    /// figure this build does not know).
    static func moment(_ row: SQLiteStatement, from column: Int32) -> MetricMoment? {
        guard let figure = row.text(column).flatMap(MetricFigure.init(rawValue:)) else { return nil }
        return MetricMoment(
            figure, at: row.int64(column + 1) ?? 0, productId: row.text(column + 2) ?? "", currency: row.text(column + 3) ?? "",
            period: row.text(column + 4) ?? "", originDay: row.int64(column + 5) ?? 0)
    }

    static func values(_ moment: MetricMoment) -> [SQLiteValue] {
        [
            .text(moment.figure.rawValue), .integer(moment.at), .text(moment.productId), .text(moment.currency), .text(moment.period),
            .integer(moment.originDay),
        ]
    }
}
