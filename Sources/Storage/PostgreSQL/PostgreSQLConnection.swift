internal import CPostgreSQL
import Foundation

/// A parameter or column value as PostgreSQL's text protocol carries it.
enum PGValue: Sendable {
    case null
    case integer(Int64)
    case text(String)

    static func from(_ value: Int64?) -> PGValue { value.map(PGValue.integer) ?? .null }
    static func from(_ value: String?) -> PGValue { value.map(PGValue.text) ?? .null }
    static func from(_ value: Bool) -> PGValue { .integer(value ? 1 : 0) }

    var textForm: String? {
        switch self {
        case .null: nil
        case .integer(let number): String(number)
        case .text(let text): text
        }
    }
}

/// The rows of one statement, as text (`nil` for NULL).
struct PGRows: Sendable {
    let rows: [[String?]]
    /// Rows the statement changed (`PQcmdTuples`).
    let affected: Int

    var isEmpty: Bool { rows.isEmpty }
    func text(_ row: Int, _ column: Int) -> String? { rows[row][column] }
    func int64(_ row: Int, _ column: Int) -> Int64? { rows[row][column].flatMap { Int64($0) } }
}

/// One libpq connection, used by one caller at a time (the pool hands it out). Every statement
/// is sent with `PQexecParams` (parameters out of band, never spliced into SQL). A connection
/// that broke is reconnected on its next use.
final class PostgreSQLConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    private let conninfo: String
    /// Statements prepared on this connection, by SQL text: each is parsed and planned once.
    private var prepared: [String: String] = [:]

    init(conninfo: String) throws(StorageError) {
        self.conninfo = conninfo
        try connect()
    }

    deinit { PQfinish(handle) }

    private func connect() throws(StorageError) {
        PQfinish(handle)
        prepared.removeAll()
        handle = PQconnectdb(conninfo)
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.message(handle)
            PQfinish(handle)
            handle = nil
            throw StorageError(code: -1, message: "PostgreSQL connection failed: \(message)")
        }
        PQsetNoticeProcessor(handle, { _, message in message.map { PostgreSQLNotices.deliver(String(cString: $0)) } }, nil)
        // Answers in UTC (the store keeps instants as epoch milliseconds anyway). Prepared
        // statements are planned for their actual parameters: a generic plan made before the
        // tables have statistics (a new or just-migrated database) may scan where an index fits.
        _ = try execute("SET TIME ZONE 'UTC'")
        _ = try execute("SET plan_cache_mode = force_custom_plan")
    }

    /// Whether the connection is usable; a broken one is replaced on the next `execute`.
    var isHealthy: Bool { handle != nil && PQstatus(handle) == CONNECTION_OK }

    @discardableResult
    func execute(_ sql: String, _ parameters: [PGValue] = []) throws(StorageError) -> PGRows {
        if !isHealthy { try connect() }
        let texts = parameters.map(\.textForm)
        let name = try preparedName(sql, parameters: Int32(texts.count))
        let result = Self.withCStrings(texts) { pointers in
            PQexecPrepared(handle, name, Int32(pointers.count), pointers, nil, nil, 0)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = PQresultErrorMessage(result).map { String(cString: $0) } ?? Self.message(handle)
            throw StorageError(
                code: -1, message: "PostgreSQL \(state): \(message.trimmingCharacters(in: .whitespacesAndNewlines))",
                sqlState: state)
        }
        var rows: [[String?]] = []
        let count = PQntuples(result)
        let columns = PQnfields(result)
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            var values: [String?] = []
            values.reserveCapacity(Int(columns))
            for column in 0..<columns {
                values.append(PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column)))
            }
            rows.append(values)
        }
        return PGRows(rows: rows, affected: Int(String(cString: PQcmdTuples(result))) ?? 0)
    }

    /// The name of `sql` prepared on this connection (preparing it on first use).
    private func preparedName(_ sql: String, parameters: Int32) throws(StorageError) -> String {
        if let name = prepared[sql] { return name }
        let name = "s\(prepared.count)"
        let result = PQprepare(handle, name, sql, parameters, nil)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = PQresultErrorMessage(result).map { String(cString: $0) } ?? Self.message(handle)
            throw StorageError(
                code: -1, message: "PostgreSQL \(state): \(message.trimmingCharacters(in: .whitespacesAndNewlines))", sqlState: state)
        }
        prepared[sql] = name
        return name
    }

    /// Several statements at once, without parameters (migrations).
    func executeScript(_ sql: String) throws(StorageError) {
        if !isHealthy { try connect() }
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = PQresultErrorMessage(result).map { String(cString: $0) } ?? Self.message(handle)
            throw StorageError(code: -1, message: "PostgreSQL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))", sqlState: "")
        }
    }

    private static func message(_ handle: OpaquePointer?) -> String {
        guard let handle, let text = PQerrorMessage(handle) else { return "no connection" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// C strings for libpq that live for the duration of `body`.
    private static func withCStrings<T>(_ values: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        var owned: [UnsafeMutablePointer<CChar>?] = values.map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in owned { free(pointer) } }
        return body(owned.map { $0.map { UnsafePointer($0) } })
    }
}
