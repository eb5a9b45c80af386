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

    /// How a described table is copied: the columns read (its numbered column first, when it
    /// has one), those written, and the conflict clause that makes a repeat a no-op.
    private struct Copy {
        let table: StoredTable

        var read: [String] { (table.numbered.map { [$0] } ?? []) + table.columns }
        /// Deliveries carry where they came from (`sqlite:` and their SQLite id), PostgreSQL's
        /// unique `source_key`: the only row without a natural key to meet again.
        var provenance: Bool { table.name == StoredTables.deliveries.name }
        var written: [String] { table.columns + (provenance ? ["source_key"] : []) }
        var conflict: String { provenance ? "ON CONFLICT (source_key) DO NOTHING" : "ON CONFLICT DO NOTHING" }
        var order: String { table.numbered ?? (table.withoutRowid ? table.key.joined(separator: ", ") : "rowid") }

        func values(_ row: [String: PGValue]) -> [PGValue] {
            table.columns.map { row[$0] ?? .null }
                + (provenance ? [.text("sqlite:" + (row[table.numbered ?? ""]?.textForm ?? ""))] : [])
        }
    }

    package static func copy(from sqlitePath: String, to url: String, progress: (String) -> Void = { _ in }) throws -> [TableReport] {
        guard FileManager.default.fileExists(atPath: sqlitePath) else {
            throw StorageError(code: -1, message: "no SQLite database at \(sqlitePath)")
        }
        // Opening migrates both to the current schema first.
        _ = try SQLiteFactStore(path: sqlitePath)
        let target = try PostgreSQLFactStore(url: url, poolSize: 1)
        let source = try SQLiteDatabase(path: sqlitePath, readOnly: true)
        var reports: [TableReport] = []
        for table in StoredTables.all {
            let copy = Copy(table: table)
            let insert =
                "INSERT INTO \(table.name) (\(StoredTable.list(copy.written))) VALUES (\(StoredTable.postgresMarks(copy.written.count))) "
                + copy.conflict
            // Streamed in chunks of 500 rows, one PostgreSQL transaction each: memory stays bounded
            // whatever the size of the database.
            let query = try source.statement("SELECT \(StoredTable.list(copy.read)) FROM \(table.name) ORDER BY \(copy.order)")
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
                        count += try db.execute(insert, copy.values(row)).affected
                    }
                    return count
                }
            }
            while try query.step() {
                var row: [String: PGValue] = [:]
                for (index, column) in copy.read.enumerated() {
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
