package import Entitlements
import JSON

/// Retention answers on SQLite: each as its JSON, with the columns the lookups need beside it; a
/// save is recorded in its own columns (read back over the JSON's).
extension SQLiteFactStore {
    package func retentionRecord(appId: String, requestIdentifier: String) throws -> RetentionRecord? {
        try read { database in
            try Self.retentionRecords(
                unreadable: unreadableRows,
                database.statement(
                    "SELECT body, saved_at, saved_by, request_identifier FROM retention_records WHERE app_id = ? AND request_identifier = ?"
                )
                .bind([.text(appId), .text(requestIdentifier)])
            ).first
        }
    }

    package func retentionRecords(appId: String, environment: String, originalTransactionId: String) throws -> [RetentionRecord] {
        try read {
            try Self.retentionRecords(
                $0, unreadable: unreadableRows, appId: appId, environment: environment, originalTransactionId: originalTransactionId)
        }
    }

    static func retentionRecords(
        _ database: SQLiteDatabase, unreadable: UnreadableRows, appId: String, environment: String, originalTransactionId: String,
        openOnly: Bool = false
    ) throws -> [RetentionRecord] {
        try retentionRecords(
            unreadable: unreadable,
            database.statement(
                """
                SELECT body, saved_at, saved_by, request_identifier FROM retention_records
                WHERE app_id = ? AND environment = ? AND original_transaction_id = ?\(openOnly ? " AND saved_at IS NULL" : "")
                ORDER BY answered_at, request_identifier
                """
            ).bind([.text(appId), .text(environment), .text(originalTransactionId)]))
    }

    /// Each answer in `body`, with its save from its own columns; one whose body cannot be read is
    /// reported (and so is not there to say an offer was given).
    static func retentionRecords(unreadable: UnreadableRows, _ query: SQLiteStatement) throws -> [RetentionRecord] {
        var found: [RetentionRecord] = []
        while try query.step() {
            guard var record = StoredJSON.object(query.text(0)).flatMap(RetentionRecord.init(stored:)) else {
                unreadable.record(UnreadableRow(table: "retention_records", key: query.text(3) ?? ""))
                continue
            }
            record.savedAt = query.int64(1)
            record.savedBy = query.text(2)
            found.append(record)
        }
        return found
    }
}

extension SQLiteWriteTransaction {
    func retentionRecords(environment: String, originalTransactionId: String) throws -> [RetentionRecord] {
        try SQLiteFactStore.retentionRecords(
            database, unreadable: unreadable, appId: appId, environment: environment, originalTransactionId: originalTransactionId)
    }

    func insertRetentionRecordIfNew(_ record: RetentionRecord) throws -> Bool {
        try database.statement(RetentionCodec.table.sqliteInsertIfNew).bind(RetentionCodec.values(appId: appId, record)).run()
        return database.changes > 0
    }

    func markRetentionSaved(requestIdentifier: String, at: Int64, how: String) throws {
        try database.statement(
            "UPDATE retention_records SET saved_at = ?, saved_by = ? WHERE app_id = ? AND request_identifier = ? AND saved_at IS NULL"
        ).bind([.integer(at), .text(how), .text(appId), .text(requestIdentifier)]).run()
    }
}
