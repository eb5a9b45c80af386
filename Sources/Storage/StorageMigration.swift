import Foundation

/// `entitle migrate-storage`: copies an SQLite deployment into PostgreSQL — every fact (with its
/// raw JWS), notification, event and delivery state — idempotently: a row already there is left
/// alone (by its natural key), so a second run copies nothing twice. Counts are verified at the end.
package enum StorageMigration {
    package struct TableReport: Sendable {
        package let table: String
        package let source: Int
        package let copied: Int
        package let target: Int
    }

    /// How each table is copied: its columns, and the conflict clause that makes a repeat a no-op.
    private struct Table: Sendable {
        let name: String
        let columns: [String]
        /// Columns taken from SQLite but not written (ids PostgreSQL assigns).
        var skipped: Set<String> = []
        var conflict = "ON CONFLICT DO NOTHING"
        /// Extra computed columns: name and value made from the row.
        var extra: [(String, @Sendable ([String: PGValue]) -> PGValue)] = []
        var order = "rowid"
    }

    private static let tables: [Table] = [
        Table(
            name: "transactions",
            columns: [
                "app_id", "environment", "transaction_id", "original_transaction_id", "product_id", "subscription_group", "type",
                "purchase_date", "original_purchase_date", "expires_date", "revocation_date", "revocation_reason", "revocation_type",
                "is_upgraded", "offer_type", "offer_discount_type", "offer_identifier", "ownership_type", "signed_date",
                "app_account_token", "jws", "price", "currency", "revocation_percentage", "offer_period",
                "billing_plan_type", "commitment",
            ]),
        Table(
            name: "renewal_infos",
            columns: [
                "app_id", "environment", "original_transaction_id", "product_id", "auto_renew_product_id", "auto_renew_status",
                "is_in_billing_retry", "grace_period_expires_date", "expiration_intent", "eligible_win_back_offer_ids", "signed_date",
                "jws", "renewal_billing_plan_type", "commitment",
            ]),
        Table(name: "subscriber_links", columns: ["app_id", "environment", "original_transaction_id", "app_account_token"]),
        Table(name: "signals", columns: ["app_id", "environment", "original_transaction_id", "kind", "at"]),
        Table(
            name: "notifications",
            columns: [
                "sequence", "notification_uuid", "app_id", "environment", "notification_type", "subtype", "signed_date", "received_at",
                "original_transaction_id", "jws", "store",
            ], skipped: ["sequence"], conflict: "ON CONFLICT (notification_uuid) DO NOTHING", order: "sequence"),
        Table(name: "sync_revisions", columns: ["app_id", "environment", "original_transaction_id", "revision"]),
        Table(name: "app_transactions", columns: ["app_id", "environment", "original_transaction_id", "app_transaction_id"]),
        Table(name: "link_transfers", columns: ["app_id", "environment", "original_transaction_id", "from_token", "to_token", "at"]),
        Table(
            name: "apple_calls",
            columns: ["app_id", "environment", "kind", "transaction_id", "app_account_token", "attempts", "next_at"]),
        Table(
            name: "events",
            columns: [
                "app_id", "sequence", "id", "type", "environment", "original_transaction_id", "app_account_token", "occurred_at",
                "created_at", "body",
            ]),
        Table(
            name: "deliveries",
            columns: [
                "id", "app_id", "kind", "event_id", "event_type", "endpoint", "body", "status", "attempts", "next_at", "created_at",
                "window_start", "last_status", "last_error", "delivered_at",
            ], skipped: ["id"], conflict: "ON CONFLICT (source_key) DO NOTHING",
            extra: [("source_key", { row in .text("sqlite:" + (row["id"]?.textForm ?? "")) })], order: "id"),
        Table(
            name: "grants",
            columns: [
                "app_id", "id", "environment", "app_account_token", "entitlement", "starts_at", "expires_date", "reason", "granted_by",
                "revoked_at", "revoked_by",
            ]),
        Table(
            name: "play_purchases",
            columns: [
                "app_id", "purchase_token", "kind", "product_id", "base_plan_id", "offer_id", "environment", "google_state",
                "start_time", "expiry_time", "auto_renewing", "linked_purchase_token", "acknowledged", "app_account_token", "order_id",
                "voided_at", "read_at", "details", "json",
            ]),
        Table(name: "pubsub_messages", columns: ["app_id", "message_id", "received_at"]),
        Table(name: "usage_records", columns: ["app_id", "id", "app_account_token", "recorded_at", "body"]),
        Table(name: "refund_overrides", columns: ["app_id", "app_account_token", "body"]),
        Table(
            name: "retention_records",
            columns: [
                "app_id", "request_identifier", "environment", "original_transaction_id", "answered_at", "saved_at", "saved_by", "body",
            ]),
        Table(
            name: "refund_requests",
            columns: [
                "app_id", "id", "store", "environment", "app_account_token", "transaction_id", "purchase_token", "status", "next_at",
                "requested_at", "outcome", "outcome_at", "body",
            ]),
        Table(
            name: "play_acknowledgements",
            columns: ["app_id", "purchase_token", "kind", "product_id", "attempts", "queued_at", "next_at"]),
        // The business figures (tables without a rowid: read in their key's order).
        Table(
            name: "metric_moments",
            columns: [
                "app_id", "environment", "subscription", "figure", "at", "product_id", "currency", "period", "origin_day", "store", "value",
            ], order: "app_id, environment, subscription, figure, at, product_id, currency, period, origin_day"),
        Table(
            name: "metric_days",
            columns: ["app_id", "environment", "day", "store", "figure", "product_id", "currency", "period", "origin_day", "value"],
            order: "app_id, environment, day, store, figure, product_id, currency, period, origin_day"),
        Table(
            name: "metric_buckets",
            columns: [
                "app_id", "environment", "width", "bucket", "store", "figure", "product_id", "currency", "period", "origin_day", "value",
            ], order: "app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day"),
    ]

    package static func copy(from sqlitePath: String, to url: String, progress: (String) -> Void = { _ in }) throws -> [TableReport] {
        guard FileManager.default.fileExists(atPath: sqlitePath) else {
            throw StorageError(code: -1, message: "no SQLite database at \(sqlitePath)")
        }
        // Opening migrates both to the current schema first.
        _ = try SQLiteFactStore(path: sqlitePath)
        let target = try PostgreSQLFactStore(url: url, poolSize: 1)
        let source = try SQLiteDatabase(path: sqlitePath, readOnly: true)
        var reports: [TableReport] = []
        for table in tables {
            let written = table.columns.filter { !table.skipped.contains($0) } + table.extra.map(\.0)
            let marks = (1...written.count).map { "$\($0)" }.joined(separator: ", ")
            let insert = "INSERT INTO \(table.name) (\(written.joined(separator: ", "))) VALUES (\(marks)) \(table.conflict)"
            // Streamed in chunks of 500 rows, one PostgreSQL transaction each: memory stays bounded
            // whatever the size of the database.
            let query = try source.statement("SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name) ORDER BY \(table.order)")
            defer { query.reset() }
            var read = 0
            var copied = 0
            var chunk: [[String: PGValue]] = []
            func flush() throws {
                guard !chunk.isEmpty else { return }
                let rows = chunk
                chunk.removeAll(keepingCapacity: true)
                copied += try target.pool.transaction { db in
                    var count = 0
                    for row in rows {
                        let values =
                            table.columns.filter { !table.skipped.contains($0) }.map { row[$0] ?? .null } + table.extra.map { $0.1(row) }
                        count += try db.execute(insert, values).affected
                    }
                    return count
                }
            }
            while try query.step() {
                var row: [String: PGValue] = [:]
                for (index, column) in table.columns.enumerated() {
                    switch query.value(Int32(index)) {
                    case .null: row[column] = .null
                    case .integer(let number): row[column] = .integer(number)
                    case .text(let text): row[column] = .text(text)
                    }
                }
                chunk.append(row)
                read += 1
                if chunk.count == 500 { try flush() }
            }
            try flush()
            let count = try target.pool.with { try $0.execute("SELECT COUNT(*) FROM \(table.name)").int64(0, 0) ?? 0 }
            reports.append(TableReport(table: table.name, source: read, copied: copied, target: Int(count)))
            progress("\(table.name): \(read) in SQLite, \(copied) copied, \(count) in PostgreSQL")
        }
        _ = try target.pool.with { db in
            // Events continue from the highest copied sequence.
            try db.execute(
                """
                INSERT INTO event_sequences (app_id, last) SELECT app_id, MAX(sequence) FROM events GROUP BY app_id
                ON CONFLICT (app_id) DO UPDATE SET last = GREATEST(event_sequences.last, excluded.last)
                """)
            // Fresh statistics, so the planner uses the indexes from the first request.
            try db.execute("ANALYZE")
        }
        return reports
    }
}
