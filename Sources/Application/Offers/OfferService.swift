package import AppStore
import Crypto
package import Entitlements
package import Foundation
import Instants
package import JSON

/// What a client asks to have signed (the body of `POST /v1/promotional-offers/sign`).
package struct PromotionalOfferRequest: Sendable {
    package var productId: String
    package var offerId: String
    package var appAccountToken: String?
    package var transactionId: String?
    /// Where the purchase will happen (StoreKit's `AppTransaction.environment`), when the app says.
    package var environment: AppStoreEnvironment?
    /// StoreKit's signed transaction: proves a client holds the transaction it names.
    package var signedTransaction: String?
    /// A server or admin key: a bare `transactionId` may name the customer (see `OfferCustomer`).
    package var trustedCaller: Bool

    package init(
        productId: String, offerId: String, appAccountToken: String? = nil, transactionId: String? = nil,
        environment: AppStoreEnvironment? = nil, signedTransaction: String? = nil, trustedCaller: Bool = true
    ) {
        self.productId = productId
        self.offerId = offerId
        self.appAccountToken = appAccountToken
        self.transactionId = transactionId
        self.environment = environment
        self.signedTransaction = signedTransaction
        self.trustedCaller = trustedCaller
    }
}

/// What a client asks about introductory-offer eligibility.
package struct IntroductoryOfferRequest: Sendable {
    package var productId: String
    package var appAccountToken: String?
    package var transactionId: String?
    /// Where the purchase will happen (StoreKit's `AppTransaction.environment`), when the app says.
    package var environment: AppStoreEnvironment?
    /// StoreKit's signed transaction: proves a client holds the transaction it names.
    package var signedTransaction: String?
    /// A server or admin key: a bare `transactionId` may name the customer (see `OfferCustomer`).
    package var trustedCaller: Bool

    package init(
        productId: String, appAccountToken: String? = nil, transactionId: String? = nil, environment: AppStoreEnvironment? = nil,
        signedTransaction: String? = nil, trustedCaller: Bool = true
    ) {
        self.productId = productId
        self.appAccountToken = appAccountToken
        self.transactionId = transactionId
        self.environment = environment
        self.signedTransaction = signedTransaction
        self.trustedCaller = trustedCaller
    }
}

/// Signs offers from the app's catalog: the one place that decides what may be signed.
/// Used by both the HTTP endpoints and `entitle sign-offer`, so both answer the same JSON.
package struct OfferService: Sendable {
    package let app: AppConfiguration
    package let signers: AppSigners
    /// The customer's stored history; nil where there is no store (`entitle sign-offer`).
    let history: SubscriberQueries?
    /// Checks the signed transaction a client sends as proof; nil where there is no store.
    let verification: VerificationService?
    let pool: BlockingPool?
    let instrumentation: any Instrumentation

    /// Without a store: what `entitle sign-offer` signs.
    package init(app: AppConfiguration) {
        self.app = app
        signers = AppSigners(app: app)
        history = nil
        verification = nil
        pool = nil
        instrumentation = NoInstrumentation()
    }

    init(_ context: AppContext, history: SubscriberQueries, verification: VerificationService) {
        app = context.app
        signers = AppSigners(app: app)
        self.history = history
        self.verification = verification
        pool = context.pool
        instrumentation = context.instrumentation
    }

    // MARK: - Use cases

    /// Signs on the caller's thread when the offer's rule needs no history (CPU only, about a
    /// tenth of a millisecond); reads the customer's history on the pool when it does.
    package func signPromotionalOffer(
        _ request: PromotionalOfferRequest, now: Date, nonce: UUID = SecureRandom.uuid(),
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        guard needsHistory(offerId: request.offerId), let history, let verification, let pool else {
            completion(
                Result {
                    let environment = try request.environment.map(app.enabled)
                    return try signCounted(request, status: SubscriberStatus(), environment: environment, now: now, nonce: nonce)
                })
            return
        }
        pool.run(
            {
                let customer = try OfferCustomer.identify(
                    appAccountToken: request.appAccountToken, transactionId: request.transactionId,
                    signedTransaction: request.signedTransaction, trustedCaller: request.trustedCaller,
                    requestedEnvironment: request.environment, history: history, verification: verification)
                let environment = customer.environment
                let status = try history.status(
                    appAccountToken: customer.appAccountToken, transactionId: customer.transactionId, in: environment, now: now)
                var request = request
                request.transactionId = customer.transactionId
                return try signCounted(request, status: status, environment: environment, now: now, nonce: nonce)
            }, completion: completion)
    }

    /// Decided from the customer's stored transactions, read on the pool.
    package func introductoryOfferEligibility(
        _ request: IntroductoryOfferRequest, now: Date,
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        guard let history, let verification, let pool else {
            completion(
                Result {
                    let environment = try request.environment.map(app.enabled) ?? app.defaultEnvironment
                    return try introductoryOfferEligibility(request, transactions: [], environment: environment, timestamp: now)
                })
            return
        }
        pool.run(
            {
                let customer = try OfferCustomer.identify(
                    appAccountToken: request.appAccountToken, transactionId: request.transactionId,
                    signedTransaction: request.signedTransaction, trustedCaller: request.trustedCaller,
                    requestedEnvironment: request.environment, history: history, verification: verification)
                let environment = customer.environment
                let transactions = try history.customerFacts(
                    appAccountToken: customer.appAccountToken, transactionId: customer.transactionId, in: environment
                ).flatMap(\.transactions)
                var request = request
                // Apple's signed decision names any transaction of the customer's: the one the
                // caller named, else (a customer named by appAccountToken) their latest.
                request.transactionId =
                    customer.transactionId
                    ?? transactions.max { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }?
                    .transactionId
                let answer = try introductoryOfferEligibility(
                    request, transactions: transactions, environment: environment, timestamp: now)
                if answer["jws"] != nil { instrumentation.record(.offerSigned(app: app.id, kind: "intro-eligibility-jws")) }
                return answer
            }, completion: completion)
    }

    /// `environment` is said in the answer when it was decided (the rule read history) or asked for.
    private func signCounted(
        _ request: PromotionalOfferRequest, status: SubscriberStatus, environment: AppStoreEnvironment?, now: Date,
        nonce: UUID
    ) throws -> JSONObject {
        var answer = try signPromotionalOffer(request, subscriptions: status.subscriptions, nonce: nonce, timestamp: now)
        if let environment { answer["environment"] = .string(environment.rawValue) }
        instrumentation.record(.offerSigned(app: app.id, kind: "v1"))
        if answer["jws"] != nil { instrumentation.record(.offerSigned(app: app.id, kind: "promotional-jws")) }
        return answer
    }

    // MARK: - The decisions

    /// Signs a catalogued promotional offer: the v1 signature always, the v2 JWS when the key has
    /// an issuer ID. Never falls back to another offer.
    /// `subscriptions` is the customer's stored history (needed when the offer's rule is not `any`).
    package func signPromotionalOffer(
        _ request: PromotionalOfferRequest, subscriptions: [SubscriptionState] = [],
        nonce: UUID = SecureRandom.uuid(),
        timestamp: Date
    ) throws(ServiceError) -> JSONObject {
        _ = try AppAccountToken.validated(request.appAccountToken)
        guard let offer = app.offers[request.offerId] else {
            throw .offerUnavailable("NOT_IN_CATALOG", "offer \"\(request.offerId)\" is not in the offer catalog")
        }
        guard offer.productId == request.productId else {
            throw .offerUnavailable(
                "NOT_IN_CATALOG",
                "offer \"\(request.offerId)\" belongs to another product than \"\(request.productId)\"")
        }
        try checkEligibility(offer, subscriptions: subscriptions)
        let milliseconds = Milliseconds.since1970(timestamp)
        do {
            let signature = try signers.promotionalOffer.signature(
                productIdentifier: offer.productId, subscriptionOfferID: offer.offerIdentifier,
                appAccountToken: request.appAccountToken ?? "", nonce: nonce, timestamp: milliseconds)
            var answer: JSONObject = [
                "productId": .string(offer.productId),
                "offerId": .string(request.offerId),
                "offerIdentifier": .string(offer.offerIdentifier),
                "keyIdentifier": .string(app.signingKey.keyId),
                "nonce": .string(nonce.lowercasedString),
                "timestamp": .int(milliseconds),
                "signature": .string(signature),
            ]
            if let v2 = signers.promotionalOfferV2 {
                answer["jws"] = .string(
                    try v2.createSignature(
                        productId: offer.productId,
                        offerIdentifier: offer.offerIdentifier,
                        transactionId: request.transactionId,
                        nonce: nonce, issuedAt: timestamp))
            }
            return answer
        } catch {
            throw ServiceError(status: 500, code: "SIGNING_FAILED", message: "the offer could not be signed")
        }
    }

    /// The catalog rule against the customer's stored subscriptions in the offer's group.
    private func checkEligibility(_ offer: OfferConfiguration, subscriptions: [SubscriptionState]) throws(ServiceError) {
        let group = app.products[offer.productId]?.subscriptionGroup
        guard OfferEligibility.promotional(rule: offer.eligibility, group: group, subscriptions: subscriptions) else {
            throw .offerUnavailable(
                "NOT_ELIGIBLE",
                "this offer is for \(offer.eligibility.rawValue) subscribers and the customer's stored history does not qualify")
        }
    }

    /// Whether the offer's rule needs the customer's history.
    package func needsHistory(offerId: String) -> Bool { (app.offers[offerId]?.eligibility ?? .any) != .any }

    /// Answers introductory-offer eligibility for the product's subscription group.
    /// Decided per subscription group from `transactions`, the customer's stored transactions.
    package func introductoryOfferEligibility(
        _ request: IntroductoryOfferRequest, transactions: [TransactionRecord], environment: AppStoreEnvironment,
        nonce: UUID = SecureRandom.uuid(),
        timestamp: Date
    ) throws(ServiceError) -> JSONObject {
        _ = try AppAccountToken.validated(request.appAccountToken)
        guard let product = app.products[request.productId] else {
            throw ServiceError(
                status: 422, code: "UNKNOWN_PRODUCT",
                message: "product \"\(request.productId)\" is not configured")
        }
        guard let group = product.subscriptionGroup else {
            throw ServiceError(
                status: 422, code: "NOT_A_SUBSCRIPTION",
                message: "product \"\(request.productId)\" has no subscription group")
        }
        let reason = OfferEligibility.introductory(group: group, transactions: transactions) { app.products[$0]?.subscriptionGroup }
        let eligible = reason == .neverSubscribedToGroup
        var answer: JSONObject = [
            "productId": .string(request.productId),
            "subscriptionGroupIdentifier": .string(group),
            "eligible": .bool(eligible),
            "reason": .string(reason.rawValue),
            "environment": .string(environment.rawValue),
        ]
        if let transactionId = request.transactionId, let creator = signers.introductoryOfferEligibility {
            do {
                answer["jws"] = .string(
                    try creator.createSignature(
                        productId: request.productId,
                        allowIntroductoryOffer: eligible,
                        transactionId: transactionId,
                        nonce: nonce, issuedAt: timestamp))
            } catch {
                throw ServiceError(status: 500, code: "SIGNING_FAILED", message: "the eligibility could not be signed")
            }
        }
        return answer
    }
}
