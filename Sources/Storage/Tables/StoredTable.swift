/// One stored table as both dialects know it: the columns a row is written with, in order, and
/// the key that identifies a row. The statements that put and copy its rows, and the column
/// lists its reads take, are made from this one description, so a new column is one line here
/// and one migration per dialect (`Migrations`, `PostgreSQLMigrations`), and `StoredTables.all`
/// is the list `migrate-storage` copies (a test compares it with both schemas).
struct StoredTable: Sendable {
    let name: String
    /// The columns a row is written with, in order: not the one the database numbers itself.
    let columns: [String]
    /// What identifies a row: the conflict target of a put.
    let key: [String]
    /// A column the database numbers (SQLite's rowid alias, PostgreSQL's sequence): read by
    /// `migrate-storage` for order and provenance, never written.
    var numbered: String? = nil
    /// Whether SQLite keeps the table without a rowid (copied in key order, not insertion order).
    var withoutRowid = false

    /// `a, b, c`, or with a table alias `x.a, x.b, x.c`.
    func list(_ alias: String? = nil) -> String { Self.list(columns, alias) }

    static func list(_ columns: [String], _ alias: String? = nil) -> String {
        let prefix = alias.map { "\($0)." } ?? ""
        return columns.map { prefix + $0 }.joined(separator: ", ")
    }

    /// SQLite: an insert of a row that must be new (a conflict is an error).
    var sqliteInsert: String { "INSERT INTO \(name) (\(list())) VALUES (\(Self.sqliteMarks(columns.count)))" }

    /// SQLite: a put (the row replaces the one with its key).
    var sqlitePut: String { "INSERT OR REPLACE INTO \(name) (\(list())) VALUES (\(Self.sqliteMarks(columns.count)))" }

    /// SQLite: an insert that leaves a row with the same key (or another unique value) alone.
    var sqliteInsertIfNew: String {
        "INSERT INTO \(name) (\(list())) VALUES (\(Self.sqliteMarks(columns.count))) ON CONFLICT DO NOTHING"
    }

    /// PostgreSQL: an insert of a row that must be new (a conflict is an error).
    var postgresInsert: String { "INSERT INTO \(name) (\(list())) VALUES (\(Self.postgresMarks(columns.count)))" }

    /// PostgreSQL: a put (`ON CONFLICT (key) DO UPDATE SET` every other column).
    var postgresPut: String {
        let updates = columns.filter { !key.contains($0) }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(name) (\(list())) VALUES (\(Self.postgresMarks(columns.count))) "
            + "ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(updates)"
    }

    /// PostgreSQL: an insert that leaves a row with the same key (or another unique value) alone.
    var postgresInsertIfNew: String {
        "INSERT INTO \(name) (\(list())) VALUES (\(Self.postgresMarks(columns.count))) ON CONFLICT DO NOTHING"
    }

    /// SQLite: the row with the key given removed.
    var sqliteDelete: String { "DELETE FROM \(name) WHERE " + key.map { "\($0) = ?" }.joined(separator: " AND ") }

    /// PostgreSQL: the row with the key given removed.
    var postgresDelete: String {
        "DELETE FROM \(name) WHERE " + key.enumerated().map { "\($1) = $\($0 + 1)" }.joined(separator: " AND ")
    }

    static func sqliteMarks(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }
    static func postgresMarks(_ count: Int) -> String { (1...count).map { "$\($0)" }.joined(separator: ", ") }
}
