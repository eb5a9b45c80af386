import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON

/// Refund reviews' support side: the app's usage evidence (`POST …/usage`), support's per-customer
/// override (`PUT`/`DELETE …/refund-override`), and the requests with what was answered.
package struct RefundService: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let eventWriter: AppEventWriter

    init(_ context: AppContext, eventWriter: AppEventWriter) {
        app = context.app
        store = context.store
        pool = context.pool
        self.eventWriter = eventWriter
    }

    /// Records `items` (each one purchase's evidence) for the customer; answers them as stored.
    package func recordUsage(
        appAccountToken: String, body: JSONObject, by caller: Caller, now: Date,
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        do {
            let token = try AppAccountToken.validated(appAccountToken)
            let recordedAt = Milliseconds.since1970(now)
            let records = try UsageRequest.records(
                body, token: token, at: recordedAt, by: caller.keyName, newId: eventWriter.composer.newId)
            var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
            batch.usage = records
            batch.source = "usage"
            batch.requestedAt = recordedAt
            store.record(batch, outbox: nil) { result in
                completion(result.map { _ in ["usage": .array(records.map { .object($0.json) })] })
            }
        } catch {
            completion(.failure(error))
        }
    }

    /// Sets (or with nil `override`, removes) the customer's override; answers it.
    package func setOverride(
        appAccountToken: String, override: String?, reason: String?, by caller: Caller, now: Date,
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        do {
            let token = try AppAccountToken.validated(appAccountToken)
            if let override, !RefundOverride.choices.contains(override) {
                throw ServiceError.badRequest("override must be ALWAYS_GRANT, ALWAYS_DECLINE or NO_PREFERENCE")
            }
            if let reason, reason.count > 500 { throw ServiceError.badRequest("reason must be at most 500 characters") }
            let setAt = Milliseconds.since1970(now)
            let stored = override.map {
                RefundOverride(
                    appAccountToken: token, override: $0, reason: reason?.isEmpty == true ? nil : reason, setBy: caller.keyName,
                    setAt: setAt)
            }
            var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
            batch.refundOverride = (token, stored)
            batch.source = "support"
            batch.requestedAt = setAt
            store.record(batch, outbox: nil) { result in
                completion(result.map { _ in stored.map { ["refundOverride": .object($0.json)] } ?? ["refundOverride": .null] })
            }
        } catch {
            completion(.failure(error))
        }
    }

    package func override(appAccountToken: String, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        pool.run(
            {
                let token = try AppAccountToken.validated(appAccountToken)
                let stored = try store.refundOverride(appId: app.id, appAccountToken: token)
                return ["refundOverride": stored.map { .object($0.json) } ?? .null]
            }, completion: completion)
    }

    /// `GET /v1/refund-requests`: newest first, each with what was answered, by what, and the
    /// store's decision.
    package func requests(limit: Int, now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        pool.run(
            {
                let nowMs = Milliseconds.since1970(now)
                let items: [JSONValue] = try store.refundRequests(appId: app.id, limit: limit).map { request in
                    var item = request.json
                    if request.status == .pending { item["secondsLeft"] = .int(max(0, (request.deadline - nowMs) / 1000)) }
                    return .object(item)
                }
                return ["refundRequests": .array(items)]
            }, completion: completion)
    }
}
