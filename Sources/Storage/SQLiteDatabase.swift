internal import CSQLite

/// A failed database call, with the database's own message (SQLite's result code, or
/// PostgreSQL's SQLSTATE).
package struct StorageError: Error, Sendable, CustomStringConvertible {
    package let code: Int32
    package let message: String
    /// PostgreSQL's SQLSTATE (nil for SQLite, and when the connection itself failed).
    package let sqlState: String?
    package var description: String { sqlState == nil && code >= 0 ? "SQLite error \(code): \(message)" : message }

    package init(code: Int32, message: String, sqlState: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound text before `bind` returns (the macro is a cast Swift cannot import).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection with its prepared statements (each prepared once, reused).
///
/// Invariant that makes it `Sendable`: a connection is used by one caller at a time — the writer
/// behind the store's write lock, each reader while it is taken out of the reader pool.
final class SQLiteDatabase: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    private var isClosed = false

    init(path: String, readOnly: Bool = false) throws(StorageError) {
        var pointer: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &pointer, flags, nil)
        guard status == SQLITE_OK, let pointer else {
            let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close(pointer)
            throw StorageError(code: status, message: message)
        }
        handle = pointer
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { close() }

    /// Closes the connection now (the writer does on stop); nothing may use it afterwards.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        statements.removeAll()  // finalize before closing
        sqlite3_close(handle)
    }

    func execute(_ sql: String) throws(StorageError) {
        var error: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &error)
        guard status == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "failed"
            sqlite3_free(error)
            throw StorageError(code: status, message: message)
        }
    }

    /// The cached statement for `sql`, reset and ready for binding.
    func statement(_ sql: String) throws(StorageError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var pointer: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard status == SQLITE_OK, let pointer else { throw error(status) }
        let statement = SQLiteStatement(pointer, database: self)
        statements[sql] = statement
        return statement
    }

    /// A statement without results through the statement cache: transaction control runs for
    /// every write, and `sqlite3_exec` would parse it each time.
    func run(_ sql: String) throws(StorageError) { try statement(sql).run() }

    /// Resets every statement, so none keeps a read snapshot open between uses of the connection
    /// (a stepped-but-unfinished SELECT would pin an old WAL snapshot and hide newer commits).
    func resetAll() {
        for statement in statements.values { statement.reset() }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    func error(_ status: Int32) -> StorageError {
        StorageError(code: status, message: String(cString: sqlite3_errmsg(handle)))
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
}

/// A prepared statement: bind by position (1-based), step, read columns.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let database: SQLiteDatabase

    init(_ handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    @discardableResult
    func bind(_ values: [SQLiteValue]) throws(StorageError) -> SQLiteStatement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(handle, index)
            case .integer(let number): status = sqlite3_bind_int64(handle, index, number)
            case .text(let text): status = sqlite3_bind_text(handle, index, text, -1, transient)
            }
            guard status == SQLITE_OK else { throw database.error(status) }
        }
        return self
    }

    /// Steps once: true while a row is available.
    func step() throws(StorageError) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(status)
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(StorageError) { while try step() {} }

    func int64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    /// The column as stored (integer, text or null), for copying rows between databases.
    func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: .null
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, column))
        default: .text(text(column) ?? "")
        }
    }

    var columnCount: Int32 { sqlite3_column_count(handle) }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: pointer)
    }
}

/// SQLite's values are the stored values both dialects share (Tables/StoredValue.swift).
typealias SQLiteValue = StoredValue
