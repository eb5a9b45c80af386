import JSON

/// The JSON of one event (API conventions: camelCase, instants as ISO text plus `…Ms`).
public enum EventBody {
    public static func render(
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
