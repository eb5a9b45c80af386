import Foundation
import Synchronization

/// Where blocking work runs, one pool per kind: the database's (reads, local work) and the
/// outbound one (the App Store Server API, Google, OCSP), so a slow upstream never makes a
/// subscriber read wait. A fixed set of threads takes jobs in arrival order; event loops and
/// Swift's cooperative pool never wait on disk or network. Use cases decide what goes where;
/// HTTP handlers never do. Waiting for a retry is a timer's job, never a pool thread's.
///
/// The queue is bounded: past `maxQueuedJobs` a job is refused at once with 503
/// `OVERLOADED` instead of growing memory and latency without end.
package final class BlockingPool: Sendable {
    package let threadCount: Int
    package let maxQueuedJobs: Int
    private let state = Mutex(State())
    private let wakeUp = NSCondition()

    private struct State: ~Copyable {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var stopping = false
        var busy = 0
    }

    /// `threads` 0 means twice the cores, at least 4 (most jobs wait on I/O, not on a core).
    package init(threads: Int, maxQueuedJobs: Int = 10_000, name: String = "entitle-blocking") {
        threadCount = threads > 0 ? threads : max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
        self.maxQueuedJobs = maxQueuedJobs
        for index in 0..<threadCount {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Runs `job` on a pool thread; false when the queue is full (the job is dropped).
    @discardableResult
    package func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping, state.jobs.count - state.head < maxQueuedJobs else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted {
            wakeUp.lock()
            wakeUp.signal()
            wakeUp.unlock()
        }
        return accepted
    }

    /// Runs `job` on a pool thread, or `overloaded` at once when the queue is full (so the
    /// caller can still answer).
    package func submit(_ job: @escaping @Sendable () -> Void, overloaded: () -> Void) {
        if !submit(job) { overloaded() }
    }

    /// Runs `work` on a pool thread and hands its result to `completion` there.
    package func run<T: Sendable>(
        _ work: @escaping @Sendable () throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let accepted = submit { completion(Result { try work() }) }
        if !accepted { completion(.failure(ServiceError.overloaded)) }
    }

    /// Runs `work` on a pool thread and resumes the caller with its result (an async caller,
    /// which holds no thread meanwhile); `OVERLOADED` when the queue is full.
    package func perform<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            run(work) { continuation.resume(with: $0) }
        }
    }

    /// Jobs waiting and running now (for `/metrics`).
    package var queuedJobs: Int { state.withLock { $0.jobs.count - $0.head } }
    package var busyThreads: Int { state.withLock { $0.busy } }

    /// Lets queued jobs finish, then ends the threads.
    package func stop() {
        state.withLock { $0.stopping = true }
        wakeUp.lock()
        wakeUp.broadcast()
        wakeUp.unlock()
    }

    private func work() {
        while true {
            wakeUp.lock()
            var job = nextJob()
            while job == nil {
                if state.withLock({ $0.stopping }) {
                    wakeUp.unlock()
                    return
                }
                wakeUp.wait()
                job = nextJob()
            }
            wakeUp.unlock()
            job?()
            state.withLock { $0.busy -= 1 }
        }
    }

    private func nextJob() -> (@Sendable () -> Void)? {
        state.withLock { state in
            guard state.head < state.jobs.count else { return nil }
            let job = state.jobs[state.head]
            state.head += 1
            if state.head > 1024 && state.head * 2 > state.jobs.count {
                state.jobs.removeFirst(state.head)
                state.head = 0
            }
            state.busy += 1
            return job
        }
    }
}

extension ServiceError {
    /// The blocking pool's queue is full.
    package static let overloaded = ServiceError(status: 503, code: "OVERLOADED", message: "the server is busy; try again")
}
