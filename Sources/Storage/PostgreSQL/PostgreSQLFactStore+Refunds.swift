package import Entitlements
import JSON

/// SQLiteFactStore+Refunds' statements in PostgreSQL's dialect.
extension PostgreSQLFactStore {
    package func usage(appId: String, appAccountToken: String) throws -> [UsageRecord] {
        try pool.with { db in
            try db.execute(
                "SELECT body, id FROM usage_records WHERE app_id = $1 AND app_account_token = $2 ORDER BY recorded_at, id",
                [.text(appId), .text(appAccountToken)]
            ).rows.compactMap { row in
                guard let record = StoredJSON.object(row[0]).flatMap(UsageRecord.init(stored:)) else {
                    unreadableRows.record(UnreadableRow(table: "usage_records", key: row[1] ?? ""))
                    return nil
                }
                return record
            }
        }
    }

    package func refundOverride(appId: String, appAccountToken: String) throws -> RefundOverride? {
        try pool.with { db in
            try db.execute(
                "SELECT body FROM refund_overrides WHERE app_id = $1 AND app_account_token = $2", [.text(appId), .text(appAccountToken)]
            ).rows.first.flatMap { row in
                guard let override = StoredJSON.object(row[0]).flatMap(RefundOverride.init(stored:)) else {
                    unreadableRows.record(UnreadableRow(table: "refund_overrides", key: appAccountToken))
                    return nil
                }
                return override
            }
        }
    }

    package func refundRequests(appId: String, limit: Int) throws -> [RefundRequest] {
        try pool.with { db in
            Self.refundRequests(
                unreadable: unreadableRows,
                try db.execute(
                    "SELECT body, outcome, outcome_at, id, store, status, requested_at FROM refund_requests WHERE app_id = $1 ORDER BY requested_at DESC, id LIMIT $2",
                    [.text(appId), .integer(Int64(limit))]))
        }
    }

    package func dueRefundRequests(appId: String, now: Int64, limit: Int) throws -> [RefundRequest] {
        try pool.with { db in
            Self.refundRequests(
                unreadable: unreadableRows,
                try db.execute(
                    """
                    SELECT body, outcome, outcome_at, id, store, status, requested_at FROM refund_requests
                    WHERE app_id = $1 AND status = 'PENDING' AND next_at <= $2 ORDER BY next_at, id LIMIT $3
                    """, [.text(appId), .integer(now), .integer(Int64(limit))]))
        }
    }

    /// The request in `body`, with the outcome its own columns hold.
    static func refundRequests(unreadable: UnreadableRows, _ rows: PGRows) -> [RefundRequest] {
        rows.rows.compactMap { row in
            guard var request = StoredJSON.object(row[0]).flatMap(RefundRequest.init(stored:)) else {
                unreadable.record(
                    .refundRequest(id: row[3] ?? "", store: row[4] ?? "", status: row[5], requestedAt: row[6].flatMap { Int64($0) }))
                return nil
            }
            request.outcome = row[1]
            request.outcomeAt = row[2].flatMap { Int64($0) }
            return request
        }
    }
}

extension PostgreSQLWriteTransaction {
    func insertUsage(_ record: UsageRecord) throws {
        try db.executeLater(UsageCodec.table.postgresInsertIfNew, UsageCodec.values(appId: appId, record))
    }

    func putRefundOverride(appAccountToken: String, _ override: RefundOverride?) throws {
        guard let override else {
            try db.executeLater(
                "DELETE FROM refund_overrides WHERE app_id = $1 AND app_account_token = $2", [.text(appId), .text(appAccountToken)])
            return
        }
        try db.executeLater(
            RefundOverrideCodec.table.postgresPut, RefundOverrideCodec.values(appId: appId, appAccountToken: appAccountToken, override))
    }

    func insertRefundRequestIfNew(_ request: RefundRequest) throws -> Bool {
        !(try db.execute(
            RefundRequestCodec.table.postgresInsertIfNew + " RETURNING id", RefundRequestCodec.values(appId: appId, request)
        ).isEmpty)
    }

    func putRefundRequest(_ request: RefundRequest) throws {
        try db.executeLater(
            "UPDATE refund_requests SET status = $1, next_at = $2, body = $3 WHERE app_id = $4 AND id = $5",
            [
                .text(request.status.rawValue), .integer(request.nextAt), .text(StoredJSON.text(request.json)), .text(appId),
                .text(request.id),
            ])
    }

    func markRefundOutcome(transactionId: String?, purchaseToken: String?, outcome: String, at: Int64) throws {
        try db.executeLater(
            """
            UPDATE refund_requests SET outcome = $1, outcome_at = $2
            WHERE app_id = $3 AND outcome IS NULL AND (transaction_id = $4 OR purchase_token = $5)
            """, [.text(outcome), .integer(at), .text(appId), .from(transactionId), .from(purchaseToken)])
    }
}
