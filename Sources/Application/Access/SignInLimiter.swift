import Synchronization

/// Bounds guessing at the console's sign-in without telling a guesser anything: a client gets
/// `perClient` failures in `window` seconds, after which every attempt from it is refused before
/// its key is looked at, the right key too (429 for a wrong key but 200 for the right one was an
/// oracle). All clients together get `overall` failures (an attacker spreading over addresses);
/// past that, only clients that signed in before (`known`) have their key checked, so support
/// keeps its way in and a fresh address learns nothing. Memory stays bounded: at most
/// `maxClients` addresses of each kind are remembered.
final class SignInLimiter: Sendable {
    let perClient: Int
    let overall: Int
    let window: Int64
    private let maxClients = 10_000

    private struct State {
        var failures: [String: [Int64]] = [:]
        var all: [Int64] = []
        /// Clients that signed in, with when they last did.
        var known: [String: Int64] = [:]
    }
    private let state = Mutex(State())

    init(perClient: Int = 5, overall: Int = 100, windowSeconds: Int64 = 300) {
        self.perClient = perClient
        self.overall = overall
        window = windowSeconds
    }

    /// Seconds until `client` may try again, asked before its key is checked; nil when it may now.
    func retryAfter(client: String, now: Int64) -> Int64? {
        state.withLock { state in
            let start = now - window
            let mine = (state.failures[client] ?? []).filter { $0 > start }
            state.all.removeAll { $0 <= start }
            if mine.count >= perClient, let oldest = mine.first { return max(1, oldest + window - now) }
            if state.all.count >= overall, state.known[client] == nil, let oldest = state.all.first {
                return max(1, oldest + window - now)
            }
            return nil
        }
    }

    func failed(client: String, now: Int64) {
        state.withLock { state in
            let start = now - window
            if state.failures.count >= maxClients { state.failures = state.failures.filter { $0.value.contains { $0 > start } } }
            if state.failures.count >= maxClients { state.failures.removeAll() }
            state.failures[client, default: []].removeAll { $0 <= start }
            state.failures[client, default: []].append(now)
            state.all.append(now)
        }
    }

    func succeeded(client: String, now: Int64) {
        state.withLock { state in
            if state.known.count >= maxClients, state.known[client] == nil,
                let oldest = state.known.min(by: { $0.value < $1.value })?.key
            {
                state.known[oldest] = nil
            }
            state.known[client] = now
        }
    }
}
