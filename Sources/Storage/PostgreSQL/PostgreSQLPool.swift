import Dispatch
import Foundation
import Synchronization

/// A bounded set of connections (`size`), opened as needed and reused. A caller that finds every
/// connection busy waits for one; callers are the store's own worker threads and the blocking
/// pool, never an event loop.
final class PostgreSQLPool: Sendable {
    let size: Int
    private let conninfo: String
    private let idle = Mutex<[Box]>([])
    private let slots: DispatchSemaphore

    /// Lets a connection live in a `Mutex` (each is used by one caller at a time).
    struct Box: @unchecked Sendable { let connection: PostgreSQLConnection }

    init(conninfo: String, size: Int) {
        self.conninfo = conninfo
        self.size = size
        slots = DispatchSemaphore(value: size)
    }

    func with<T>(_ body: (PostgreSQLConnection) throws -> T) throws -> T {
        slots.wait()
        defer { slots.signal() }
        let box = try idle.withLock { $0.popLast() } ?? Box(connection: PostgreSQLConnection(conninfo: conninfo))
        defer { if box.connection.isHealthy { idle.withLock { $0.append(box) } } }
        return try body(box.connection)
    }

    /// `body` inside `BEGIN … COMMIT` on one connection; any error rolls back. A `RolledBack`
    /// answer rolls back and still returns its value.
    func transaction<T>(_ body: (PostgreSQLConnection) throws -> T) throws -> T {
        try with { connection in
            try connection.execute("BEGIN")
            do {
                let value = try body(connection)
                try connection.execute("COMMIT")
                return value
            } catch let answer as RolledBackAnswer {
                connection.discardDeferred()
                try connection.execute("ROLLBACK")
                guard let value = answer.value as? T else { throw answer }
                return value
            } catch {
                connection.discardDeferred()
                // The rollback's own failure would hide the error that caused it; the connection
                // is replaced when it is broken.
                if connection.isHealthy { _ = try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// Thrown inside `transaction` to undo everything and still answer `value`.
    struct RolledBackAnswer: Error, @unchecked Sendable { let value: Any }
}

/// The store's own threads for writes: `apply(_:completion:)` queues here, so event loops hand
/// off a batch and are called back after the commit, while a bounded number of transactions run
/// at once (one per pool connection).
final class PostgreSQLWorkers: Sendable {
    private let queue = Mutex<(jobs: [@Sendable () -> Void], stopped: Bool)>(([], false))
    private let bell = DispatchSemaphore(value: 0)

    init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [self] in run() }
            thread.name = "entitle-pg-\(index)"
            thread.start()
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        queue.withLock { $0.jobs.append(job) }
        bell.signal()
    }

    func stop(threads: Int) {
        queue.withLock { $0.stopped = true }
        for _ in 0..<threads { bell.signal() }
    }

    private func run() {
        while true {
            bell.wait()
            let (job, stopped) = queue.withLock { state -> ((@Sendable () -> Void)?, Bool) in
                (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.stopped)
            }
            if let job { job() } else if stopped { return }
        }
    }
}
