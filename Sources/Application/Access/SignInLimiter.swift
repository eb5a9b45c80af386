import Synchronization

/// Bounds guessing at the console's sign-in: a client gets `perClient` failures in `window`
/// seconds, and all clients together `overall` (so an attacker spreading over addresses is
/// bounded too). Memory stays bounded: at most `maxClients` addresses are remembered.
final class SignInLimiter: Sendable {
    let perClient: Int
    let overall: Int
    let window: Int64
    private let maxClients = 10_000
    private let state = Mutex<(clients: [String: [Int64]], all: [Int64])>(([:], []))

    init(perClient: Int = 5, overall: Int = 100, windowSeconds: Int64 = 300) {
        self.perClient = perClient
        self.overall = overall
        window = windowSeconds
    }

    /// Seconds until `client` may try again; nil when it may now.
    func retryAfter(client: String, now: Int64) -> Int64? {
        state.withLock { state in
            let start = now - window
            let mine = (state.clients[client] ?? []).filter { $0 > start }
            state.all.removeAll { $0 <= start }
            if mine.count >= perClient, let oldest = mine.first { return max(1, oldest + window - now) }
            if state.all.count >= overall, let oldest = state.all.first { return max(1, oldest + window - now) }
            return nil
        }
    }

    func failed(client: String, now: Int64) {
        state.withLock { state in
            let start = now - window
            if state.clients.count >= maxClients { state.clients = state.clients.filter { $0.value.contains { $0 > start } } }
            if state.clients.count >= maxClients { state.clients.removeAll() }
            state.clients[client, default: []].removeAll { $0 <= start }
            state.clients[client, default: []].append(now)
            state.all.append(now)
        }
    }
}
