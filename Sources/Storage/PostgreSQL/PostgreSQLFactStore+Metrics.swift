package import Entitlements

/// The business figures' moments and day sums (migration 17; docs/METRICS.md, "Kept by the writer").
extension PostgreSQLWriteTransaction {

    /// Three statements whatever the change's size (arrays, unnested): the removed moments, the
    /// new values, and the changes appended to the day sums (see `PostgreSQLFactStore.rollUpMetrics`).
    func applyMetricMoments(environment: String, subscription: String, store: String, _ change: MetricMomentsChange) throws {
        let scope: [PGValue] = [.text(appId), .text(environment), .text(subscription)]
        if !change.removed.isEmpty {
            try db.executeLater(
                """
                DELETE FROM metric_moments m
                USING unnest($4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::bigint[])
                    AS r(figure, at, product_id, currency, period, origin_day)
                WHERE m.app_id = $1 AND m.environment = $2 AND m.subscription = $3 AND m.figure = r.figure AND m.at = r.at
                    AND m.product_id = r.product_id AND m.currency = r.currency AND m.period = r.period AND m.origin_day = r.origin_day
                """, scope + Self.columns(change.removed))
        }
        if !change.put.isEmpty {
            try db.executeLater(
                """
                INSERT INTO metric_moments (app_id, environment, subscription, figure, at, product_id, currency, period, origin_day,
                    store, value)
                SELECT $1, $2, $3, p.figure, p.at, p.product_id, p.currency, p.period, p.origin_day, $10, p.value
                FROM unnest($4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::bigint[], $11::bigint[])
                    AS p(figure, at, product_id, currency, period, origin_day, value)
                ON CONFLICT (app_id, environment, subscription, figure, at, product_id, currency, period, origin_day)
                DO UPDATE SET value = excluded.value
                """,
                scope + Self.columns(change.put.map(\.moment)) + [.text(store), .integers(change.put.map(\.value))])
        }
        // Day, hour and minute changes in one array statement; `width` says which sum each folds into.
        let deltas =
            change.dayDeltas.map { (width: MetricMoment.dayMs, key: $0.key, delta: $0.delta) }
            + change.bucketDeltas.map { (width: $0.width.rawValue, key: $0.key, delta: $0.delta) }
        if !deltas.isEmpty {
            let keys = deltas.map(\.key)
            try db.executeLater(
                """
                INSERT INTO metric_deltas (app_id, environment, width, day, store, figure, product_id, currency, period, origin_day, value)
                SELECT $1, $2, d.*
                FROM unnest($3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[],
                    $11::bigint[])
                    AS d(width, day, store, figure, product_id, currency, period, origin_day, value)
                """,
                [
                    .text(appId), .text(environment), .integers(deltas.map(\.width)), .integers(keys.map(\.day)),
                    .texts(keys.map(\.store)), .texts(keys.map(\.figure.rawValue)), .texts(keys.map(\.productId)),
                    .texts(keys.map(\.currency)), .texts(keys.map(\.period)), .integers(keys.map(\.originDay)),
                    .integers(deltas.map(\.delta)),
                ])
        }
    }

    /// The moments' identities as six arrays: figure, at, product, currency, period, origin day.
    private static func columns(_ moments: [MetricMoment]) -> [PGValue] {
        [
            .texts(moments.map(\.figure.rawValue)), .integers(moments.map(\.at)), .texts(moments.map(\.productId)),
            .texts(moments.map(\.currency)), .texts(moments.map(\.period)), .integers(moments.map(\.originDay)),
        ]
    }

    func clearMetrics(environment: String) throws {
        for table in ["metric_moments", "metric_days", "metric_buckets", "metric_deltas"] {
            try db.executeLater("DELETE FROM \(table) WHERE app_id = $1 AND environment = $2", [.text(appId), .text(environment)])
        }
    }
}

extension PostgreSQLFactStore {
    /// A subscription's stored moments, for a caller that sends the statement with others
    /// (`PostgreSQLWriteTransaction` reads them with the subscription).
    static func momentsRead(appId: String, environment: String, subscription: String) -> (String, [PGValue]) {
        (
            """
            SELECT figure, at, product_id, currency, period, origin_day, value FROM metric_moments
            WHERE app_id = $1 AND environment = $2 AND subscription = $3
            """, [.text(appId), .text(environment), .text(subscription)]
        )
    }

    static func moments(from rows: PGRows) -> [MetricMoment: Int64] {
        var moments: [MetricMoment: Int64] = [:]
        for row in rows.rows {
            guard let moment = moment(row) else { continue }
            moments[moment] = row[6].flatMap { Int64($0) } ?? 0
        }
        return moments
    }

    package func metricSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] {
        try daySums(appId: appId, environment: environment, fromDay: fromDay, figures: MetricFigure.allCases.map(\.rawValue))
    }

    package func metricStockSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] {
        try daySums(appId: appId, environment: environment, fromDay: fromDay, figures: MetricBucketSpan.stockFigures)
    }

    private func daySums(
        appId: String, environment: String, fromDay: Int64, figures: [String]
    ) throws -> [(key: MetricDayKey, value: Int64)] {
        let rows = try pool.with { db in
            try db.execute(
                """
                SELECT day, store, figure, product_id, currency, period, origin_day, \(Self.clamped("SUM(value)")) FROM (
                    SELECT day, store, figure, product_id, currency, period, origin_day, value FROM metric_days
                    WHERE app_id = $1 AND environment = $2 AND day >= $3 AND figure = ANY($4::text[])
                    UNION ALL
                    SELECT day, store, figure, product_id, currency, period, origin_day, value FROM metric_deltas
                    WHERE app_id = $1 AND environment = $2 AND width = \(MetricMoment.dayMs) AND day >= $3 AND figure = ANY($4::text[])) AS sums
                GROUP BY day, store, figure, product_id, currency, period, origin_day
                """, [.text(appId), .text(environment), .integer(fromDay), .texts(figures)]
            ).rows
        }
        return Self.sums(rows)
    }

    package func metricBucketSums(
        appId: String, environment: String, width: MetricBucketWidth, buckets: ClosedRange<Int64>
    ) throws -> [(key: MetricDayKey, value: Int64)] {
        let rows = try pool.with { db in
            try db.execute(
                """
                SELECT bucket, store, figure, product_id, currency, period, origin_day, \(Self.clamped("SUM(value)")) FROM (
                    SELECT bucket, store, figure, product_id, currency, period, origin_day, value FROM metric_buckets
                    WHERE app_id = $1 AND environment = $2 AND width = $3 AND bucket BETWEEN $4 AND $5
                    UNION ALL
                    SELECT day, store, figure, product_id, currency, period, origin_day, value FROM metric_deltas
                    WHERE app_id = $1 AND environment = $2 AND width = $3 AND day BETWEEN $4 AND $5) AS sums
                GROUP BY bucket, store, figure, product_id, currency, period, origin_day
                """,
                [
                    .text(appId), .text(environment), .integer(width.rawValue), .integer(buckets.lowerBound),
                    .integer(buckets.upperBound),
                ]
            ).rows
        }
        return Self.sums(rows)
    }

    /// Summed by PostgreSQL (one row a key, whatever the day holds), the deltas not rolled up yet included.
    package func metricBucketTotals(
        appId: String, environment: String, width: MetricBucketWidth, stocks: MetricBucketSpan, flows: MetricBucketSpan
    ) throws -> [(key: MetricDayKey, value: Int64)] {
        guard let range = MetricBucketSpan.covering(stocks, flows) else { return [] }
        let rows = try pool.with { db in
            try db.execute(
                """
                SELECT 0, store, figure, product_id, currency, period, origin_day, \(Self.clamped("SUM(value)")) FROM (
                    SELECT bucket, store, figure, product_id, currency, period, origin_day, value FROM metric_buckets
                    WHERE app_id = $1 AND environment = $2 AND width = $3 AND bucket BETWEEN $9 AND $10
                    UNION ALL
                    SELECT day, store, figure, product_id, currency, period, origin_day, value FROM metric_deltas
                    WHERE app_id = $1 AND environment = $2 AND width = $3 AND day BETWEEN $9 AND $10) AS sums
                WHERE (figure = ANY($4::text[]) AND bucket BETWEEN $5 AND $6) OR (NOT figure = ANY($4::text[]) AND bucket BETWEEN $7 AND $8)
                GROUP BY store, figure, product_id, currency, period, origin_day
                """,
                [
                    .text(appId), .text(environment), .integer(width.rawValue), .texts(MetricBucketSpan.stockFigures),
                    .integer(stocks.first), .integer(stocks.last), .integer(flows.first), .integer(flows.last),
                    .integer(range.lowerBound), .integer(range.upperBound),
                ]
            ).rows
        }
        return Self.sums(rows)
    }

    /// Sums from eight columns: bucket (or day), store, figure, product, currency, period, origin day, value.
    private static func sums(_ rows: [[String?]]) -> [(key: MetricDayKey, value: Int64)] {
        rows.compactMap { row in
            func number(_ index: Int) -> Int64 { row[index].flatMap { Int64($0) } ?? 0 }
            guard let figure = row[2].flatMap(MetricFigure.init(rawValue:)) else { return nil }
            let key = MetricDayKey(
                store: row[1] ?? "", figure: figure, day: number(0), productId: row[3] ?? "", currency: row[4] ?? "",
                period: row[5] ?? "", originDay: number(6))
            return (key, number(7))
        }
    }

    package func metricMoments(appId: String, environment: String, from: Int64, to: Int64) throws -> [StoredMetricMoment] {
        let rows = try pool.with { db in
            try db.execute(
                """
                SELECT figure, at, product_id, currency, period, origin_day, value, store FROM metric_moments
                WHERE app_id = $1 AND environment = $2 AND at >= $3 AND at < $4
                """, [.text(appId), .text(environment), .integer(from), .integer(to)]
            ).rows
        }
        return rows.compactMap { row in
            guard let moment = Self.moment(row) else { return nil }
            return StoredMetricMoment(store: row[7] ?? "", moment: moment, value: row[6].flatMap { Int64($0) } ?? 0)
        }
    }

    /// Folds the appended changes into the day sums, in one statement (a change committed
    /// meanwhile waits for the next roll-up); one instance at a time, the others skip.
    static func rollUpMetrics(_ db: PostgreSQLConnection) throws {
        try db.execute("BEGIN")
        do {
            if try db.execute("SELECT pg_try_advisory_xact_lock($1)", [.integer(metricsRollUpLock)]).text(0, 0) == "t" {
                try db.execute(
                    """
                    WITH moved AS (DELETE FROM metric_deltas
                        RETURNING app_id, environment, width, day, store, figure, product_id, currency, period, origin_day, value),
                    buckets AS (
                        INSERT INTO metric_buckets
                            (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day, value)
                        SELECT app_id, environment, width, day, store, figure, product_id, currency, period, origin_day,
                            \(clamped("SUM(value)")) FROM moved WHERE width <> \(MetricMoment.dayMs)
                        GROUP BY app_id, environment, width, day, store, figure, product_id, currency, period, origin_day
                        ON CONFLICT (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day)
                        DO UPDATE SET value = \(clamped("metric_buckets.value::NUMERIC + excluded.value")))
                    INSERT INTO metric_days (app_id, environment, day, store, figure, product_id, currency, period, origin_day, value)
                    SELECT app_id, environment, day, store, figure, product_id, currency, period, origin_day,
                        \(clamped("SUM(value)")) FROM moved WHERE width = \(MetricMoment.dayMs)
                    GROUP BY app_id, environment, day, store, figure, product_id, currency, period, origin_day
                    ON CONFLICT (app_id, environment, day, store, figure, product_id, currency, period, origin_day)
                    DO UPDATE SET value = \(clamped("metric_days.value::NUMERIC + excluded.value"))
                    """)
            }
            try db.execute("COMMIT")
        } catch {
            _ = try? db.execute("ROLLBACK")  // the error below is the one to report
            throw error
        }
    }

    /// A sum (NUMERIC in PostgreSQL) as a BIGINT held at Int64's bounds, as the ledger's own sums
    /// are: "bigint out of range" would stop every roll-up after it, and every read.
    static func clamped(_ sum: String) -> String {
        "LEAST(GREATEST(\(sum), -9223372036854775808), 9223372036854775807)::BIGINT"
    }

    /// The advisory lock of the roll-up (any number: it only has to differ from the others').
    static let metricsRollUpLock: Int64 = 0x656E_7469_746C_6572

    /// A moment from its first six columns (nil: a figure this build does not know).
    static func moment(_ row: [String?]) -> MetricMoment? {
        guard let figure = row[0].flatMap(MetricFigure.init(rawValue:)) else { return nil }
        func number(_ index: Int) -> Int64 { row[index].flatMap { Int64($0) } ?? 0 }
        return MetricMoment(
            figure, at: number(1), productId: row[2] ?? "", currency: row[3] ?? "", period: row[4] ?? "", originDay: number(5))
    }
}
