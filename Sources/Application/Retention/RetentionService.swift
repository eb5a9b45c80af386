package import AppStore
import Crypto
import Entitlements
package import Foundation
import Instants
package import JSON

/// `POST /v1/retention/apple`: Apple's realtime Retention Messaging request, asked while a
/// customer opens the cancellation page. Verified like every signed payload and answered by the
/// app's retention rules from the customer's stored facts (no call to Apple: a promotional offer
/// is signed here). The answer is sent once its record is committed: the writer decides, under the
/// subscription's lock, whether it may stand (`RetentionRecord.refusal`), so concurrent requests
/// for one subscription get at most one offer per cooldown, and copies of one `requestIdentifier`
/// all get the answer that was written first, on one instance or several.
package struct RetentionService: Sendable {
    let app: AppConfiguration
    let verification: VerificationService
    let store: any FactStore
    let offers: OfferService
    let pool: BlockingPool
    let eventWriter: AppEventWriter
    let instrumentation: any Instrumentation

    init(_ context: AppContext, verification: VerificationService, offers: OfferService, eventWriter: AppEventWriter) {
        app = context.app
        store = context.store
        pool = context.pool
        instrumentation = context.instrumentation
        self.verification = verification
        self.offers = offers
        self.eventWriter = eventWriter
    }

    /// How often a decision is made again when the writer refuses it because another request's
    /// offer was written first (each time the committed offer is seen, so once is enough; the rest
    /// is margin).
    private static let decisions = 3

    package func answer(_ parsed: SignedPayload, now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        answer(parsed, now: now, attempt: 1, completion: completion)
    }

    private func answer(
        _ parsed: SignedPayload, now: Date, attempt: Int, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        pool.run({ try decide(parsed, now: now) }) { result in
            switch result {
            case .failure(let error): completion(.failure(error))
            case .success(.stored(let response)): completion(.success(response))
            case .success(.decided(let record, let batch)):
                store.record(batch, outbox: eventWriter) { written in
                    switch written {
                    case .success(.retentionOfferCooling) where attempt < Self.decisions:
                        answer(parsed, now: now, attempt: attempt + 1, completion: completion)
                    case .success(.retentionAlreadyAnswered):
                        pool.run(
                            {
                                guard let stored = try storedAnswer(requestIdentifier: record.requestIdentifier) else {
                                    throw ServiceError(
                                        status: 503, code: "STORAGE_UNAVAILABLE", message: "the request's stored answer could not be read")
                                }
                                return stored
                            }, completion: completion)
                    case .success(.applied), .success(.transferred):
                        instrumentation.record(.retentionRequest(app: app.id, result: "answered"))
                        instrumentation.record(.retentionAnswered(app: app.id, kind: record.answer.kind, rule: record.rule))
                        completion(.success(record.response))
                    case .success(let outcome):
                        completion(
                            .failure(
                                ServiceError(
                                    status: 503, code: "STORAGE_UNAVAILABLE", message: "the answer could not be recorded (\(outcome))")))
                    case .failure(let error):
                        // Apple shows its default at once; the failure is logged and counted.
                        instrumentation.backgroundFailed(app: app.id, task: "retention_records", error)
                        completion(.failure(error))
                    }
                }
            }
        }
    }

    /// What a request comes to before it is written: the answer stored for it already, or a
    /// decision and the batch that records it.
    enum Decision {
        case stored(JSONObject)
        case decided(RetentionRecord, FactBatch)
    }

    /// The answer stored for a request identifier (Apple asked again, or another copy of the
    /// request was written first), counted as repeated; nil when there is none.
    private func storedAnswer(requestIdentifier: String) throws -> JSONObject? {
        guard let stored = try store.retentionRecord(appId: app.id, requestIdentifier: requestIdentifier) else { return nil }
        instrumentation.record(.retentionRequest(app: app.id, result: "repeated"))
        return stored.response
    }

    func decide(_ parsed: SignedPayload, now: Date) throws -> Decision {
        guard let policy = app.retention else {
            throw ServiceError(
                status: 404, code: "RETENTION_NOT_CONFIGURED",
                message: "this app answers no retention requests (no \"retention\" in its configuration)")
        }
        let verified = verification.verifiedRealtimeRequest(parsed)
        guard case .valid(let (request, environment)) = verified else {
            instrumentation.record(.retentionRequest(app: app.id, result: "refused"))
            throw verified.failure!
        }
        let requestId = request.string("requestIdentifier")?.lowercased() ?? ""
        let original = request.string("originalTransactionId") ?? ""
        if let stored = try storedAnswer(requestIdentifier: requestId) { return .stored(stored) }
        let nowMs = Milliseconds.since1970(now)
        let facts = try store.facts(appId: app.id, environment: environment.rawValue, originalTransactionId: original)
        let state = facts.flatMap {
            SubscriptionEngine.evaluate(
                transactions: $0.transactions, renewal: $0.renewal, signals: $0.signals, now: nowMs, environment: environment.rawValue,
                billingRetryGrantsAccess: app.billingRetryGrantsAccess)
        }
        let lastOffer = try store.retentionRecords(appId: app.id, environment: environment.rawValue, originalTransactionId: original)
            .filter(\.answer.isPromotionalOffer).map(\.answeredAt).max()
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
        batch.retentionOfferCooldown = policy.offerCooldown
        batch.source = "retention"
        batch.requestedAt = nowMs
        return .decided(record, batch)
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
