import AppStore
import AppStoreAPI
import Dispatch
import Entitlements
import Foundation
import Instants
import Synchronization

/// Tells Apple the appAccountToken a client linked to an untokened subscription (Set App Account
/// Token), so later notifications and history carry it. Each call is queued durably in the same
/// batch as the link; it is tried at once on the blocking pool and, when Apple does not take it,
/// again by a timer with a doubling delay (from `tokenRetrySeconds` up to an hour). A failed call
/// never undoes the link.
final class AppAccountTokenReporter: Sendable {
    private let app: AppConfiguration
    private let store: any FactStore
    private let pool: BlockingPool
    private let clients: [AppStoreEnvironment: AppStoreServerAPIClient]
    private let draining = Mutex(false)
    /// Set up once in `init`, then only cancelled (in `deinit`): never shared mutable state.
    private nonisolated(unsafe) let timer: DispatchSourceTimer

    init(app: AppConfiguration, store: any FactStore, pool: BlockingPool, clients: [AppStoreEnvironment: AppStoreServerAPIClient]) {
        self.app = app
        self.store = store
        self.pool = pool
        self.clients = clients
        timer = DispatchSource.makeTimerSource(queue: .global())
        let interval = app.serverAPI.tokenRetrySeconds
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.kick() }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Drains the due calls on the pool (at most one drain at a time; a full pool waits for the timer).
    func kick() {
        pool.submit { [self] in
            guard
                draining.withLock({ running in
                    defer { running = true }
                    return !running
                })
            else { return }
            defer { draining.withLock { $0 = false } }
            drain(now: Date())
        }
    }

    private func drain(now: Date) {
        let nowMs = Milliseconds.since1970(now)
        guard let due = try? store.dueTokenCalls(appId: app.id, now: nowMs, limit: 100) else { return }
        for call in due {
            let environment = AppStoreEnvironment(rawValue: call.environment)
            var outcome = FactBatch(appId: app.id, environment: call.environment)
            do {
                guard let client = clients[environment] else { throw AppStoreAPIError.decoding("no client", environment: call.environment) }
                try client.setAppAccountToken(call.originalTransactionId, appAccountToken: call.appAccountToken)
                outcome.tokenCallOutcome = (call.originalTransactionId, nil)
            } catch {
                let delay = min(3600, app.serverAPI.tokenRetrySeconds * pow(2, Double(min(call.attempts, 16))))
                outcome.tokenCallOutcome = (call.originalTransactionId, nowMs + Int64(delay * 1000))
            }
            _ = try? store.record(outcome)
        }
    }
}
