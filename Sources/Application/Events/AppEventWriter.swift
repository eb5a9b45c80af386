import AppStore
import Entitlements
import Foundation
import Instants
import JSON

/// One app's outbox writer: the domain's rules decide which events a stored change causes; this
/// renders each (README, "Event body") with the subscriber as it is after the change, and names
/// the endpoints that take it. Runs inside the store's write transaction: CPU only, no I/O.
struct AppEventWriter: EventWriting {
    let app: AppConfiguration
    let subscribers: SubscriberQueries
    let instrumentation: any Instrumentation
    /// Wakes the deliverers (nil when the app has no endpoints).
    let deliveries: WebhookDispatcher?

    var environments: [String] { subscribers.searchOrder.map(\.rawValue) }

    func events(for change: FactChange, firstSequence: Int64) -> [OutboxEvent] {
        let derived = CustomerEventDerivation.events(change, billingRetryGrantsAccess: app.billingRetryGrantsAccess)
        guard !derived.isEmpty else { return [] }
        let now = Date()
        let createdAt = Milliseconds.since1970(now)
        var views: [String: JSONObject] = [:]
        return derived.enumerated().map { index, event in
            var subscriber: JSONObject?
            if let original = event.originalTransactionId, let facts = change.subscribers[original] {
                if views[original] == nil { views[original] = subscribers.view(of: facts, at: now) }
                subscriber = views[original]
            } else if event.grant != nil, let facts = change.grantSubscriber {
                subscriber = subscribers.view(of: facts, at: now)
            } else if let play = event.play, let facts = change.playSubscribers[play.purchaseToken] {
                subscriber = subscribers.view(of: facts, at: now)
            }
            let token =
                event.grant?.appAccountToken ?? event.play?.appAccountToken
                ?? event.originalTransactionId.flatMap { change.subscribers[$0]?.appAccountToken }
            let id = event.kind == .test ? change.batch.webhookTestId ?? UUID().uuidString.lowercased() : UUID().uuidString.lowercased()
            let sequence = firstSequence + Int64(index)
            let body = EventBody.render(
                event, id: id, sequence: sequence, appId: app.id, createdAt: createdAt, appAccountToken: token,
                entitlements: entitlements(of: event),
                source: change.batch, subscriber: subscriber)
            return OutboxEvent(
                id: id, appId: app.id, sequence: sequence, type: event.kind.rawValue, environment: event.environment,
                originalTransactionId: event.originalTransactionId, appAccountToken: token, occurredAt: event.occurredAt,
                createdAt: createdAt, body: JSONValue.object(body).serializedString,
                endpoints: app.webhooks.filter { $0.accepts(type: event.kind.rawValue, environment: event.environment) }.map(\.url))
        }
    }

    /// The entitlements the event's product (or grant) confers.
    private func entitlements(of event: CustomerEvent) -> [String] {
        if let grant = event.grant { return [grant.entitlement] }
        if let play = event.play {
            return app.products.catalogId(playProduct: play.productId, basePlanId: play.basePlanId).flatMap {
                app.products[$0]?.entitlements
            }
                ?? []
        }
        return event.transaction.map { app.products[$0.productId]?.entitlements ?? [] } ?? []
    }

    /// Once the transaction holding `events` (or a forward) has committed: count them and wake
    /// the deliverers.
    func committed(_ events: [OutboxEvent]) {
        for event in events { instrumentation.eventWritten(app: app.id, type: event.type) }
        deliveries?.wake()
    }
}

/// The JSON of one event (API conventions: camelCase, instants as ISO text plus `…Ms`).
enum EventBody {
    static func render(
        _ event: CustomerEvent, id: String, sequence: Int64, appId: String, createdAt: Int64, appAccountToken: String?,
        entitlements: [String], source batch: FactBatch, subscriber: JSONObject?
    ) -> JSONObject {
        var body: JSONObject = [
            "id": .string(id), "sequence": .int(sequence), "type": .string(event.kind.rawValue), "appId": .string(appId),
            "environment": .string(event.environment),
        ]
        Timestamps.set(&body, "occurredAt", event.occurredAt)
        Timestamps.set(&body, "createdAt", createdAt)
        body["source"] = .string(batch.source)
        if let uuid = batch.notification?.notificationUUID {
            body["notificationUUID"] = .string(uuid)
            body["notificationType"] = .string(batch.notification!.notificationType)
            if let subtype = batch.notification?.subtype { body["notificationSubtype"] = .string(subtype) }
        }
        if let appAccountToken { body["appAccountToken"] = .string(appAccountToken) }
        if let original = event.originalTransactionId { body["originalTransactionId"] = .string(original) }
        if let transaction = event.transaction {
            body["transactionId"] = .string(transaction.transactionId)
            body["productId"] = .string(transaction.productId)
            body["entitlements"] = .array(entitlements.map(JSONValue.string))
            body["periodType"] = .string(SubscriptionEngine.periodType(transaction))
            Timestamps.set(&body, "purchaseDate", transaction.purchaseDate)
            Timestamps.set(&body, "expiresDate", transaction.expiresDate)
            if let price = transaction.price {
                // Apple gives milliunits; the event gives the amount (1990 → 1.99).
                body["price"] = .double(Double(price) / 1000)
                body["priceMilliunits"] = .int(price)
            }
            if let currency = transaction.currency { body["currency"] = .string(currency) }
            if let offer = transaction.offerIdentifier { body["offerIdentifier"] = .string(offer) }
        }
        if let value = event.isTrialConversion { body["isTrialConversion"] = .bool(value) }
        if let value = event.cancelReason { body["cancelReason"] = .string(value) }
        Timestamps.set(&body, "gracePeriodExpiresDate", event.gracePeriodExpiresDate)
        if let value = event.previousProductId { body["previousProductId"] = .string(value) }
        if let value = event.newProductId { body["newProductId"] = .string(value) }
        if let value = event.takesEffect { body["takesEffect"] = .string(value) }
        if let value = event.expirationReason { body["expirationReason"] = .string(value) }
        if let value = event.refundedTransactionId { body["refundedTransactionId"] = .string(value) }
        if let value = event.revocationReason { body["revocationReason"] = .int(value) }
        if let value = event.revocationType { body["revocationType"] = .string(value) }
        if let value = event.endedAccess { body["endedAccess"] = .bool(value) }
        Timestamps.set(&body, "previousExpiresDate", event.previousExpiresDate)
        if let grant = event.grant {
            body["entitlements"] = .array(entitlements.map(JSONValue.string))
            body["grant"] = .object(SubscriberView.json(grant, now: event.occurredAt))
        }
        if let play = event.play {
            body["store"] = "play_store"
            body["purchaseToken"] = .string(play.purchaseToken)
            body["googleProductId"] = .string(play.productId)
            if let plan = play.basePlanId { body["basePlanId"] = .string(plan) }
            if let offer = play.offerId { body["offerId"] = .string(offer) }
            if let order = play.orderId { body["orderId"] = .string(order) }
            body["entitlements"] = .array(entitlements.map(JSONValue.string))
            Timestamps.set(&body, "purchaseDate", play.startTime)
            Timestamps.set(&body, "expiresDate", play.expiryTime)
        } else if event.transaction != nil {
            body["store"] = "app_store"
        }
        if let subscriber { body["subscriber"] = .object(subscriber) }
        return body
    }
}
