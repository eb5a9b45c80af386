import AppStore
import AppStoreAPI
import Entitlements
import Foundation
import Instants

/// The calls Entitle owes the App Store Server API: Set App Account Token when a client links an
/// untokened subscription, Finish Transaction when the server delivers a new one-time purchase
/// (`finishTransactions`). Each is queued durably in the batch that causes it, tried at once and,
/// when Apple does not take it, again with a doubling delay (from `callRetrySeconds` up to an
/// hour). A failed call never undoes the facts; it is logged and counted.
final class AppleCallQueue: Sendable {
    private let drainer: DueWorkDrainer

    init(_ context: AppContext, clients: AppStoreClients) {
        let calls = AppleCalls(
            app: context.app, store: context.store, pool: context.pool, clients: clients, instrumentation: context.instrumentation)
        drainer = DueWorkDrainer(interval: context.app.serverAPI.callRetrySeconds, clock: context.clock, drain: calls.drain)
    }

    func kick() { drainer.kick() }

    /// Cancels the call in flight; what is not done stays queued.
    func stop() { drainer.stop() }
}

/// The queued calls of one app, made when due.
private struct AppleCalls: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    /// The database's pool: the store's reads and writes.
    let pool: BlockingPool
    let clients: AppStoreClients
    let instrumentation: any Instrumentation

    func drain(now: Date) async {
        let nowMs = Milliseconds.since1970(now)
        let due: [PendingAppleCall]
        do { due = try await pool.perform { [store, app] in try store.dueAppleCalls(appId: app.id, now: nowMs, limit: 100) } } catch {
            instrumentation.backgroundFailed(app: app.id, task: "apple_calls", error)
            return
        }
        for call in due {
            // Stopping: the rest stays queued, as it was.
            if Task.isCancelled { return }
            var outcome = FactBatch(appId: app.id, environment: call.environment)
            do {
                try await make(call)
                outcome.appleCallOutcome = (call.kind, call.transactionId, nil)
            } catch {
                instrumentation.backgroundFailed(app: app.id, task: "apple_calls", error)
                let delay = DueWorkDrainer.backoff(attempts: call.attempts, base: app.serverAPI.callRetrySeconds)
                outcome.appleCallOutcome = (call.kind, call.transactionId, nowMs + Int64(delay * 1000))
            }
            let settled = outcome
            do { _ = try await pool.perform { [store] in try store.record(settled) } } catch {
                // The call stays queued as it was: made again when next due.
                instrumentation.backgroundFailed(app: app.id, task: "apple_calls", error)
            }
        }
    }

    private func make(_ call: PendingAppleCall) async throws {
        guard let client = clients[AppStoreEnvironment(rawValue: call.environment)] else {
            throw AppStoreAPIError.decoding("no client", environment: call.environment)
        }
        switch call.kind {
        case .setAppAccountToken: try await client.setAppAccountToken(call.transactionId, appAccountToken: call.appAccountToken ?? "")
        case .finishTransaction: try await client.finishTransaction(call.transactionId)
        }
    }
}
