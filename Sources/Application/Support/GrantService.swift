package import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON

/// Promotional grants: support gives a customer an entitlement for a while ("a month of Pro as
/// an apology"), or takes one back. Each is a stored fact written through the same path as
/// Apple's facts, so it causes its event and shows in the subscriber and the history.
package struct GrantService: Sendable {
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

    /// How long a grant lasts: an ISO 8601 duration from now, or an instant.
    package enum Length: Sendable {
        case duration(String)
        case until(Int64)
    }

    /// The longest grant accepted: a typo such as `P100Y` should not become a lifetime.
    static let maximumMilliseconds: Int64 = 10 * 366 * 86_400_000

    /// Gives `entitlement` to the customer; answers the grant as stored (201).
    package func grant(
        appAccountToken: String, entitlement: String, length: Length, reason: String?, environment: AppStoreEnvironment?,
        by caller: Caller, now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        do {
            let token = try AppAccountToken.validated(appAccountToken)
            try requireKnown(entitlement)
            let startsAt = Milliseconds.since1970(now)
            let expiresDate = try end(of: length, from: startsAt)
            if let reason, reason.count > 500 { throw ServiceError.badRequest("reason must be at most 500 characters") }
            let grant = PromotionalGrant(
                id: eventWriter.composer.newId(), appAccountToken: token,
                environment: try environment.map(app.enabled)?.rawValue ?? app.defaultEnvironment.rawValue, entitlement: entitlement,
                startsAt: startsAt, expiresDate: expiresDate, reason: reason?.isEmpty == true ? nil : reason, grantedBy: caller.keyName)
            store(grant, at: startsAt, completion: completion)
        } catch {
            completion(.failure(error))
        }
    }

    /// Ends a grant now. Revoking a revoked grant answers it again and changes nothing.
    package func revoke(
        appAccountToken: String, entitlement: String, grantId: String, by caller: Caller, now: Date,
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        let revokedAt = Milliseconds.since1970(now)
        pool.run({ () throws -> PromotionalGrant in
            let token = try AppAccountToken.validated(appAccountToken)
            guard var grant = try store.grant(appId: app.id, id: grantId.lowercased()), grant.appAccountToken == token,
                grant.entitlement == entitlement
            else { throw ServiceError.notFound("no grant \(grantId) of \(entitlement) for this appAccountToken") }
            guard grant.revokedAt == nil else { return grant }
            grant.revokedAt = revokedAt
            grant.revokedBy = caller.keyName
            return grant
        }) { found in
            switch found {
            case .failure(let error): completion(.failure(error))
            case .success(let grant) where grant.revokedAt != revokedAt:
                completion(.success(SubscriberView.json(grant, now: revokedAt)))
            case .success(let grant): store(grant, at: revokedAt, completion: completion)
            }
        }
    }

    private func store(_ grant: PromotionalGrant, at now: Int64, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        var batch = FactBatch(appId: app.id, environment: grant.environment)
        batch.grant = grant
        batch.source = "support"
        batch.requestedAt = now
        store.record(batch, outbox: eventWriter) { result in
            completion(result.map { _ in SubscriberView.json(grant, now: now) })
        }
    }

    private func requireKnown(_ entitlement: String) throws(ServiceError) {
        let known = Set(app.products.values.flatMap(\.entitlements))
        guard known.contains(entitlement) else {
            throw ServiceError(
                status: 404, code: "UNKNOWN_ENTITLEMENT",
                message: "no product of this app grants \"\(entitlement)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
    }

    private func end(of length: Length, from start: Int64) throws(ServiceError) -> Int64 {
        let end: Int64
        switch length {
        case .duration(let text):
            guard let duration = ISO8601Duration(text) else {
                throw .badRequest("duration must be an ISO 8601 duration such as P1M, P7D or P1Y")
            }
            guard let computed = duration.end(from: start) else { throw .badRequest("a grant lasts at most 10 years") }
            end = computed
        case .until(let instant): end = instant
        }
        guard end > start else { throw .badRequest("a grant must end in the future") }
        guard end - start <= Self.maximumMilliseconds else { throw .badRequest("a grant lasts at most 10 years") }
        return end
    }
}
