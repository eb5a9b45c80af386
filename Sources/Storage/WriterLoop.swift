import Dispatch
import Entitlements
import Foundation
import Synchronization

/// The single writer: a thread that owns the write connection and commits queued writes in groups.
/// It keeps itself alive while running; `stop()` (from the store's deinit) ends it and returns once
/// the connection is closed, so a store let go of has let go of its file (another process may take
/// it at once: a backup, `sqlite3`, the next start).
final class WriterLoop: @unchecked Sendable {
    /// One queued write. `write` runs inside the group's transaction, in its own savepoint, and
    /// answers why that savepoint could not be undone (nil: it stands or was undone whole);
    /// `report` runs once the commit is known (nil: committed; else why it failed).
    struct Pending: @unchecked Sendable {
        let write: (SQLiteDatabase) -> (any Error)?
        let report: (_ commitError: (any Error)?) -> Void
    }

    // Invariant for `@unchecked Sendable`: `database` is used only by the writer thread;
    // `queue` and `stopped` are guarded by their lock; `thread` is set once, before the thread starts.
    private let database: SQLiteDatabase
    private let state = Mutex<(queue: [Pending], stopped: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)
    private let closed = DispatchSemaphore(value: 0)
    /// Weak: the running thread keeps itself, and its block keeps this loop.
    private weak var thread: Thread?

    init(database: SQLiteDatabase) { self.database = database }

    func start() {
        let thread = Thread { self.run() }
        thread.name = "entitle-sqlite-writer"
        self.thread = thread
        thread.start()
    }

    /// Queues `body` to run in a savepoint of the next group commit; `completion` gets its result
    /// after the commit (a thrown error rolls back only this write).
    func enqueue<T: Sendable>(
        _ body: @escaping (SQLiteDatabase) throws -> T, completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let box = ResultBox<T>()
        let pending = Pending(
            write: { database in
                let (result, undoError) = Self.inSavepoint(database, body)
                box.result = result
                return undoError
            },
            report: { commitError in
                if let commitError { completion(.failure(commitError)) } else { completion(box.result!) }
            })
        state.withLock { $0.queue.append(pending) }
        wake.signal()
    }

    /// The same, waiting for the commit (callers already off the event loops).
    func perform<T: Sendable>(_ body: @escaping (SQLiteDatabase) throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        enqueue(body) { result in
            box.result = result
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    /// Carries a result from the writer thread to a waiting caller (the semaphore orders the accesses).
    private final class ResultBox<T>: @unchecked Sendable { var result: Result<T, any Error>? }

    /// The write's result, and why undoing it failed: then part of it may still be in the
    /// group's transaction, and the group must not commit.
    private static func inSavepoint<T: Sendable>(
        _ database: SQLiteDatabase, _ body: (SQLiteDatabase) throws -> T
    ) -> (Result<T, any Error>, undoError: (any Error)?) {
        do {
            try database.run("SAVEPOINT write")
        } catch {
            return (.failure(error), nil)
        }
        let result: Result<T, any Error>
        do {
            let value = try body(database)
            try database.run("RELEASE write")
            return (.success(value), nil)
        } catch let answer as RolledBack<T> {
            result = .success(answer.value)
        } catch {
            result = .failure(error)
        }
        do {
            try database.run("ROLLBACK TO write")
            try database.run("RELEASE write")
            return (result, nil)
        } catch {
            return (.failure(error), error)
        }
    }

    /// Thrown by a write to undo everything it did and still answer `value`.
    struct RolledBack<T: Sendable>: Error { let value: T }

    func stop() {
        state.withLock { $0.stopped = true }
        wake.signal()
        // A completion run by the writer may drop the store's last reference: that thread cannot
        // wait for itself, and closes the connection as it returns anyway.
        if Thread.current !== thread { closed.wait() }
    }

    private func run() {
        while true {
            wake.wait()
            let (pending, stopped) = state.withLock { state -> ([Pending], Bool) in
                defer { state.queue.removeAll() }
                return (state.queue, state.stopped)
            }
            if !pending.isEmpty { commit(pending) }
            if stopped {
                database.close()
                closed.signal()
                return
            }
        }
    }

    /// One transaction for the group. A write that could not be undone fails the whole group:
    /// everything is rolled back and every write in it told so, as committing would keep part of
    /// a write its caller was told had failed.
    private func commit(_ pending: [Pending]) {
        defer { database.resetAll() }
        var commitError: (any Error)?
        do {
            try database.run("BEGIN IMMEDIATE")
            for item in pending {
                if let undoError = item.write(database) { throw GroupRolledBack(cause: undoError) }
            }
            try database.run("COMMIT")
        } catch {
            // Should even this fail, the next BEGIN fails and says so: nothing commits in silence.
            try? database.execute("ROLLBACK")
            commitError = error
        }
        for item in pending { item.report(commitError) }
    }

    /// Why every write of a group failed: one of them could not be undone.
    struct GroupRolledBack: Error, CustomStringConvertible {
        let cause: any Error
        var description: String { "a write could not be undone (\(cause)), so its whole group was rolled back" }
    }
}
