package import AppStore
import Crypto
import Entitlements
package import Foundation
import Instants
package import JSON

/// `POST /v1/retention/apple`: Apple's realtime Retention Messaging request, asked while a
/// customer opens the cancellation page. Verified like every signed payload and answered by the
/// app's retention rules from the customer's stored facts (no call to Apple: a promotional offer
/// is signed here). The answer is recorded with its event while it is sent, not before: the page
/// waits for it, and Apple retries a request only seconds later, when the record (keyed by the
/// `requestIdentifier`, so the retry gets the same answer) is long committed.
package struct RetentionService: Sendable {
    let app: AppConfiguration
    let verification: VerificationService
    let store: any FactStore
    let offers: OfferService
    let pool: BlockingPool
    let eventWriter: AppEventWriter
    let instrumentation: any Instrumentation

    package func answer(_ parsed: SignedPayload, now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        pool.run({ try answerNow(parsed, now: now) }, completion: completion)
    }

    func answerNow(_ parsed: SignedPayload, now: Date) throws -> JSONObject {
        guard let policy = app.retention else {
            throw ServiceError(
                status: 404, code: "RETENTION_NOT_CONFIGURED",
                message: "this app answers no retention requests (no \"retention\" in its configuration)")
        }
        let verified = verification.verifiedRealtimeRequest(parsed)
        guard case .valid(let (request, environment)) = verified else {
            instrumentation.retentionRequest(app: app.id, result: "refused")
            throw verified.failure!
        }
        let requestId = request.string("requestIdentifier")?.lowercased() ?? ""
        let original = request.string("originalTransactionId") ?? ""
        if let stored = try store.retentionRecord(appId: app.id, requestIdentifier: requestId) {
            instrumentation.retentionRequest(app: app.id, result: "repeated")
            return stored.response
        }
        let nowMs = Milliseconds.since1970(now)
        let facts = try store.facts(appId: app.id, environment: environment.rawValue, originalTransactionId: original)
        let state = facts.flatMap {
            SubscriptionEngine.evaluate(
                transactions: $0.transactions, renewal: $0.renewal, signals: $0.signals, now: nowMs, environment: environment.rawValue,
                billingRetryGrantsAccess: app.billingRetryGrantsAccess)
        }
        let lastOffer = try store.retentionRecords(appId: app.id, environment: environment.rawValue, originalTransactionId: original)
            .last { if case .promotionalOffer = $0.answer { true } else { false } }?.answeredAt
        let retention = RetentionCase(
            subscription: state, transactions: facts?.transactions ?? [], productId: request.string("productId") ?? "",
            locale: request.string("userLocale") ?? "", now: nowMs, lastOfferAt: lastOffer)
        var signed: [String: JSONObject] = [:]
        let decision = policy.decide(retention) { offerId in
            // Signed while deciding: an offer the catalog rule refuses this customer is skipped.
            guard let answer = sign(offerId, subscription: state, original: original, token: facts?.appAccountToken, now: now) else {
                return false
            }
            signed[offerId] = answer
            return true
        }
        var record = RetentionRecord(
            requestIdentifier: requestId, environment: environment.rawValue, originalTransactionId: original,
            appAccountToken: facts?.appAccountToken, productId: retention.productId, locale: retention.locale, answeredAt: nowMs,
            answer: decision.answer, offerIdentifier: nil, rule: decision.rule, response: [:])
        record.response = response(decision.answer, signed: signed)
        if case .promotionalOffer(_, let offerId) = decision.answer { record.offerIdentifier = app.offers[offerId]?.offerIdentifier }
        var batch = FactBatch(appId: app.id, environment: environment.rawValue)
        batch.retention = record
        batch.source = "retention"
        batch.requestedAt = nowMs
        let (instrumentation, appId) = (instrumentation, app.id)
        store.record(batch, outbox: eventWriter) { result in
            // Not lost in silence: a record that could not be written is logged and counted.
            if case .failure(let error) = result { instrumentation.backgroundFailed(app: appId, task: "retention_records", error) }
        }
        instrumentation.retentionRequest(app: app.id, result: "answered")
        instrumentation.retentionAnswered(app: app.id, kind: decision.answer.kind, rule: decision.rule)
        return record.response
    }

    /// The catalog offer signed for this customer, when its eligibility rule admits them.
    private func sign(_ offerId: String, subscription: SubscriptionState?, original: String, token: String?, now: Date) -> JSONObject? {
        guard let offer = app.offers[offerId] else { return nil }
        let request = PromotionalOfferRequest(
            productId: offer.productId, offerId: offerId, appAccountToken: token, transactionId: original, trustedCaller: true)
        // Refused (the customer may not have it) or not signable: the next rule answers instead,
        // never an offer outside the rules, and at once; a signing failure is logged and counted.
        var signed: JSONObject
        do {
            signed = try offers.signPromotionalOffer(request, subscriptions: subscription.map { [$0] } ?? [], timestamp: now)
        } catch {
            if error.code != "OFFER_UNAVAILABLE" { instrumentation.backgroundFailed(app: app.id, task: "retention_offers", error) }
            return nil
        }
        if let token { signed["appAccountToken"] = .string(token) }
        return signed
    }

    /// Apple's `RealtimeResponseBody`: exactly one of `message`, `alternateProduct`, `promotionalOffer`
    /// (the V2 signature, or the V1 object when the key has no issuer ID).
    private func response(_ answer: RetentionAnswer, signed: [String: JSONObject]) -> JSONObject {
        switch answer {
        case .message(let id): return ["message": .object(["messageIdentifier": .string(id)])]
        case .alternateProduct(let id, let product, let plan):
            var alternate: JSONObject = ["messageIdentifier": .string(id), "productId": .string(product)]
            if let plan { alternate["billingPlanType"] = .string(plan) }
            return ["alternateProduct": .object(alternate)]
        case .promotionalOffer(let id, let offerId):
            let signature = signed[offerId] ?? [:]
            var offer: JSONObject = ["messageIdentifier": .string(id)]
            if let jws = signature["jws"] {
                offer["promotionalOfferSignatureV2"] = jws
            } else {
                var v1: JSONObject = [
                    "encodedSignature": signature["signature"] ?? .null, "productId": signature["productId"] ?? .null,
                    "nonce": signature["nonce"] ?? .null, "timestamp": signature["timestamp"] ?? .null,
                    "keyId": signature["keyIdentifier"] ?? .null, "offerIdentifier": signature["offerIdentifier"] ?? .null,
                ]
                if let token = signature["appAccountToken"] { v1["appAccountToken"] = token }
                offer["promotionalOfferSignatureV1"] = .object(v1)
            }
            return ["promotionalOffer": .object(offer)]
        }
    }
}
