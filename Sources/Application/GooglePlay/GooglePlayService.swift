import AppStore
import Crypto
package import Entitlements
package import Foundation
package import GooglePlay
package import HTTPClient
import Instants
package import JSON

/// An app's Google Play side: purchases posted by the Android app, real-time developer
/// notifications pushed by Pub/Sub, and the offer a purchase must use. Every purchase is read
/// from Google (a notification is only a signal), stored as a fact, acknowledged when it needs to
/// be, and answered only once stored. Google's calls are awaited (the caller's cancellation aborts
/// them); the database's work runs on the database pool.
package struct GooglePlayService: Sendable {
    let app: AppConfiguration
    let settings: GooglePlaySettings
    let api: any GooglePlayAPI
    let verifier: PubSubPushVerifier
    let store: any FactStore
    let subscribers: SubscriberQueries
    /// The database's pool.
    let pool: BlockingPool
    let instrumentation: any Instrumentation
    let eventWriter: AppEventWriter
    /// Answers the refund reviews Google's notifications bring.
    let refundReviews: RefundReviews
    let acknowledger: GoogleAcknowledger

    /// The app's connection to Google: the Developer API port, and the HTTP client the push
    /// check fetches Google's keys (JWKS) with.
    package struct Connection: Sendable {
        let http: HTTPClient
        let api: any GooglePlayAPI

        package init(http: HTTPClient, api: any GooglePlayAPI) {
            self.http = http
            self.api = api
        }

        /// Google's API over HTTPS with the app's service account: one HTTP client for the API,
        /// its tokens and Google's keys, its transfers run by `runTransfer`.
        package static func live(_ settings: GooglePlaySettings, runTransfer: @escaping TransferRunner) -> Connection {
            var configuration = HTTPClient.Configuration()
            configuration.caFile = settings.caFile
            configuration.runTransfer = runTransfer
            let http = HTTPClient(configuration: configuration)
            let tokens = GoogleAccessTokens(key: settings.serviceAccount, tokenURL: settings.tokenURL, http: http)
            return Connection(
                http: http,
                api: GooglePlayDeveloperAPI(packageName: settings.packageName, baseURL: settings.apiURL, tokens: tokens, http: http))
        }

        /// The same against the API and token endpoint `urls` names when asked: a test store's.
        package static func calling(
            _ settings: GooglePlaySettings, at urls: @escaping @Sendable () -> (api: String, token: String),
            runTransfer: @escaping TransferRunner
        ) -> Connection {
            var configuration = HTTPClient.Configuration()
            configuration.runTransfer = runTransfer
            let http = HTTPClient(configuration: configuration)
            let tokens = GoogleAccessTokens(key: settings.serviceAccount, locatedBy: { urls().token }, http: http)
            return Connection(
                http: http,
                api: GooglePlayDeveloperAPI(packageName: settings.packageName, locatedBy: { urls().api }, tokens: tokens, http: http))
        }
    }

    init(
        _ context: AppContext, settings: GooglePlaySettings, connection: Connection, subscribers: SubscriberQueries,
        eventWriter: AppEventWriter, refundReviews: RefundReviews
    ) {
        let (app, store, instrumentation) = (context.app, context.store, context.instrumentation)
        let http = connection.http
        api = connection.api
        verifier = PubSubPushVerifier(
            jwks: GoogleJWKS(source: settings.jwks, http: http), audience: settings.pushAudience,
            serviceAccountEmail: settings.pushServiceAccountEmail)
        self.app = app
        self.settings = settings
        self.store = store
        self.subscribers = subscribers
        pool = context.pool
        self.instrumentation = instrumentation
        self.eventWriter = eventWriter
        self.refundReviews = refundReviews
        acknowledger = GoogleAcknowledger(
            app: app, settings: settings, store: store, pool: context.pool, api: api, instrumentation: instrumentation,
            clock: context.clock)
    }

    // MARK: - POST /v1/purchases/google

    /// Reads the purchase from Google, links it to the customer (`obfuscatedExternalAccountId`
    /// when it is a UUID, else `appAccountToken`), stores it, acknowledges it, answers it with the
    /// subscriber.
    package func post(productId: String, purchaseToken: String, appAccountToken: String?, now: Date) async throws -> JSONObject {
        let requested = try AppAccountToken.validated(appAccountToken)
        guard let kind = kind(of: productId) else {
            throw ServiceError(
                status: 422, code: "UNKNOWN_PRODUCT", message: "no product of the catalog is \"\(productId)\" on Google Play")
        }
        let (purchase, json) = try await read(kind, productId: productId, purchaseToken: purchaseToken, customer: requested, now: now)
        guard let customer = purchase.appAccountToken else {
            throw ServiceError.badRequest(
                "the purchase names no customer: set obfuscatedAccountId to the appAccountToken in the app, or send appAccountToken")
        }
        if let requested, customer != requested {
            throw ServiceError(
                status: 409, code: "CONFLICT", message: "the purchase belongs to another appAccountToken (its obfuscatedExternalAccountId)")
        }
        // The first link stands: another customer cannot claim a purchase by posting its token.
        let linked = try await pool.perform { [store, app] in try store.playPurchase(appId: app.id, purchaseToken: purchaseToken) }
        if let linked = linked?.appAccountToken, linked != customer {
            throw ServiceError(
                status: 409, code: "CONFLICT", message: "this purchase is linked to another appAccountToken; nothing changed")
        }
        let stored = try await storeAndAcknowledge(purchase, json: json, source: "clientPost", message: nil, now: now)
        let state = PlayEvaluation.evaluate(
            [stored], now: Milliseconds.since1970(now), products: app.products, billingRetryGrantsAccess: app.billingRetryGrantsAccess
        ).states[0]
        var answer: JSONObject = ["purchase": .object(SubscriberView.json(state))]
        let subscriber = try await pool.perform { [subscribers] in
            try subscribers.subscriber(appAccountToken: customer, environment: nil, at: now)
        }
        if let subscriber { answer["subscriber"] = .object(subscriber) }
        return answer
    }

    // MARK: - Real-time developer notifications

    /// What a push did.
    package enum PushOutcome: String, Sendable {
        case applied, duplicate, test
        /// Nothing to store: Google does not know the purchase, or the notification is of a kind
        /// Entitle does not read (or a voided one-time product it never stored).
        case ignored
    }

    /// Applies one Pub/Sub push already authenticated by `verifier`. Every notification is stored
    /// and listed under its type, whatever its kind; the purchase it names is re-read from Google
    /// (a notification is only a signal) and stored with it.
    func push(_ json: JSONObject, messageId: String, receivedAt: Date) async throws -> PushOutcome {
        let notification = DeveloperNotification(json)
        instrumentation.record(.notificationReceived(app: app.id, type: "GOOGLE_" + notification.typeName))
        // A redelivery of a message already applied: answered without asking Google again (the
        // write would find the duplicate too, but only after a read Google counts against quota).
        if try await pool.perform({ [store, app] in try store.hasPubSubMessage(appId: app.id, messageId: messageId) }) {
            return .duplicate
        }
        let now = Milliseconds.since1970(receivedAt)
        var stored = StoredNotification(
            notificationUUID: "pubsub:\(app.id):\(messageId)", appId: app.id, environment: app.defaultEnvironment.rawValue,
            notificationType: notification.typeName, subtype: nil, signedDate: notification.eventTime ?? now, receivedAt: now,
            originalTransactionId: notification.purchaseToken, jws: JSONValue.object(json).serializedString)
        stored.store = "play_store"
        if notification.kind == .pendingRefundReview {
            return try await pool.perform { [stored] in try recordRefundReview(notification, stored, messageId: messageId, now: now) }
        }
        guard let (kind, productId, token) = try await pool.perform({ try target(of: notification) }) else {
            let outcome: PushOutcome = notification.kind == .test ? .test : .ignored
            return try await pool.perform { [stored] in try recordAlone(stored, messageId: messageId, now: now, outcome: outcome) }
        }
        var read: (PlayPurchase, String)
        do {
            read = try await self.read(kind, productId: productId, purchaseToken: token, customer: nil, now: receivedAt)
        } catch GooglePlayAPIError.notFound {
            return try await pool.perform { [stored] in try recordAlone(stored, messageId: messageId, now: now, outcome: .ignored) }
        }
        if notification.revokesSubscription || (notification.kind == .voidedPurchase && !notification.isPartialRefund) {
            read.0.voidedAt = notification.eventTime ?? now
        }
        stored.environment = read.0.environment
        // A read without an account id keeps the stored link: the stores' rule (`replacing`) does.
        do {
            _ = try await storeAndAcknowledge(
                read.0, json: read.1, source: "googlePlay", message: messageId, notification: stored, now: receivedAt)
        } catch Duplicate.message {
            return .duplicate
        }
        if read.0.voidedAt != nil { instrumentation.record(.refundDecided(app: app.id, store: "play_store", outcome: "REFUNDED")) }
        return .applied
    }

    /// The purchase a notification names, and how to read it; nil when there is none to read (a
    /// test, a kind Entitle does not read, a voided one-time product it never stored).
    private func target(of notification: DeveloperNotification) throws -> (PlayPurchase.Kind, productId: String, token: String)? {
        guard let token = notification.purchaseToken else { return nil }
        switch notification.kind {
        case .subscription: return (.subscription, notification.productId ?? "", token)
        case .oneTimeProduct: return notification.productId.map { (.product, $0, token) }
        case .voidedPurchase:
            // A voided one-time product names no product: the stored purchase does.
            let stored = try store.playPurchase(appId: app.id, purchaseToken: token)
            if notification.voidedProductType == 2 { return stored.map { (.product, $0.productId, token) } }
            return (.subscription, stored?.productId ?? "", token)
        case .test, .other, .pendingRefundReview: return nil
        }
    }

    /// A pending refund review: stored with its deadline (Google weighs an answer sent within 24
    /// hours) and the purchase its order names, then answered by the refund reviews.
    private func recordRefundReview(
        _ notification: DeveloperNotification, _ stored: StoredNotification, messageId: String, now: Int64
    ) throws -> PushOutcome {
        let purchase = try notification.orderId.flatMap { try store.playPurchase(appId: app.id, orderId: $0) }
        var stored = stored
        stored.originalTransactionId = purchase?.purchaseToken
        stored.environment = purchase?.environment ?? stored.environment
        let request = RefundRequest(
            id: RefundRequest.playReviewId(
                pendingRefundToken: notification.pendingRefundToken, orderId: notification.orderId, messageId: stored.notificationUUID),
            store: "play_store", environment: stored.environment,
            appAccountToken: Self.customer(notification.obfuscatedAccountId) ?? purchase?.appAccountToken,
            purchaseToken: purchase?.purchaseToken, orderId: notification.orderId, pendingRefundToken: notification.pendingRefundToken,
            reason: notification.refundReason.map(String.init) ?? "UNKNOWN", requestedAt: stored.signedDate,
            deadline: stored.signedDate + RefundRequest.googleWindow)
        var batch = FactBatch(appId: app.id, environment: stored.environment)
        batch.notification = stored
        batch.pubsubMessageId = messageId
        batch.refundRequest = request
        batch.source = "googlePlay"
        batch.requestedAt = now
        guard try store.record(batch, outbox: eventWriter) != .duplicateNotification else { return .duplicate }
        instrumentation.record(.refundRequested(app: app.id, store: request.store, reason: request.reason))
        refundReviews.kick()
        return .applied
    }

    /// Stores a notification with no purchase to store beside it (Pub/Sub would otherwise
    /// redeliver it until it expires).
    private func recordAlone(
        _ notification: StoredNotification, messageId: String, now: Int64, outcome: PushOutcome
    ) throws
        -> PushOutcome
    {
        var batch = FactBatch(appId: app.id, environment: notification.environment)
        batch.notification = notification
        batch.pubsubMessageId = messageId
        batch.source = "googlePlay"
        batch.requestedAt = now
        return try store.record(batch) == .duplicateNotification ? .duplicate : outcome
    }

    enum Duplicate: Error { case message }

    // MARK: - Voided purchases

    /// `purchases.voidedpurchases.list` since `since`: every stored purchase Google voided is
    /// marked so (a refund or chargeback whose notification was missed). Answers how many.
    package func syncVoided(since: Int64, now: Date) async throws -> JSONObject {
        let voidedPurchases = try await api.voidedPurchases(since: since)
        return try await pool.perform { [store, app, eventWriter] in
            var marked = 0
            var unknown = 0
            for voided in voidedPurchases {
                guard var purchase = try store.playPurchase(appId: app.id, purchaseToken: voided.purchaseToken) else {
                    unknown += 1
                    continue
                }
                guard purchase.voidedAt == nil else { continue }
                purchase.voidedAt = voided.voidedTime
                purchase.readAt = max(purchase.readAt, Milliseconds.since1970(now))
                var batch = FactBatch(appId: app.id, environment: purchase.environment)
                batch.playPurchases = [(purchase, #"{"voidedPurchasesList":true}"#)]
                batch.refundOutcome = (nil, purchase.purchaseToken, "REFUNDED", voided.voidedTime)
                batch.source = "sync"
                batch.requestedAt = Milliseconds.since1970(now)
                _ = try store.record(batch, outbox: eventWriter)
                marked += 1
            }
            return ["voided": .int(Int64(marked)), "notStored": .int(Int64(unknown))]
        }
    }

    // MARK: - Offers

    /// `POST /v1/offers/google/select`: which offer the purchase must use.
    package func selectOffer(
        productId: String, basePlanId: String, listed: [PlayOfferSelection.ListedOffer], offerId: String?, appAccountToken: String?,
        now: Date
    ) async throws -> JSONObject {
        try await pool.perform { [store, app] in
            let customer = try AppAccountToken.validated(appAccountToken)
            let purchases = try customer.map { try store.playPurchases(appId: app.id, appAccountToken: $0) } ?? []
            let states = PlayEvaluation.evaluate(
                purchases.filter { $0.productId == productId }, now: Milliseconds.since1970(now), products: app.products,
                billingRetryGrantsAccess: app.billingRetryGrantsAccess
            ).states
            let history = PlayOfferSelection.History(hadSubscription: !states.isEmpty, isActive: states.contains(where: \.isActive))
            let catalog = app.offers.compactMap { id, offer -> PlayOfferSelection.CatalogOffer? in
                guard let play = offer.googlePlay, app.products[offer.productId]?.googlePlay?.productId == productId else { return nil }
                return PlayOfferSelection.CatalogOffer(
                    id: id, basePlanId: play.basePlanId, offerId: play.offerId, rule: offer.eligibility)
            }
            switch PlayOfferSelection.select(
                requested: offerId, basePlanId: basePlanId, listed: listed, catalog: catalog, history: history)
            {
            case .offer(let offer, let catalogId):
                var answer: JSONObject = [
                    "productId": .string(productId), "basePlanId": .string(basePlanId), "offerId": .string(offer),
                ]
                if let catalogId { answer["catalogOfferId"] = .string(catalogId) }
                return answer
            case .basePlan:
                return ["productId": .string(productId), "basePlanId": .string(basePlanId), "offerId": .null]
            case .unavailable(let reason):
                throw ServiceError.offerUnavailable(
                    reason,
                    reason == "NOT_ELIGIBLE"
                        ? "the customer may not have this offer" : "this offer is not in the catalog for this base plan, or not listed")
            }
        }
    }

    // MARK: - Reading and storing

    /// A subscription when the catalog product is one (it has a subscription group), else a
    /// one-time product; nil when the catalog does not map the Play product.
    func kind(of playProductId: String) -> PlayPurchase.Kind? {
        let matching = app.products.values.filter { $0.googlePlay?.productId == playProductId }
        guard !matching.isEmpty else { return nil }
        return matching.contains { $0.subscriptionGroup != nil } ? .subscription : .product
    }

    /// The purchase as Google has it now (the stored purchase a resubscription continues names
    /// its customer when Google does not).
    func read(
        _ kind: PlayPurchase.Kind, productId: String, purchaseToken: String, customer: String?, now: Date
    ) async throws -> (PlayPurchase, String) {
        let readAt = Milliseconds.since1970(now)
        switch kind {
        case .subscription:
            let answer = try await api.subscription(purchaseToken: purchaseToken)
            let item = answer.lineItems.max { ($0.expiryTime ?? 0) < ($1.expiryTime ?? 0) } ?? answer.lineItems[0]
            var details = PlayPurchaseDetails()
            details.offerPhase = item.offerPhase
            details.prorationOfPhase = item.prorationOfPhase
            details.pendingOrderId = answer.pendingOrderId
            details.deferredItemReplacement = answer.lineItems.lazy.compactMap(\.deferredItemReplacement).first
            details.itemReplacement = item.itemReplacement
            details.priceChangeDetails = item.priceChangeDetails
            details.priceStepUpConsentDetails = item.priceStepUpConsentDetails
            details.expiredPurchaseToken = answer.expiredPurchaseToken
            details.recurringPrice = item.recurringPrice?.milliunits
            details.recurringPriceCurrency = item.recurringPrice?.currency
            var owner = Self.customer(answer.obfuscatedExternalAccountId) ?? customer
            if owner == nil, let expired = answer.expiredPurchaseToken {
                owner = try await pool.perform { [store, app] in
                    try store.playPurchase(appId: app.id, purchaseToken: expired)?.appAccountToken
                }
            }
            owner = owner ?? Self.customer(answer.expiredObfuscatedExternalAccountId)
            return (
                PlayPurchase(
                    purchaseToken: purchaseToken, kind: .subscription, productId: item.productId, basePlanId: item.basePlanId,
                    offerId: item.offerId, environment: answer.isTestPurchase ? "Sandbox" : "Production",
                    googleState: answer.subscriptionState, startTime: answer.startTime ?? readAt, expiryTime: item.expiryTime,
                    autoRenewing: item.autoRenewEnabled ?? false, linkedPurchaseToken: answer.linkedPurchaseToken,
                    acknowledged: answer.isAcknowledged, appAccountToken: owner,
                    orderId: item.latestSuccessfulOrderId ?? answer.latestOrderId, voidedAt: nil, readAt: readAt, details: details),
                JSONValue.object(answer.json).serializedString
            )
        case .product:
            let answer = try await api.product(purchaseToken: purchaseToken)
            let item = answer.lineItems.first { $0.productId == productId } ?? answer.lineItems[0]
            var details = PlayPurchaseDetails()
            details.purchaseOptionId = item.purchaseOptionId
            details.quantity = item.quantity
            details.refundableQuantity = item.refundableQuantity
            details.consumptionState = item.consumptionState
            if let orderId = answer.orderId {
                // The price is the order's (productsv2 carries none). Without it the purchase still
                // entitles; only the figures miss it, and the failure is logged and counted.
                do {
                    let total = try await api.order(orderId: orderId).total
                    details.price = total?.milliunits
                    details.priceCurrency = total?.currency
                } catch {
                    instrumentation.backgroundFailed(app: app.id, task: "play_order_price", error)
                }
            }
            return (
                PlayPurchase(
                    purchaseToken: purchaseToken, kind: .product, productId: item.productId, basePlanId: nil, offerId: item.offerId,
                    environment: answer.isTestPurchase ? "Sandbox" : "Production", googleState: answer.purchaseState,
                    startTime: answer.purchaseTime ?? readAt, expiryTime: nil, autoRenewing: false, linkedPurchaseToken: nil,
                    acknowledged: answer.isAcknowledged, appAccountToken: Self.customer(answer.obfuscatedExternalAccountId) ?? customer,
                    orderId: answer.orderId, voidedAt: nil, readAt: readAt, details: details),
                JSONValue.object(answer.json).serializedString
            )
        }
    }

    /// The appAccountToken an `obfuscatedExternalAccountId` is, when the app set it to one.
    static func customer(_ obfuscated: String?) -> String? {
        guard let obfuscated, UUID.isCanonicalText(obfuscated) else { return nil }
        return obfuscated.lowercased()
    }

    /// Stores the purchase (with the message that brought it, and its acknowledgement queued when
    /// Google waits for one), then makes the first acknowledgement attempt: a failed one is retried
    /// by the acknowledger until Google confirms.
    func storeAndAcknowledge(
        _ purchase: PlayPurchase, json: String, source: String, message: String?, notification: StoredNotification? = nil, now: Date
    ) async throws -> PlayPurchase {
        var batch = FactBatch(appId: app.id, environment: purchase.environment)
        batch.playPurchases = [(purchase, json)]
        batch.pubsubMessageId = message
        batch.notification = notification
        if let voided = purchase.voidedAt { batch.refundOutcome = (nil, purchase.purchaseToken, "REFUNDED", voided) }
        batch.source = source
        batch.requestedAt = Milliseconds.since1970(now)
        let written = batch
        let outcome = try await pool.perform { [store, eventWriter] in try store.record(written, outbox: eventWriter) }
        guard outcome != .duplicateNotification else { throw Duplicate.message }
        guard purchase.awaitsAcknowledgement else { return purchase }
        return try await acknowledger.acknowledge(purchase, answer: json, now: now)
    }
}
