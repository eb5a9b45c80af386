import AppStore
import JSON

/// Encodes a customer's status as the API's subscriber answer (what `GET /v1/subscribers/…`
/// answers and every event carries).
public enum SubscriberView {
    public static func render(_ status: SubscriberStatus, appAccountToken: String?, environment: AppStoreEnvironment) -> JSONObject {
        var subscriptions = JSONObject()
        for state in status.subscriptions { subscriptions[state.productId] = .object(json(state)) }
        var nonSubscriptions: [JSONValue] = status.nonSubscriptions.map { .object(json($0)) }
        addPlay(status, to: &subscriptions, &nonSubscriptions)
        var entitlements = JSONObject()
        for name in status.entitlements.keys.sorted() { entitlements[name] = .object(json(status.entitlements[name]!)) }
        var subscriber = JSONObject()
        if let appAccountToken { subscriber["appAccountToken"] = .string(appAccountToken) }
        subscriber["environment"] = .string(environment.rawValue)
        subscriber["entitlements"] = .object(entitlements)
        subscriber["subscriptions"] = .object(subscriptions)
        subscriber["nonSubscriptions"] = .array(nonSubscriptions)
        return subscriber
    }

    /// The answer over several environments: each entry says its `environment` and `isSandbox`;
    /// `environments` lists where the customer has facts, `environment` stays when there is one.
    /// A product subscribed in two environments is listed once: the active one, else Production's.
    public static func render(_ status: SubscriberStatus, appAccountToken: String?, environments: [AppStoreEnvironment]) -> JSONObject {
        var chosen: [String: SubscriptionState] = [:]
        var order: [String] = []
        for state in status.subscriptions {
            guard let existing = chosen[state.productId] else {
                chosen[state.productId] = state
                order.append(state.productId)
                continue
            }
            if state.isActive && !existing.isActive { chosen[state.productId] = state }
        }
        var subscriptions = JSONObject()
        for productId in order {
            var entry = json(chosen[productId]!)
            entry["isSandbox"] = .bool(isSandbox(chosen[productId]!.environment))
            subscriptions[productId] = .object(entry)
        }
        var nonSubscriptions: [JSONValue] = status.nonSubscriptions.map { transaction in
            var item = json(transaction)
            item["environment"] = .string(transaction.environment)
            item["isSandbox"] = .bool(isSandbox(transaction.environment))
            return .object(item)
        }
        addPlay(status, to: &subscriptions, &nonSubscriptions, marksSandbox: true)
        var entitlements = JSONObject()
        for name in status.entitlements.keys.sorted() {
            let grant = status.entitlements[name]!
            var entry = json(grant)
            entry["environment"] = .string(grant.environment)
            entry["isSandbox"] = .bool(isSandbox(grant.environment))
            entitlements[name] = .object(entry)
        }
        var subscriber = JSONObject()
        if let appAccountToken { subscriber["appAccountToken"] = .string(appAccountToken) }
        if environments.count == 1 { subscriber["environment"] = .string(environments[0].rawValue) }
        subscriber["environments"] = .array(environments.map { .string($0.rawValue) })
        subscriber["entitlements"] = .object(entitlements)
        subscriber["subscriptions"] = .object(subscriptions)
        subscriber["nonSubscriptions"] = .array(nonSubscriptions)
        return subscriber
    }

    /// Google Play purchases beside the App Store's: subscriptions under `googlePlay:<productId>`
    /// (`:<basePlanId>`), one-time products among `nonSubscriptions`; each says `"store":
    /// "play_store"`. A purchase another one replaced is left out (its successor carries on).
    public static func addPlay(
        _ status: SubscriberStatus, to subscriptions: inout JSONObject, _ nonSubscriptions: inout [JSONValue], marksSandbox: Bool = false
    ) {
        for state in status.playPurchases where !state.isSuperseded {
            var item = json(state)
            if marksSandbox { item["isSandbox"] = .bool(isSandbox(state.purchase.environment)) }
            if state.purchase.kind == .product {
                nonSubscriptions.append(.object(item))
            } else {
                subscriptions["googlePlay:" + state.purchase.productId + (state.purchase.basePlanId.map { ":" + $0 } ?? "")] = .object(item)
            }
        }
    }

    public static func json(_ state: PlayPurchaseState) -> JSONObject {
        let purchase = state.purchase
        var object: JSONObject = [
            "store": "play_store", "state": .string(state.state), "isActive": .bool(state.isActive),
            "googleProductId": .string(purchase.productId), "purchaseToken": .string(purchase.purchaseToken),
        ]
        if let catalog = state.catalogProductId { object["productId"] = .string(catalog) }
        if let plan = purchase.basePlanId { object["basePlanId"] = .string(plan) }
        if let offer = purchase.offerId { object["offerId"] = .string(offer) }
        if let order = purchase.orderId { object["orderId"] = .string(order) }
        Timestamps.set(&object, "purchaseDate", purchase.startTime)
        Timestamps.set(&object, "expiresDate", purchase.expiryTime)
        if purchase.kind == .subscription { object["willRenew"] = .bool(state.willRenew) }
        Timestamps.set(&object, "revocationDate", purchase.voidedAt)
        if let linked = purchase.linkedPurchaseToken { object["linkedPurchaseToken"] = .string(linked) }
        object["acknowledged"] = .bool(purchase.acknowledged)
        object["environment"] = .string(purchase.environment)
        return object
    }

    /// Anything but Production is a test purchase.
    private static func isSandbox(_ environment: String) -> Bool { environment != AppStoreEnvironment.production.rawValue }

    public static func json(_ transaction: TransactionRecord) -> JSONObject {
        var item: JSONObject = [
            "productId": .string(transaction.productId), "transactionId": .string(transaction.transactionId),
            "type": .string(transaction.type), "store": "app_store",
        ]
        Timestamps.set(&item, "purchaseDate", transaction.purchaseDate)
        Timestamps.set(&item, "revocationDate", transaction.revocationDate)
        return item
    }

    public static func json(_ state: SubscriptionState) -> JSONObject {
        var object: JSONObject = [
            "state": .string(state.state.rawValue), "isActive": .bool(state.isActive),
            "originalTransactionId": .string(state.originalTransactionId),
            "transactionId": .string(state.transactionId), "store": "app_store",
        ]
        Timestamps.set(&object, "purchaseDate", state.purchaseDate)
        Timestamps.set(&object, "originalPurchaseDate", state.originalPurchaseDate)
        Timestamps.set(&object, "expiresDate", state.expiresDate)
        Timestamps.set(&object, "gracePeriodExpiresDate", state.gracePeriodExpiresDate)
        object["willRenew"] = .bool(state.willRenew)
        if let next = state.autoRenewProductId { object["autoRenewProductId"] = .string(next) }
        object["periodType"] = .string(state.periodType)
        if let offerType = state.offerType { object["offerType"] = .string(offerTypeName(offerType)) }
        if let offer = state.offerIdentifier { object["offerIdentifier"] = .string(offer) }
        Timestamps.set(&object, "billingIssueDetectedAt", state.billingIssueDetectedAt)
        Timestamps.set(&object, "unsubscribeDetectedAt", state.unsubscribeDetectedAt)
        Timestamps.set(&object, "revocationDate", state.revocationDate)
        if let reason = state.revocationReason { object["revocationReason"] = .int(reason) }
        object["isUpgraded"] = .bool(state.isUpgraded)
        if let ownership = state.ownershipType { object["ownershipType"] = .string(ownership) }
        object["environment"] = .string(state.environment)
        if !state.eligibleWinBackOfferIds.isEmpty {
            object["eligibleWinBackOfferIds"] = .array(state.eligibleWinBackOfferIds.map(JSONValue.string))
        }
        return object
    }

    public static func json(_ entitlement: ProductGrant) -> JSONObject {
        var object: JSONObject = ["isActive": .bool(entitlement.isActive), "state": .string(entitlement.state)]
        if !entitlement.productId.isEmpty { object["productId"] = .string(entitlement.productId) }
        if let original = entitlement.originalTransactionId { object["originalTransactionId"] = .string(original) }
        Timestamps.set(&object, "expiresDate", entitlement.expiresDate)
        Timestamps.set(&object, "gracePeriodExpiresDate", entitlement.gracePeriodExpiresDate)
        object["willRenew"] = .bool(entitlement.willRenew)
        object["periodType"] = .string(entitlement.periodType)
        if let ownership = entitlement.ownershipType { object["ownershipType"] = .string(ownership) }
        object["store"] = .string(entitlement.store)
        if let grant = entitlement.promotional { object["grantId"] = .string(grant.id) }
        if let token = entitlement.purchaseToken { object["purchaseToken"] = .string(token) }
        return object
    }

    /// A promotional grant as the grant endpoints and the history answer it.
    public static func json(_ grant: PromotionalGrant, now: Int64) -> JSONObject {
        var object: JSONObject = [
            "id": .string(grant.id), "entitlement": .string(grant.entitlement), "appAccountToken": .string(grant.appAccountToken),
            "environment": .string(grant.environment), "store": "promotional",
            "state": .string(grant.state(at: now) ?? "PENDING"), "grantedBy": .string(grant.grantedBy),
        ]
        Timestamps.set(&object, "startsAt", grant.startsAt)
        Timestamps.set(&object, "expiresDate", grant.expiresDate)
        if let reason = grant.reason { object["reason"] = .string(reason) }
        Timestamps.set(&object, "revokedAt", grant.revokedAt)
        if let by = grant.revokedBy { object["revokedBy"] = .string(by) }
        return object
    }

    public static func offerTypeName(_ type: Int64) -> String {
        switch type {
        case 1: "INTRODUCTORY"
        case 2: "PROMOTIONAL"
        case 3: "OFFER_CODE"
        case 4: "WIN_BACK"
        default: String(type)
        }
    }
}
