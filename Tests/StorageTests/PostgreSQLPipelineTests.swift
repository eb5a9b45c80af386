import Foundation
import TestSupport
import XCTest

@testable import Storage

/// Deferred statements go with the next waited-for one, in one pipeline: in order, and a failure
/// among them is that statement's failure (so a batch that fails is rolled back, never half kept).
final class PostgreSQLPipelineTests: XCTestCase {
    private func connection() throws -> PostgreSQLConnection {
        let url: String
        do { url = try PostgreSQLTestCluster.freshDatabase() } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
        return try PostgreSQLConnection(conninfo: url)
    }

    func testDeferredStatementsRunInOrderWithTheNextOne() throws {
        let db = try connection()
        try db.execute("CREATE TABLE t (k BIGINT PRIMARY KEY, v TEXT NOT NULL)")
        try db.executeLater("INSERT INTO t (k, v) VALUES ($1, $2)", [.integer(1), .text("one")])
        try db.executeLater("UPDATE t SET v = $2 WHERE k = $1", [.integer(1), .text("uno")])
        try db.executeLater("INSERT INTO t (k, v) VALUES ($1, $2)", [.integer(2), .text("two")])
        let rows = try db.execute("SELECT k, v FROM t ORDER BY k")
        XCTAssertEqual(rows.rows, [["1", "uno"], ["2", "two"]], "the deferred statements ran first, in order")
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t").int64(0, 0), 2, "and only once")
    }

    /// The array literals the set-based statements take, read back by PostgreSQL itself.
    func testArrayParametersArriveElementForElement() throws {
        let db = try connection()
        let texts = ["", "plain", "a,b", "{braces}", "say \"hi\"", "back\\slash\\", "NULL", " spaced ", "é ✓ 日本", "\\\""]
        let rows = try db.execute("SELECT u FROM unnest($1::text[]) WITH ORDINALITY AS a(u, n) ORDER BY n", [.texts(texts)])
        XCTAssertEqual(rows.rows.map { $0[0] }, texts.map { Optional($0) }, "every text as it was, none read as NULL")
        let numbers: [Int64] = [0, -1, Int64.max, Int64.min]
        let read = try db.execute("SELECT u FROM unnest($1::bigint[]) WITH ORDINALITY AS a(u, n) ORDER BY n", [.integers(numbers)])
        XCTAssertEqual(read.rows.map { $0[0] }, numbers.map { String($0) })
        XCTAssertEqual(try db.execute("SELECT cardinality($1::text[])", [.texts([])]).int64(0, 0), 0, "an empty array is empty")
    }

    func testAFailedDeferredStatementFailsTheNextOneAndTheTransactionRollsBack() throws {
        let db = try connection()
        try db.execute("CREATE TABLE t (k BIGINT PRIMARY KEY, v TEXT NOT NULL)")
        try db.execute("BEGIN")
        try db.executeLater("INSERT INTO t (k, v) VALUES ($1, $2)", [.integer(1), .text("one")])
        try db.executeLater("INSERT INTO t (k, v) VALUES ($1, $2)", [.integer(1), .text("again")])
        XCTAssertThrowsError(try db.execute("COMMIT")) { error in
            XCTAssertEqual((error as? StorageError)?.sqlState, "23505", "the duplicate key is what is thrown")
        }
        try db.execute("ROLLBACK")
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t").int64(0, 0), 0, "nothing of the failed transaction stays")
        XCTAssertTrue(db.isHealthy, "the connection is usable afterwards")
    }

    func testStatementsSentTogetherAnswerEachTheirRows() throws {
        let db = try connection()
        try db.execute("CREATE TABLE t (k BIGINT PRIMARY KEY, v TEXT NOT NULL)")
        try db.executeLater("INSERT INTO t (k, v) VALUES ($1, $2)", [.integer(1), .text("one")])
        let answers = try db.execute(
            together: [
                ("INSERT INTO t (k, v) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING k", [.integer(2), .text("two")]),
                ("INSERT INTO t (k, v) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING k", [.integer(1), .text("uno")]),
                ("SELECT v FROM t ORDER BY k", []),
            ])
        XCTAssertEqual(answers.map(\.rows), [[["2"]], [], [["one"], ["two"]]], "after the deferred insert, each its own rows")
        XCTAssertThrowsError(
            try db.execute(together: [("SELECT 1/0", []), ("SELECT 1", [])])
        ) { error in XCTAssertEqual((error as? StorageError)?.sqlState, "22012", "the first failure is thrown") }
        XCTAssertTrue(db.isHealthy)
    }
}
