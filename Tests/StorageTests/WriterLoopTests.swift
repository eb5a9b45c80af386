import Foundation
import TestSupport
import XCTest

@testable import Storage

/// The SQLite writer's group commit: a write whose savepoint cannot be undone must not leave
/// part of itself in the group's commit.
final class WriterLoopTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = try makeTemporaryDirectory("entitle-writer") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    /// The first write releases its own savepoint and then fails, so `ROLLBACK TO` finds none: its
    /// row would have been committed with the second write's while its caller was told it failed.
    /// Now the whole group is rolled back and both callers are told.
    func testAWriteThatCannotBeUndoneFailsItsWholeGroup() throws {
        let path = folder.appendingPathComponent("writer.sqlite3").path
        let setup = try SQLiteDatabase(path: path)
        try setup.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
        let loop = WriterLoop(database: try SQLiteDatabase(path: path))
        struct Refused: Error {}
        let results = Results()
        let answered = expectation(description: "both writes answered")
        answered.expectedFulfillmentCount = 2
        // Queued before the loop starts, so that both are in its first group.
        loop.enqueue({ database in
            try database.run("INSERT INTO t VALUES ('first')")
            try database.run("RELEASE write")
            throw Refused()
        }) { result in
            results.append("first: \(result.isSuccess ? "ok" : "failed")")
            answered.fulfill()
        }
        loop.enqueue({ database in try database.run("INSERT INTO t VALUES ('second')") }) { result in
            results.append("second: \(result.isSuccess ? "ok" : "failed")")
            answered.fulfill()
        }
        loop.start()
        wait(for: [answered], timeout: 10)
        XCTAssertEqual(results.all.sorted(), ["first: failed", "second: failed"])
        let count = try setup.statement("SELECT count(*) FROM t")
        XCTAssertTrue(try count.step())
        XCTAssertEqual(count.int64(0), 0, "nothing of the group was committed")
        count.reset()
        // The writer goes on: the next group commits.
        XCTAssertNoThrow(try loop.perform { database in try database.run("INSERT INTO t VALUES ('third')") })
        let after = try setup.statement("SELECT k FROM t")
        XCTAssertTrue(try after.step())
        XCTAssertEqual(after.text(0), "third")
        after.reset()
        loop.stop()
    }
}

private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
