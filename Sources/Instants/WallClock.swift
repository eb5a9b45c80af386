package import Foundation
import Synchronization

/// The one clock of the server: every instant it uses (derivation's "now", deadlines, retries,
/// event and webhook timestamps, the figures, console sessions) is read from the clock the
/// composition root gives, never from `Date()`, so a test — and a test store — can move time for
/// the whole server. Rates (the rate limiter's buckets) and timeouts are measured on the
/// monotonic clock instead: they measure the process's real load and waits, not business time.
package protocol WallClock: Sendable {
    func now() -> Date
}

extension WallClock {
    /// Now, in epoch milliseconds.
    package var milliseconds: Int64 { Milliseconds.since1970(now()) }
}

/// The machine's clock.
package struct SystemClock: WallClock {
    package init() {}
    package func now() -> Date { Date() }
}

/// A clock that is moved rather than read from the machine: it starts at an instant and moves
/// only forward, by `advance(by:)` or `move(to:)`, or on its own at `speed` times real time.
/// Tests use it, and so does the test store.
package final class MovableClock: WallClock {
    private struct State {
        /// The instant the clock showed at `since` (real time), and how fast it has run since.
        var shown: Date
        var since: Date
        var speed: Double
    }

    private let state: Mutex<State>
    private let real: @Sendable () -> Date

    package init(at start: Date, real: @escaping @Sendable () -> Date = { Date() }) {
        self.real = real
        state = Mutex(State(shown: start, since: real(), speed: 0))
    }

    package func now() -> Date {
        let realNow = real()
        return state.withLock { Self.shown($0, at: realNow) }
    }

    /// The machine's time, which the clock runs from (what a signature made outside the moved
    /// clock, by Apple's libraries say, is dated by).
    package var machineNow: Date { real() }

    /// Moves the clock forward by `seconds` (≥ 0) and answers the instant it now shows.
    @discardableResult
    package func advance(by seconds: TimeInterval) -> Date {
        let realNow = real()
        return state.withLock { state in
            state.shown = Self.shown(state, at: realNow).addingTimeInterval(max(0, seconds))
            state.since = realNow
            return state.shown
        }
    }

    /// Moves the clock to `instant` if that is later than what it shows (it never goes back);
    /// answers the instant it now shows.
    @discardableResult
    package func move(to instant: Date) -> Date {
        let realNow = real()
        return state.withLock { state in
            state.shown = max(Self.shown(state, at: realNow), instant)
            state.since = realNow
            return state.shown
        }
    }

    /// From now on the clock runs on its own at `speed` times real time (0 stops it).
    package func run(speed: Double) {
        let realNow = real()
        state.withLock { state in
            state.shown = Self.shown(state, at: realNow)
            state.since = realNow
            state.speed = max(0, speed)
        }
    }

    private static func shown(_ state: State, at realNow: Date) -> Date {
        state.speed == 0 ? state.shown : state.shown.addingTimeInterval(max(0, realNow.timeIntervalSince(state.since)) * state.speed)
    }
}
