import AppStore
import AppStoreAPI
import Entitlements
import Foundation
import GooglePlay
import Instants
import JSON

/// Answers the stores' refund requests from the app's evidence by its policy. A request is stored
/// with its deadline in the commit of its notification; this queue answers it at once and, when
/// the store cannot take the answer now, again with a doubling delay (from `retrySeconds`) while
/// the deadline holds. A refusal (4xx) is recorded and not retried; a deadline passed is recorded
/// and nothing is sent. Every outcome is stored as the request's new state, with its event.
final class RefundReviews: Sendable {
    private let drainer: DueWorkDrainer

    init(_ context: AppContext, apple: AppStoreClients, google: (any GooglePlayAPI)?, eventWriter: AppEventWriter) {
        let retrySeconds = context.app.refundRetrySeconds
        let answering = RefundAnswering(
            app: context.app, store: context.store, pool: context.pool, apple: apple, google: google, eventWriter: eventWriter,
            instrumentation: context.instrumentation, retrySeconds: retrySeconds)
        drainer = DueWorkDrainer(interval: retrySeconds, clock: context.clock, drain: answering.drain)
    }

    func kick() { drainer.kick() }

    /// Cancels the answer in flight; what is not answered stays due.
    func stop() { drainer.stop() }
}

/// The due requests of one app, answered.
private struct RefundAnswering: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    /// The database's pool: the evidence read and the outcomes written.
    let pool: BlockingPool
    let apple: AppStoreClients
    let google: (any GooglePlayAPI)?
    let eventWriter: AppEventWriter
    let instrumentation: any Instrumentation
    let retrySeconds: Double

    func drain(now: Date) async {
        let nowMs = Milliseconds.since1970(now)
        do {
            let due = try await pool.perform { [store, app] in try store.dueRefundRequests(appId: app.id, now: nowMs, limit: 100) }
            for request in due {
                // Stopping: the rest stays due, as it was.
                if Task.isCancelled { return }
                try await answer(request, now: nowMs)
            }
        } catch {
            instrumentation.backgroundFailed(app: app.id, task: "refund_reviews", error)
        }
    }

    /// What answering a request takes: nothing more (its outcome is recorded), or one call.
    private enum Step {
        case recorded
        case call(RefundRequest, Call)
    }

    private enum Call {
        case google(any GooglePlayAPI, orderId: String, JSONObject)
        case apple(any AppStoreServerAPI, transactionId: String, JSONObject)
        case unanswerable(Unanswerable)
    }

    private func answer(_ request: RefundRequest, now: Int64) async throws {
        guard case .call(var updated, let call) = try await pool.perform({ try decide(request, now: now) }) else { return }
        do {
            switch call {
            case .google(let google, let orderId, let body): try await google.reviewRefund(orderId: orderId, body)
            case .apple(let client, let transactionId, let body): try await client.sendConsumptionInformation(transactionId, body)
            case .unanswerable(let why): throw why
            }
            updated.status = .sent
            updated.sentAt = now
            updated.error = nil
            try await record(updated, result: "sent", now: now)
        } catch let refused where Self.isRefusal(refused) {
            instrumentation.backgroundFailed(app: app.id, task: "refund_reviews", refused)
            updated.status = .failed
            updated.error = "\(refused)"
            try await record(updated, result: "failed", now: now)
        } catch {
            instrumentation.backgroundFailed(app: app.id, task: "refund_reviews", error)
            // Tried again while the deadline holds; the last attempt is made just before it.
            let retryAt = now + Int64(DueWorkDrainer.backoff(attempts: request.attempts, base: retrySeconds) * 1000)
            updated.nextAt = min(retryAt, request.deadline - 1)
            updated.error = "\(error)"
            try await record(updated, result: nil, now: now)
        }
    }

    /// The answer the policy gives from the stored evidence (blocking: on the database pool); a
    /// request past its deadline, or without the customer's consent, is recorded as such here.
    private func decide(_ request: RefundRequest, now: Int64) throws -> Step {
        var updated = request
        updated.attempts += 1
        guard now < request.deadline else {
            updated.status = .late
            updated.error = "the store's deadline passed before an answer was accepted"
            try record(updated, result: "late", now: now)
            return .recorded
        }
        let refund = try refundCase(request, now: now)
        let decision = app.refunds.decide(refund)
        switch request.store {
        case "play_store":
            guard let google, let orderId = request.orderId else { return .call(updated, .unanswerable(.noClient("Google Play"))) }
            let body = RefundAnswer.google(decision, refund, consent: app.refunds.customerConsent)
            (updated.answer, updated.decidedBy) = (body, decision.decidedBy)
            return .call(updated, .google(google, orderId: orderId, body))
        default:
            guard let (body, decidedBy) = RefundAnswer.apple(decision, refund, consent: app.refunds.customerConsent) else {
                updated.status = .noConsent
                updated.decidedBy = decision.decidedBy
                try record(updated, result: "no_consent", now: now)
                return .recorded
            }
            (updated.answer, updated.decidedBy) = (body, decidedBy)
            guard let client = apple[AppStoreEnvironment(rawValue: request.environment)], let transactionId = request.transactionId
            else { return .call(updated, .unanswerable(.noClient("the App Store Server API"))) }
            return .call(updated, .apple(client, transactionId: transactionId, body))
        }
    }

    /// A refusal the store will repeat (a 4xx): recorded, not retried.
    private static func isRefusal(_ error: any Error) -> Bool {
        switch error {
        case let apple as AppStoreAPIError:
            if case .api(let status, _, _, _, _) = apple { return (400..<500).contains(status) && !apple.isRetryable }
            return false
        case let google as GooglePlayAPIError: return !google.isRetryable
        case is Unanswerable: return true
        default: return false
        }
    }

    enum Unanswerable: Error, CustomStringConvertible {
        case noClient(String)
        var description: String {
            switch self {
            case .noClient(let what): "\(what) is not configured for this app: the request cannot be answered"
            }
        }
    }

    private func record(_ request: RefundRequest, result: String?, now: Int64) async throws {
        try await pool.perform { try record(request, result: result, now: now) }
    }

    /// The request's new state, with its event (`REFUND_REVIEW_SENT` once sent).
    private func record(_ request: RefundRequest, result: String?, now: Int64) throws {
        var batch = FactBatch(appId: app.id, environment: request.environment)
        batch.refundRequestUpdate = request
        batch.source = "refundReview"
        batch.requestedAt = now
        _ = try store.record(batch, outbox: eventWriter)
        if let result { instrumentation.record(.refundAnswered(app: app.id, store: request.store, result: result)) }
    }

    /// What the app knows of the request's purchase and customer now.
    private func refundCase(_ request: RefundRequest, now: Int64) throws -> RefundCase {
        var token = request.appAccountToken
        var productType: String?
        var purchaseDate: Int64?
        var catalogId: String?
        if let transactionId = request.transactionId, let original = request.originalTransactionId {
            let facts = try store.facts(appId: app.id, environment: request.environment, originalTransactionId: original)
            token = token ?? facts?.appAccountToken
            if let transaction = facts?.transactions.first(where: { $0.transactionId == transactionId }) {
                productType = RefundCase.productType(ofAppleType: transaction.type)
                purchaseDate = transaction.purchaseDate
                catalogId = transaction.productId
            }
        } else if let purchaseToken = request.purchaseToken,
            let purchase = try store.playPurchase(appId: app.id, purchaseToken: purchaseToken)
        {
            token = token ?? purchase.appAccountToken
            productType =
                purchase.kind == .subscription
                ? "subscription" : purchase.details.consumptionState == "CONSUMPTION_STATE_CONSUMED" ? "consumable" : "nonConsumable"
            purchaseDate = purchase.startTime
            catalogId = app.products.catalogId(playProduct: purchase.productId, basePlanId: purchase.basePlanId)
        }
        var usage: [UsageRecord] = []
        var refunds = 0
        var override: RefundOverride?
        if let token {
            usage = try store.usage(appId: app.id, appAccountToken: token).filter {
                $0.concerns(transactionId: request.transactionId, purchaseToken: request.purchaseToken)
            }
            override = try store.refundOverride(appId: app.id, appAccountToken: token)
            refunds = try refundsInLastYear(of: token, now: now)
        }
        return RefundCase(
            request: request, productType: productType, purchaseDate: purchaseDate, now: now, usage: usage,
            refundsInLast365Days: refunds, override: override,
            sampleContentProvided: catalogId.flatMap { app.products[$0]?.sampleContentProvided } ?? false)
    }

    /// The customer's refunds (either store, every environment the app has) in the year before `now`.
    private func refundsInLastYear(of token: String, now: Int64) throws -> Int {
        let since = now - 365 * 86_400_000
        let facts = try store.subscriber(appId: app.id, environments: app.environments.map(\.rawValue), appAccountToken: token)
        let apple = facts.environments.flatMap(\.facts).flatMap(\.transactions).filter { record in
            record.revocationDate.map { $0 >= since && $0 <= now } ?? false
        }
        let play = facts.playPurchases.filter { purchase in purchase.voidedAt.map { $0 >= since && $0 <= now } ?? false }
        return Set(apple.map(\.transactionId)).count + play.count
    }
}
