package import Entitlements
import JSON

/// Refund reviews on SQLite: the app's usage records, support's overrides and the stores'
/// requests, each kept as its JSON with the columns the queries need beside it.
extension SQLiteFactStore {
    package func usage(appId: String, appAccountToken: String) throws -> [UsageRecord] {
        try read { database in
            let query = try database.statement(
                "SELECT body, id FROM usage_records WHERE app_id = ? AND app_account_token = ? ORDER BY recorded_at, id"
            ).bind([.text(appId), .text(appAccountToken)])
            var found: [UsageRecord] = []
            while try query.step() {
                if let record = StoredJSON.object(query.text(0)).flatMap(UsageRecord.init(stored:)) {
                    found.append(record)
                } else {
                    unreadableRows.record(UnreadableRow(table: "usage_records", key: query.text(1) ?? ""))
                }
            }
            return found
        }
    }

    package func refundOverride(appId: String, appAccountToken: String) throws -> RefundOverride? {
        try read { database in
            let query = try database.statement("SELECT body FROM refund_overrides WHERE app_id = ? AND app_account_token = ?")
                .bind([.text(appId), .text(appAccountToken)])
            guard try query.step() else { return nil }
            guard let override = StoredJSON.object(query.text(0)).flatMap(RefundOverride.init(stored:)) else {
                unreadableRows.record(UnreadableRow(table: "refund_overrides", key: appAccountToken))
                return nil
            }
            return override
        }
    }

    package func refundRequests(appId: String, limit: Int) throws -> [RefundRequest] {
        try read { database in
            try Self.refundRequests(
                unreadable: unreadableRows,
                database.statement(
                    "SELECT \(Self.refundColumns) FROM refund_requests WHERE app_id = ? ORDER BY requested_at DESC, id LIMIT ?"
                ).bind([.text(appId), .integer(Int64(limit))]))
        }
    }

    package func dueRefundRequests(appId: String, now: Int64, limit: Int) throws -> [RefundRequest] {
        try read { database in
            try Self.refundRequests(
                unreadable: unreadableRows,
                database.statement(
                    """
                    SELECT \(Self.refundColumns) FROM refund_requests
                    WHERE app_id = ? AND status = 'PENDING' AND next_at <= ? ORDER BY next_at, id LIMIT ?
                    """
                ).bind([.text(appId), .integer(now), .integer(Int64(limit))]))
        }
    }

    static let refundColumns = "body, outcome, outcome_at, id, store, status, requested_at"

    /// The request in `body`, with the outcome its own columns hold (set by a later notification);
    /// one whose body cannot be read is reported with what its columns say.
    static func refundRequests(unreadable: UnreadableRows, _ query: SQLiteStatement) throws -> [RefundRequest] {
        var found: [RefundRequest] = []
        while try query.step() {
            guard var request = StoredJSON.object(query.text(0)).flatMap(RefundRequest.init(stored:)) else {
                unreadable.record(
                    .refundRequest(id: query.text(3) ?? "", store: query.text(4) ?? "", status: query.text(5), requestedAt: query.int64(6)))
                continue
            }
            request.outcome = query.text(1)
            request.outcomeAt = query.int64(2)
            found.append(request)
        }
        return found
    }
}

extension SQLiteWriteTransaction {
    func insertUsage(_ record: UsageRecord) throws {
        try database.statement(UsageCodec.table.sqliteInsertIfNew).bind(UsageCodec.values(appId: appId, record)).run()
    }

    func putRefundOverride(appAccountToken: String, _ override: RefundOverride?) throws {
        guard let override else {
            try database.statement("DELETE FROM refund_overrides WHERE app_id = ? AND app_account_token = ?")
                .bind([.text(appId), .text(appAccountToken)]).run()
            return
        }
        try database.statement(RefundOverrideCodec.table.sqlitePut)
            .bind(RefundOverrideCodec.values(appId: appId, appAccountToken: appAccountToken, override)).run()
    }

    func insertRefundRequestIfNew(_ request: RefundRequest) throws -> Bool {
        try database.statement(RefundRequestCodec.table.sqliteInsertIfNew).bind(RefundRequestCodec.values(appId: appId, request)).run()
        return database.changes > 0
    }

    func putRefundRequest(_ request: RefundRequest) throws {
        try database.statement(
            "UPDATE refund_requests SET status = ?, next_at = ?, body = ? WHERE app_id = ? AND id = ?"
        ).bind([
            .text(request.status.rawValue), .integer(request.nextAt), .text(StoredJSON.text(request.json)), .text(appId),
            .text(request.id),
        ]).run()
    }

    func markRefundOutcome(transactionId: String?, purchaseToken: String?, outcome: String, at: Int64) throws {
        try database.statement(
            """
            UPDATE refund_requests SET outcome = ?, outcome_at = ?
            WHERE app_id = ? AND outcome IS NULL AND (transaction_id = ? OR purchase_token = ?)
            """
        ).bind([.text(outcome), .integer(at), .text(appId), .from(transactionId), .from(purchaseToken)]).run()
    }
}
