import JSON

/// The JSON of one event (API conventions: camelCase, instants as ISO text plus `…Ms`), written
/// straight into bytes: it is made inside the write transaction, once per event.
package enum EventBody {
    /// `subscriber`: the subscriber view, already serialized (several events of one change share it).
    package static func render(
        _ event: CustomerEvent, id: String, sequence: Int64, appId: String, createdAt: Int64, appAccountToken: String?,
        entitlements: [String], source batch: FactBatch, subscriber: [UInt8]?
    ) -> [UInt8] {
        var body = JSONObjectWriter(capacity: 1024 + (subscriber?.count ?? 0))
        body.set("id", id)
        body.set("sequence", sequence)
        body.set("type", event.kind.rawValue)
        body.set("appId", appId)
        body.set("environment", event.environment)
        Timestamps.set(&body, "occurredAt", event.occurredAt)
        Timestamps.set(&body, "createdAt", createdAt)
        body.set("source", batch.source)
        if let notification = batch.notification {
            body.set("notificationUUID", notification.notificationUUID)
            body.set("notificationType", notification.notificationType)
            body.set("notificationSubtype", ifPresent: notification.subtype)
        }
        body.set("appAccountToken", ifPresent: appAccountToken)
        body.set("originalTransactionId", ifPresent: event.originalTransactionId)
        if let transaction = event.transaction {
            body.set("transactionId", transaction.transactionId)
            body.set("productId", transaction.productId)
            body.set("periodType", SubscriptionEngine.periodType(transaction))
            Timestamps.set(&body, "purchaseDate", transaction.purchaseDate)
            Timestamps.set(&body, "expiresDate", transaction.expiresDate)
            if let price = transaction.price {
                // Apple gives milliunits; the event gives the amount (1990 → 1.99).
                body.set("price", Double(price) / 1000)
                body.set("priceMilliunits", price)
            }
            body.set("currency", ifPresent: transaction.currency)
            body.set("offerIdentifier", ifPresent: transaction.offerIdentifier)
            body.set("billingPlanType", ifPresent: transaction.billingPlanType)
            if let commitment = transaction.commitment { body.object("commitment") { commitment.write(into: &$0, isoDates: true) } }
        }
        if event.transaction != nil || event.grant != nil || event.play != nil { body.set("entitlements", strings: entitlements) }
        body.set("isTrialConversion", ifPresent: event.isTrialConversion)
        body.set("cancelReason", ifPresent: event.cancelReason)
        body.set("scope", ifPresent: event.scope)
        Timestamps.set(&body, "gracePeriodExpiresDate", event.gracePeriodExpiresDate)
        body.set("previousProductId", ifPresent: event.previousProductId)
        body.set("newProductId", ifPresent: event.newProductId)
        body.set("takesEffect", ifPresent: event.takesEffect)
        body.set("expirationReason", ifPresent: event.expirationReason)
        body.set("refundedTransactionId", ifPresent: event.refundedTransactionId)
        body.set("revocationReason", ifPresent: event.revocationReason)
        body.set("revocationType", ifPresent: event.revocationType)
        body.set("revocationPercentage", ifPresent: event.revocationPercentage)
        if let refunded = event.refundedMilliunits {
            body.set("refundedAmount", Double(refunded) / 1000)
            body.set("refundedMilliunits", refunded)
        }
        body.set("endedAccess", ifPresent: event.endedAccess)
        Timestamps.set(&body, "previousExpiresDate", event.previousExpiresDate)
        body.set("priceIncreaseKind", ifPresent: event.priceIncreaseKind)
        Timestamps.set(&body, "consentDeadline", event.consentDeadline)
        if let price = event.newPrice { body.set("newPrice", json: .object(price)) }
        body.set("refundedQuantity", ifPresent: event.refundedQuantity)
        body.set("remainingQuantity", ifPresent: event.remainingQuantity)
        if let request = event.refundRequest { body.object("refundRequest") { request.write(into: &$0) } }
        if let retention = event.retention { body.set("retention", json: .object(retention.json)) }
        if let enrollment = event.enrollment {
            body.object("experiment") { item in
                item.set("id", enrollment.experiment)
                item.set("variant", enrollment.variant)
                item.set("placement", enrollment.placement)
                item.set("offering", enrollment.offering)
                Timestamps.set(&item, "enrolledAt", enrollment.enrolledAt)
            }
        }
        if let consent = event.consent {
            body.set("appTransactionId", ifPresent: consent.appTransactionId)
            body.set("originalTransactionIds", strings: consent.originalTransactionIds)
        }
        if let grant = event.grant { body.object("grant") { SubscriberView.write(grant, now: event.occurredAt, into: &$0) } }
        if let play = event.play {
            body.set("store", "play_store")
            body.set("purchaseToken", play.purchaseToken)
            body.set("googleProductId", play.productId)
            body.set("basePlanId", ifPresent: play.basePlanId)
            body.set("offerId", ifPresent: play.offerId)
            body.set("orderId", ifPresent: play.orderId)
            if event.transaction == nil {
                Timestamps.set(&body, "purchaseDate", play.startTime)
                Timestamps.set(&body, "expiresDate", play.expiryTime)
            }
        } else if event.transaction != nil {
            body.set("store", "app_store")
        }
        if let subscriber { body.set("subscriber", serialized: subscriber) }
        return body.finish()
    }
}
