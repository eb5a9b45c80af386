import Dispatch
import Entitlements
import Foundation
import Synchronization

/// The single writer: a thread that owns the write connection and commits queued batches in groups.
/// It keeps itself alive while running; `stop()` (from the store's deinit) ends it.
final class WriterLoop: @unchecked Sendable {
    struct Pending: @unchecked Sendable {
        let batch: FactBatch
        let completion: @Sendable (Result<ApplyOutcome, Error>) -> Void
    }

    // Invariant for `@unchecked Sendable`: `database` is used only by the writer thread;
    // `queue` and `stopped` are guarded by their lock.
    private let database: SQLiteDatabase
    private let state = Mutex<(queue: [Pending], stopped: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)

    init(database: SQLiteDatabase) { self.database = database }

    func start() {
        let thread = Thread { self.run() }
        thread.name = "entitle-sqlite-writer"
        thread.start()
    }

    func enqueue(_ pending: Pending) {
        state.withLock { $0.queue.append(pending) }
        wake.signal()
    }

    func stop() {
        state.withLock { $0.stopped = true }
        wake.signal()
    }

    private func run() {
        while true {
            wake.wait()
            let (pending, stopped) = state.withLock { state -> ([Pending], Bool) in
                defer { state.queue.removeAll() }
                return (state.queue, state.stopped)
            }
            if !pending.isEmpty { commit(pending) }
            if stopped { return }
        }
    }

    private func commit(_ pending: [Pending]) {
        defer { database.resetAll() }
        var outcomes: [Result<ApplyOutcome, Error>]
        do {
            try database.execute("BEGIN IMMEDIATE")
            outcomes = pending.map { SQLiteFactStore.writeInSavepoint($0.batch, into: database) }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            outcomes = pending.map { _ in .failure(error) }
        }
        for (item, outcome) in zip(pending, outcomes) { item.completion(outcome) }
    }
}
