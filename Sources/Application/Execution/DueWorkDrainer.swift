import Dispatch
import Foundation
import Instants
import Synchronization

/// Work that waits in the store until it is due (Set App Account Token calls, Google
/// acknowledgements, refund answers): drained on `pool` at once when something was queued
/// (`kick`) and by a timer every `interval`, one drain at a time. Waiting is the timer's, never a
/// pool thread's.
final class DueWorkDrainer: Sendable {
    /// A kick that arrives while a drain runs is not dropped: that drain read its due list before
    /// the new work was committed, so it runs once more when it ends (`.runningAndKicked`).
    private enum State { case idle, running, runningAndKicked }

    private let pool: BlockingPool
    private let clock: any WallClock
    private let drain: @Sendable (Date) -> Void
    private let state = Mutex(State.idle)
    /// Set up once in `init`, then only cancelled (in `deinit`): never shared mutable state.
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    /// `drain` is given the server clock's now; the timer itself runs on real time (how often to
    /// look, not what is due).
    init(interval: TimeInterval, pool: BlockingPool, clock: any WallClock, drain: @escaping @Sendable (Date) -> Void) {
        self.pool = pool
        self.clock = clock
        self.drain = drain
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.kick() }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Drains the due work on the pool (a full pool leaves it to the timer).
    func kick() {
        let start = state.withLock { state -> Bool in
            switch state {
            case .idle:
                state = .running
                return true
            case .running, .runningAndKicked:
                state = .runningAndKicked
                return false
            }
        }
        guard start else { return }
        let submitted = pool.submit { [self] in
            repeat {
                drain(clock.now())
            } while state.withLock { state -> Bool in
                if state == .runningAndKicked {
                    state = .running
                    return true
                }
                state = .idle
                return false
            }
        }
        if !submitted { state.withLock { $0 = .idle } }
    }

    /// `base` doubled for each failed attempt, at most `cap` (an hour).
    static func backoff(attempts: Int, base: TimeInterval, cap: TimeInterval = 3600) -> TimeInterval {
        min(cap, base * pow(2, Double(min(attempts, 16))))
    }
}
