/// A value as both dialects store it: every column Entitle keeps is an integer or text (or NULL),
/// so one record's values are made once, by its table's codec, whichever database takes them.
enum StoredValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)

    static func from(_ value: Int64?) -> StoredValue { value.map(StoredValue.integer) ?? .null }
    static func from(_ value: String?) -> StoredValue { value.map(StoredValue.text) ?? .null }
    static func from(_ value: Bool) -> StoredValue { .integer(value ? 1 : 0) }

    /// The value as PostgreSQL's text protocol sends it (and as a copy compares it).
    var textForm: String? {
        switch self {
        case .null: nil
        case .integer(let number): String(number)
        case .text(let text): text
        }
    }
}

/// One row as a table's codec reads it, whichever database answered: SQLite's typed columns or
/// PostgreSQL's text, counted from the first column the codec's list starts at.
protocol ColumnReader {
    func text(_ column: Int) -> String?
    func integer(_ column: Int) -> Int64?
}

/// A row of an SQLite statement, from column `first` on.
struct SQLiteRow: ColumnReader {
    let statement: SQLiteStatement
    var first: Int32 = 0

    func text(_ column: Int) -> String? { statement.text(first + Int32(column)) }
    func integer(_ column: Int) -> Int64? { statement.int64(first + Int32(column)) }
}

/// A row PostgreSQL answered (every column as text), from column `first` on.
struct PostgreSQLRow: ColumnReader {
    let row: [String?]
    var first: Int = 0

    func text(_ column: Int) -> String? { row[first + column] }
    func integer(_ column: Int) -> Int64? { row[first + column].flatMap { Int64($0) } }
}
