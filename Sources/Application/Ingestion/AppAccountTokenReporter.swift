import AppStore
import AppStoreAPI
import Entitlements
import Foundation
import Instants

/// Tells Apple the appAccountToken a client linked to an untokened subscription (Set App Account
/// Token), so later notifications and history carry it. Each call is queued durably in the same
/// batch as the link; it is tried at once and, when Apple does not take it, again with a doubling
/// delay (from `tokenRetrySeconds` up to an hour). A failed call never undoes the link; it is
/// logged and counted.
final class AppAccountTokenReporter: Sendable {
    private let drainer: DueWorkDrainer

    init(
        app: AppConfiguration, store: any FactStore, pool: BlockingPool, clients: [AppStoreEnvironment: AppStoreServerAPIClient],
        instrumentation: any Instrumentation
    ) {
        let calls = TokenCalls(app: app, store: store, clients: clients, instrumentation: instrumentation)
        drainer = DueWorkDrainer(interval: app.serverAPI.tokenRetrySeconds, pool: pool, drain: calls.drain)
    }

    func kick() { drainer.kick() }
}

/// The queued calls of one app, made when due.
private struct TokenCalls: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let clients: [AppStoreEnvironment: AppStoreServerAPIClient]
    let instrumentation: any Instrumentation

    func drain(now: Date) {
        let nowMs = Milliseconds.since1970(now)
        let due: [PendingTokenCall]
        do { due = try store.dueTokenCalls(appId: app.id, now: nowMs, limit: 100) } catch {
            instrumentation.backgroundFailed(app: app.id, task: "token_calls", error)
            return
        }
        for call in due {
            let environment = AppStoreEnvironment(rawValue: call.environment)
            var outcome = FactBatch(appId: app.id, environment: call.environment)
            do {
                guard let client = clients[environment] else { throw AppStoreAPIError.decoding("no client", environment: call.environment) }
                try client.setAppAccountToken(call.originalTransactionId, appAccountToken: call.appAccountToken)
                outcome.tokenCallOutcome = (call.originalTransactionId, nil)
            } catch {
                instrumentation.backgroundFailed(app: app.id, task: "token_calls", error)
                let delay = DueWorkDrainer.backoff(attempts: call.attempts, base: app.serverAPI.tokenRetrySeconds)
                outcome.tokenCallOutcome = (call.originalTransactionId, nowMs + Int64(delay * 1000))
            }
            do { _ = try store.record(outcome) } catch {
                // The call stays queued as it was: made again when next due.
                instrumentation.backgroundFailed(app: app.id, task: "token_calls", error)
            }
        }
    }
}
