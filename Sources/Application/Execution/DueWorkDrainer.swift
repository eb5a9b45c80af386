import Dispatch
import Foundation
import Instants
import Synchronization

/// Work that waits in the store until it is due (Set App Account Token calls, Google
/// acknowledgements, refund answers): drained in a task at once when something was queued
/// (`kick`) and by a timer every `interval`, one drain at a time. The drain is async: its database
/// work goes to the database pool and its calls to Apple or Google hold no thread while they
/// wait; `stop()` cancels the drain in flight, and with it the call it waits on.
final class DueWorkDrainer: Sendable {
    /// A kick that arrives while a drain runs is not dropped: that drain read its due list before
    /// the new work was committed, so it runs once more when it ends (`.runningAndKicked`).
    private enum Phase { case idle, running, runningAndKicked, stopped }
    private struct State {
        var phase = Phase.idle
        var task: Task<Void, Never>?
    }

    private let clock: any WallClock
    private let drain: @Sendable (Date) async -> Void
    private let state = Mutex(State())
    /// Set up once in `init`, then only cancelled: never shared mutable state.
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    /// `drain` is given the server clock's now; the timer itself runs on real time (how often to
    /// look, not what is due).
    init(interval: TimeInterval, clock: any WallClock, drain: @escaping @Sendable (Date) async -> Void) {
        self.clock = clock
        self.drain = drain
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.kick() }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Drains the due work now, or once more after the drain in flight.
    func kick() {
        state.withLock { state in
            switch state.phase {
            case .idle:
                state.phase = .running
                state.task = Task { [self] in await drainUntilQuiet() }
            case .running, .runningAndKicked: state.phase = .runningAndKicked
            case .stopped: break
            }
        }
    }

    /// Stops the timer and cancels the drain in flight (what it did not finish stays due in the
    /// store, for the next start).
    func stop() {
        timer.cancel()
        let task = state.withLock { state in
            state.phase = .stopped
            return state.task
        }
        task?.cancel()
    }

    private func drainUntilQuiet() async {
        repeat {
            await drain(clock.now())
        } while state.withLock { state -> Bool in
            switch state.phase {
            case .runningAndKicked:
                state.phase = .running
                return true
            case .stopped: return false
            default:
                state.phase = .idle
                state.task = nil
                return false
            }
        }
    }

    /// `base` doubled for each failed attempt, at most `cap` (an hour).
    static func backoff(attempts: Int, base: TimeInterval, cap: TimeInterval = 3600) -> TimeInterval {
        min(cap, base * pow(2, Double(min(attempts, 16))))
    }
}
