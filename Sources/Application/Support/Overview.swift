import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON
import Synchronization

/// `GET /v1/stats`: how the app's customers stand now — active subscribers per entitlement and
/// environment, trials running, subscriptions in grace or billing retry, notifications of the
/// last hour and day by type (and per hour, for the console's chart), verification failures, and
/// the webhook backlog.
///
/// Counting subscribers evaluates every stored subscription (the same rules as a subscriber's
/// answer, so the numbers agree with it): a walk of the whole store, run on the blocking pool and
/// kept for `cacheSeconds` so a busy console does not repeat it (`subscribersCountedAt` says
/// when it was made; the other numbers are read afresh).
package final class Overview: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let failures: RecentFailures
    static let cacheSeconds: Int64 = 15
    private static let page = 500
    private static let hour = NotificationCount.hour
    private let cached = Mutex<(at: Int64, subscribers: JSONObject)?>(nil)
    /// Held while counting, so requests arriving meanwhile wait for that walk and read its result
    /// instead of walking the store again (they are on the blocking pool, where waiting is allowed).
    private let walking = Mutex<Void>(())

    init(_ context: AppContext) {
        app = context.app
        store = context.store
        pool = context.pool
        failures = context.failures
    }

    package func stats(now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        pool.run({ try self.stats(now: now) }, completion: completion)
    }

    package func stats(now date: Date) throws -> JSONObject {
        let now = Milliseconds.since1970(date)
        var answer: JSONObject = [:]
        Timestamps.set(&answer, "generatedAt", now)
        let (countedAt, subscribers) = try subscriberCounts(now: now)
        Timestamps.set(&answer, "subscribersCountedAt", countedAt)
        for member in subscribers.members { answer[member.key] = member.value }
        answer["notifications"] = .object(try notifications(now: now))
        answer["verificationFailures"] = .object(verificationFailures(now: now))
        answer["unreadableRows"] = .array(store.unreadableRows.rows.map { .object(UnreadableRowsJSON.object($0)) })
        let backlog = try store.deliveryBacklog(appId: app.id)
        var deliveries: JSONObject = ["pending": .int(Int64(backlog.pending)), "failed": .int(Int64(backlog.failed))]
        Timestamps.set(&deliveries, "oldestPendingCreatedAt", backlog.oldestPendingCreatedAt)
        answer["webhookDeliveries"] = .object(deliveries)
        return answer
    }

    /// Per environment: customers with each entitlement active, trials, grace, billing retry.
    private func subscriberCounts(now: Int64) throws -> (at: Int64, counts: JSONObject) {
        try walking.withLock { _ in
            if let cached = cached.withLock({ $0 }), now - cached.at < Self.cacheSeconds * 1000 { return (cached.at, cached.subscribers) }
            return try countSubscribers(now: now)
        }
    }

    private func countSubscribers(now: Int64) throws -> (at: Int64, counts: JSONObject) {
        var active = JSONObject()
        var trials = JSONObject()
        var grace = JSONObject()
        var retry = JSONObject()
        var promotional = JSONObject()
        let grants = try store.activeGrants(appId: app.id, at: now)
        let play = try playStates(now: now)
        for environment in AppStoreEnvironment.all.filter(app.environments.contains).map(\.rawValue) {
            var customers: [String: Set<String>] = [:]
            var counts = (trials: 0, grace: 0, retry: 0)
            try store.eachSubscriptionPage(appId: app.id, environment: environment, pageSize: Self.page) { page in
                for facts in page {
                    let id = facts.originalTransactionId
                    let status = SubscriberEvaluation.evaluate(
                        [facts], now: now, environment: environment, products: app.products,
                        billingRetryGrantsAccess: app.billingRetryGrantsAccess)
                    let customer = facts.appAccountToken ?? "subscription:" + id
                    for (name, grant) in status.entitlements where grant.isActive { customers[name, default: []].insert(customer) }
                    for state in status.subscriptions {
                        if state.isActive && state.periodType == "TRIAL" { counts.trials += 1 }
                        if state.state == .gracePeriod { counts.grace += 1 }
                        if state.state == .billingRetry { counts.retry += 1 }
                    }
                }
            }
            for state in play where state.purchase.environment == environment {
                let customer = state.purchase.appAccountToken ?? "googlePlay:" + state.purchase.purchaseToken
                if state.isActive, let catalogId = state.catalogProductId {
                    for name in app.products[catalogId]?.entitlements ?? [] { customers[name, default: []].insert(customer) }
                }
                if state.state == "GRACE_PERIOD" { counts.grace += 1 }
                if state.state == "BILLING_RETRY" { counts.retry += 1 }
            }
            let granted = grants.filter { $0.environment == environment }
            for grant in granted { customers[grant.entitlement, default: []].insert(grant.appAccountToken) }
            var byEntitlement = JSONObject()
            for name in Set(app.products.values.flatMap(\.entitlements)).union(customers.keys).sorted() {
                byEntitlement[name] = .int(Int64(customers[name]?.count ?? 0))
            }
            active[environment] = .object(byEntitlement)
            trials[environment] = .int(Int64(counts.trials))
            grace[environment] = .int(Int64(counts.grace))
            retry[environment] = .int(Int64(counts.retry))
            promotional[environment] = .int(Int64(granted.count))
        }
        let subscribers: JSONObject = [
            "activeSubscribers": .object(active), "trialsRunning": .object(trials), "inGracePeriod": .object(grace),
            "inBillingRetry": .object(retry), "activePromotionalGrants": .object(promotional),
        ]
        cached.withLock { $0 = (now, subscribers) }
        return (now, subscribers)
    }

    /// Every Google Play purchase's state (none without `googlePlay`), superseded ones left out.
    /// Two walks keep memory to one page and the replaced tokens: the first finds which purchases
    /// a later one replaced (`linkedPurchaseToken`), the second evaluates each page.
    private func playStates(now: Int64) throws -> [PlayPurchaseState] {
        guard app.googlePlay != nil else { return [] }
        func walk(_ body: ([PlayPurchase]) -> Void) throws {
            var after: String?
            while true {
                let page = try store.playPurchases(appId: app.id, after: after, limit: Self.page)
                body(page)
                guard page.count == Self.page, let last = page.last else { return }
                after = last.purchaseToken
            }
        }
        var replaced = Set<String>()
        try walk { page in for case let linked? in page.map(\.linkedPurchaseToken) { replaced.insert(linked) } }
        var states: [PlayPurchaseState] = []
        try walk { page in
            for purchase in page where !replaced.contains(purchase.purchaseToken) && purchase.startTime <= now {
                let state = PlayEvaluation.state(
                    purchase, supersededTokens: replaced, now: now, products: app.products,
                    billingRetryGrantsAccess: app.billingRetryGrantsAccess)
                if state.isActive || state.state == "GRACE_PERIOD" || state.state == "BILLING_RETRY" { states.append(state) }
            }
        }
        return states
    }

    /// The last 60 minutes and 24 hours by type, and each of the last 24 clock hours (oldest first).
    private func notifications(now: Int64) throws -> JSONObject {
        func byType(_ counts: [NotificationCount]) -> JSONObject {
            var types: [String: Int] = [:]
            for count in counts { types[count.notificationType, default: 0] += count.count }
            var object = JSONObject()
            for name in types.keys.sorted() { object[name] = .int(Int64(types[name]!)) }
            return ["total": .int(Int64(types.values.reduce(0, +))), "byType": .object(object)]
        }
        let firstHour = now / Self.hour * Self.hour - 23 * Self.hour
        let hours = try store.notificationCounts(appId: app.id, since: firstHour, width: Self.hour)
        let hourly: [JSONValue] = (0..<24).map { index in
            let start = firstHour + Int64(index) * Self.hour
            var object: JSONObject = [:]
            Timestamps.set(&object, "hourStart", start)
            object["count"] = .int(Int64(hours.filter { $0.hourStart == start }.reduce(0) { $0 + $1.count }))
            return .object(object)
        }
        return [
            "lastHour": .object(byType(try store.notificationCounts(appId: app.id, since: now - Self.hour, width: Self.hour))),
            "lastDay": .object(byType(try store.notificationCounts(appId: app.id, since: now - 24 * Self.hour, width: Self.hour))),
            "hourly": .array(hourly),
        ]
    }

    private func verificationFailures(now: Int64) -> JSONObject {
        func json(_ counts: [String: Int]) -> JSONObject {
            var object = JSONObject()
            for key in counts.keys.sorted() { object[key] = .int(Int64(counts[key]!)) }
            return ["total": .int(Int64(counts.values.reduce(0, +))), "bySourceKindResult": .object(object)]
        }
        return [
            "lastHour": .object(json(failures.counts(app: app.id, since: now - Self.hour))),
            "lastDay": .object(json(failures.counts(app: app.id, since: now - 24 * Self.hour))),
            "scope": "this instance, since it started",
        ]
    }
}
