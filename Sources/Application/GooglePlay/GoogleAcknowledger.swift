import Entitlements
import Foundation
import GooglePlay
import Instants

/// Acknowledges Google Play purchases until Google confirms. Google refunds a purchase left
/// unacknowledged for three days, so nothing here is fire-and-forget: the batch that stores a
/// purchase queues its acknowledgement (`FactWriter`), one attempt is made at once, and a failed
/// one is logged, counted and tried again with a doubling delay. Purchases still waiting a day
/// after they were stored are an `error` line, the gauge `entitle_google_unacknowledged_purchases`
/// and a `/readyz` warning.
final class GoogleAcknowledger: Sendable {
    private let acknowledgements: Acknowledgements
    private let drainer: DueWorkDrainer

    /// `pool`: the database's, for the store's reads and writes.
    init(
        app: AppConfiguration, settings: GooglePlaySettings, store: any FactStore, pool: BlockingPool, api: any GooglePlayAPI,
        instrumentation: any Instrumentation, clock: any WallClock
    ) {
        acknowledgements = Acknowledgements(
            app: app, store: store, pool: pool, api: api, instrumentation: instrumentation,
            retrySeconds: settings.acknowledgementRetrySeconds)
        drainer = DueWorkDrainer(interval: settings.acknowledgementRetrySeconds, clock: clock, drain: acknowledgements.drain)
    }

    /// One attempt for a purchase just stored (its acknowledgement queued with it): the purchase
    /// as now stored, acknowledged when Google took it.
    func acknowledge(_ purchase: PlayPurchase, answer: String, now: Date) async throws -> PlayPurchase {
        try await acknowledgements.attempt(purchase, answer: answer, attempts: 0, now: now)
    }

    /// Purchases queued longer than a day ago and still waiting.
    func late(now: Date) throws -> Int {
        try acknowledgements.store.pendingAcknowledgements(
            appId: acknowledgements.app.id, queuedBefore: Milliseconds.since1970(now) - Acknowledgements.lateAfter)
    }

    func kick() { drainer.kick() }

    /// Cancels the attempt in flight; what is not acknowledged stays queued.
    func stop() { drainer.stop() }
}

/// The queued acknowledgements of one app.
private struct Acknowledgements: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let api: any GooglePlayAPI
    let instrumentation: any Instrumentation
    let retrySeconds: Double
    /// A day, in milliseconds: two days before Google refunds.
    static let lateAfter: Int64 = 86_400_000

    func drain(now: Date) async {
        let nowMs = Milliseconds.since1970(now)
        do {
            let due = try await pool.perform { [store, app] in try store.dueAcknowledgements(appId: app.id, now: nowMs, limit: 100) }
            for pending in due {
                // Stopping: the rest stays queued, as it was.
                if Task.isCancelled { return }
                // The purchase as stored now, with the answer Google gave; nil when nothing is left to do.
                let waiting = try await pool.perform { [store, app] () throws -> (PlayPurchase, String)? in
                    guard let stored = try store.playPurchase(appId: app.id, purchaseToken: pending.purchaseToken),
                        stored.awaitsAcknowledgement
                    else {
                        // Acknowledged, voided or lapsed since: nothing to do any more.
                        var done = FactBatch(appId: app.id, environment: "")
                        done.acknowledgementOutcome = (pending.purchaseToken, nil)
                        _ = try store.record(done)
                        return nil
                    }
                    return (stored, try store.playPurchaseAnswer(appId: app.id, purchaseToken: pending.purchaseToken) ?? "{}")
                }
                guard let (stored, answer) = waiting else { continue }
                _ = try await attempt(stored, answer: answer, attempts: pending.attempts, now: now)
            }
            let late = try await pool.perform { [store, app] in
                try store.pendingAcknowledgements(appId: app.id, queuedBefore: nowMs - Self.lateAfter)
            }
            instrumentation.record(.unacknowledgedPurchases(app: app.id, count: late))
        } catch {
            instrumentation.backgroundFailed(app: app.id, task: "google_acknowledgements", error)
        }
    }

    /// Asks Google to acknowledge, then stores what came of it: the purchase acknowledged (which
    /// ends its wait), or the next attempt's instant.
    func attempt(_ purchase: PlayPurchase, answer: String, attempts: Int, now: Date) async throws -> PlayPurchase {
        var outcome = FactBatch(appId: app.id, environment: purchase.environment)
        outcome.requestedAt = Milliseconds.since1970(now)
        outcome.source = "googlePlay"
        var result = purchase
        do {
            switch purchase.kind {
            case .subscription:
                // A resubscription bought outside the app names no customer: Google takes this
                // one's so the purchase is the customer's there too.
                try await api.acknowledgeSubscription(
                    subscriptionId: purchase.productId, purchaseToken: purchase.purchaseToken,
                    obfuscatedAccountId: purchase.details.expiredPurchaseToken != nil ? purchase.appAccountToken : nil)
            case .product: try await api.acknowledgeProduct(productId: purchase.productId, purchaseToken: purchase.purchaseToken)
            }
            result.acknowledged = true
            outcome.playPurchases = [(result, answer)]
            outcome.acknowledgementOutcome = (purchase.purchaseToken, nil)
        } catch {
            instrumentation.backgroundFailed(app: app.id, task: "google_acknowledgements", error)
            let delay = DueWorkDrainer.backoff(attempts: attempts, base: retrySeconds)
            outcome.acknowledgementOutcome = (purchase.purchaseToken, outcome.requestedAt + Int64(delay * 1000))
        }
        let settled = outcome
        _ = try await pool.perform { [store] in try store.record(settled) }
        return result
    }
}
