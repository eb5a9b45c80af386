import Dispatch
import Foundation
import Synchronization

/// Work that waits in the store until it is due (Set App Account Token calls, Google
/// acknowledgements): drained on `pool` at once when something was queued (`kick`) and by a
/// timer every `interval`, one drain at a time. Waiting is the timer's, never a pool thread's.
final class DueWorkDrainer: Sendable {
    private let pool: BlockingPool
    private let drain: @Sendable (Date) -> Void
    private let draining = Mutex(false)
    /// Set up once in `init`, then only cancelled (in `deinit`): never shared mutable state.
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    init(interval: TimeInterval, pool: BlockingPool, drain: @escaping @Sendable (Date) -> Void) {
        self.pool = pool
        self.drain = drain
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.kick() }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Drains the due work on the pool (a full pool leaves it to the timer).
    func kick() {
        pool.submit { [self] in
            guard
                draining.withLock({ running in
                    defer { running = true }
                    return !running
                })
            else { return }
            defer { draining.withLock { $0 = false } }
            drain(Date())
        }
    }

    /// `base` doubled for each failed attempt, at most `cap` (an hour).
    static func backoff(attempts: Int, base: TimeInterval, cap: TimeInterval = 3600) -> TimeInterval {
        min(cap, base * pow(2, Double(min(attempts, 16))))
    }
}
