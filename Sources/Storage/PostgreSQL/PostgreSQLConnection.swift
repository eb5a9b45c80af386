internal import CPostgreSQL
import Foundation

/// PostgreSQL's parameters are the stored values both dialects share (Tables/StoredValue.swift).
typealias PGValue = StoredValue

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
/// is a prepared one, its parameters out of band (never spliced into SQL). A connection that broke
/// is reconnected on its next use.
///
/// Statements nobody waits for (a batch's puts) are deferred: they go with the next statement
/// that is waited for, in one libpq pipeline, so a batch's writes cost one round trip, not one
/// each. Their order is kept, and a failure among them is thrown by that next statement.
final class PostgreSQLConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    private let conninfo: String
    /// Statements prepared on this connection, by SQL text: each is parsed and planned once.
    private var prepared: [String: String] = [:]
    /// Deferred statements (prepared name, parameters as text), in order.
    private var deferred: [(name: String, parameters: [String?])] = []

    init(conninfo: String) throws(StorageError) {
        self.conninfo = conninfo
        try connect()
    }

    deinit { PQfinish(handle) }

    private func connect() throws(StorageError) {
        PQfinish(handle)
        prepared.removeAll()
        deferred.removeAll()
        handle = PQconnectdb(conninfo)
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.message(handle)
            PQfinish(handle)
            handle = nil
            throw StorageError(code: -1, message: "PostgreSQL connection failed: \(message)")
        }
        PQsetNoticeProcessor(handle, { _, message in message.map { PostgreSQLNotices.deliver(String(cString: $0)) } }, nil)
        // Answers in UTC (the store keeps instants as epoch milliseconds anyway).
        _ = try execute("SET TIME ZONE 'UTC'")
        // Prepared statements use their generic plan, made once per connection: every statement
        // here finds rows by equality on an index's leading columns, where the generic plan is the
        // custom one. Planning the subscriber read anew costs ~1 ms, eight times executing it
        // (~0.15 ms on 1,000,000 transactions), and PostgreSQL's own choice (`auto`) kept custom
        // plans for it. A plan made on a new, empty database does not stay: PostgreSQL plans a
        // statement again when its tables' statistics change (autovacuum's ANALYZE).
        _ = try execute("SET plan_cache_mode = force_generic_plan")
    }

    /// Whether the connection is usable; a broken one is replaced on the next `execute`.
    var isHealthy: Bool { handle != nil && PQstatus(handle) == CONNECTION_OK }

    /// Runs `sql` (after any deferred statements, in the same round trip) and answers its rows.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PGValue] = []) throws(StorageError) -> PGRows {
        if !isHealthy { try connect() }
        let texts = parameters.map(\.textForm)
        let name = try preparedName(sql, parameters: Int32(texts.count))
        if !deferred.isEmpty { return try pipeline(deferred + [(name, texts)], answering: 1)[0] }
        let result = Self.withCStrings(texts) { pointers in
            PQexecPrepared(handle, name, Int32(pointers.count), pointers, nil, nil, 0)
        }
        defer { PQclear(result) }
        if let failure = Self.failure(result, handle) { throw failure }
        return Self.rows(result)
    }

    /// Runs `statements` (after any deferred ones) in one round trip and answers each one's rows.
    /// The first failure is thrown; PostgreSQL skips what follows it.
    func execute(together statements: [(String, [PGValue])]) throws(StorageError) -> [PGRows] {
        if !isHealthy { try connect() }
        var sent = deferred
        for (sql, parameters) in statements {
            sent.append((try preparedName(sql, parameters: Int32(parameters.count)), parameters.map(\.textForm)))
        }
        return try pipeline(sent, answering: statements.count)
    }

    /// Queues `sql` to go with the next `execute` (its answer is not needed).
    func executeLater(_ sql: String, _ parameters: [PGValue] = []) throws(StorageError) {
        if !isHealthy { try connect() }
        let texts = parameters.map(\.textForm)
        deferred.append((try preparedName(sql, parameters: Int32(texts.count)), texts))
    }

    /// Drops what was deferred (the transaction is being rolled back anyway).
    func discardDeferred() { deferred.removeAll() }

    /// Sends every statement, then one sync, and reads the answers in order: the first failure is
    /// thrown (PostgreSQL skips the rest), else the rows of the last `answering` statements.
    private func pipeline(_ statements: [(name: String, parameters: [String?])], answering: Int) throws(StorageError) -> [PGRows] {
        deferred.removeAll()
        guard PQenterPipelineMode(handle) == 1 else {
            throw StorageError(code: -1, message: "PostgreSQL: cannot enter pipeline mode: \(Self.message(handle))")
        }
        for statement in statements {
            let sent = Self.withCStrings(statement.parameters) { pointers in
                PQsendQueryPrepared(handle, statement.name, Int32(pointers.count), pointers, nil, nil, 0)
            }
            guard sent == 1 else {
                // The connection is not usable in this state: drop it (the pool replaces it).
                let message = Self.message(handle)
                PQfinish(handle)
                handle = nil
                throw StorageError(code: -1, message: "PostgreSQL: sending a pipeline failed: \(message)")
            }
        }
        guard PQpipelineSync(handle) == 1 else {
            let message = Self.message(handle)
            PQfinish(handle)
            handle = nil
            throw StorageError(code: -1, message: "PostgreSQL: sending a pipeline failed: \(message)")
        }
        var failure: StorageError?
        var answers: [PGRows] = []
        let firstAnswered = statements.count - answering
        for index in statements.indices {
            // Each statement's results, then a NULL.
            while let result = PQgetResult(handle) {
                defer { PQclear(result) }
                let status = PQresultStatus(result)
                if status == PGRES_PIPELINE_ABORTED { continue }
                if let error = Self.failure(result, handle) {
                    if failure == nil { failure = error }
                } else if index >= firstAnswered {
                    answers.append(Self.rows(result))
                }
            }
        }
        // The sync point ends the pipeline.
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        guard PQexitPipelineMode(handle) == 1 else {
            let message = Self.message(handle)
            PQfinish(handle)
            handle = nil
            throw StorageError(code: -1, message: "PostgreSQL: a pipeline did not end: \(message)")
        }
        if let failure { throw failure }
        return answers
    }

    /// The error a result carries, if it is not a success.
    private static func failure(_ result: OpaquePointer?, _ handle: OpaquePointer?) -> StorageError? {
        let status = PQresultStatus(result)
        guard status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK else { return nil }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
        let message = PQresultErrorMessage(result).map { String(cString: $0) } ?? Self.message(handle)
        return StorageError(
            code: -1, message: "PostgreSQL \(state): \(message.trimmingCharacters(in: .whitespacesAndNewlines))", sqlState: state)
    }

    private static func rows(_ result: OpaquePointer?) -> PGRows {
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
        let owned: [UnsafeMutablePointer<CChar>?] = values.map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in owned { free(pointer) } }
        return body(owned.map { $0.map { UnsafePointer($0) } })
    }
}
