package import Entitlements
import JSON

/// SQLiteFactStore+Retention's statements in PostgreSQL's dialect.
extension PostgreSQLFactStore {
    package func retentionRecord(appId: String, requestIdentifier: String) throws -> RetentionRecord? {
        try pool.with { db in
            Self.retentionRecords(
                unreadable: unreadableRows,
                try db.execute(
                    "SELECT body, saved_at, saved_by, request_identifier FROM retention_records WHERE app_id = $1 AND request_identifier = $2",
                    [.text(appId), .text(requestIdentifier)])
            ).first
        }
    }

    package func retentionRecords(appId: String, environment: String, originalTransactionId: String) throws -> [RetentionRecord] {
        try pool.with {
            try Self.retentionRecords(
                $0, unreadable: unreadableRows, appId: appId, environment: environment, originalTransactionId: originalTransactionId)
        }
    }

    static func retentionRecords(
        _ db: PostgreSQLConnection, unreadable: UnreadableRows, appId: String, environment: String, originalTransactionId: String,
        openOnly: Bool = false
    ) throws -> [RetentionRecord] {
        retentionRecords(
            unreadable: unreadable,
            try db.execute(
                """
                SELECT body, saved_at, saved_by, request_identifier FROM retention_records
                WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3\(openOnly ? " AND saved_at IS NULL" : "")
                ORDER BY answered_at, request_identifier
                """, [.text(appId), .text(environment), .text(originalTransactionId)]))
    }

    static func retentionRecords(unreadable: UnreadableRows, _ rows: PGRows) -> [RetentionRecord] {
        rows.rows.compactMap { row in
            guard var record = StoredJSON.object(row[0]).flatMap(RetentionRecord.init(stored:)) else {
                unreadable.record(UnreadableRow(table: "retention_records", key: row[3] ?? ""))
                return nil
            }
            record.savedAt = row[1].flatMap { Int64($0) }
            record.savedBy = row[2]
            return record
        }
    }
}

extension PostgreSQLWriteTransaction {
    func retentionRecords(environment: String, originalTransactionId: String) throws -> [RetentionRecord] {
        try PostgreSQLFactStore.retentionRecords(
            db, unreadable: unreadable, appId: appId, environment: environment, originalTransactionId: originalTransactionId)
    }

    func insertRetentionRecordIfNew(_ record: RetentionRecord) throws -> Bool {
        !(try db.execute(
            RetentionCodec.table.postgresInsertIfNew + " RETURNING request_identifier", RetentionCodec.values(appId: appId, record)
        ).isEmpty)
    }

    func markRetentionSaved(requestIdentifier: String, at: Int64, how: String) throws {
        try db.executeLater(
            """
            UPDATE retention_records SET saved_at = $1, saved_by = $2
            WHERE app_id = $3 AND request_identifier = $4 AND saved_at IS NULL
            """, [.integer(at), .text(how), .text(appId), .text(requestIdentifier)])
    }
}
