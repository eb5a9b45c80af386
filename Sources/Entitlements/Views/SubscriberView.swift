package import AppStore
package import JSON

/// Encodes a customer's status as the API's subscriber answer (what `GET /v1/subscribers/…`
/// answers and every event carries). Each encoding is written once, into any `JSONObjectBuilder`:
/// events write bytes (`JSONObjectWriter`), answers that are extended afterwards build a tree.
package enum SubscriberView {
    /// One environment's answer.
    package static func render(_ status: SubscriberStatus, appAccountToken: String?, environment: AppStoreEnvironment) -> JSONObject {
        var answer = JSONObject()
        write(status, appAccountToken: appAccountToken, environment: environment, into: &answer)
        return answer
    }

    package static func write<Object: JSONObjectBuilder>(
        _ status: SubscriberStatus, appAccountToken: String?, environment: AppStoreEnvironment, into subscriber: inout Object
    ) {
        subscriber.set("appAccountToken", ifPresent: appAccountToken)
        subscriber.set("environment", environment.rawValue)
        subscriber.object("entitlements") { entitlements in
            for name in status.entitlements.keys.sorted() {
                entitlements.object(name) { write(status.entitlements[name]!, into: &$0) }
            }
        }
        subscriber.object("subscriptions") { subscriptions in
            for (productId, state) in lastByKey(status.subscriptions, \.productId) {
                subscriptions.object(productId) { write(state, into: &$0) }
            }
            writePlaySubscriptions(status, into: &subscriptions, marksSandbox: false)
        }
        subscriber.list("nonSubscriptions") { list in
            for transaction in status.nonSubscriptions { list.object { write(transaction, into: &$0) } }
            writePlayProducts(status, into: &list, marksSandbox: false)
        }
    }

    /// The answer over several environments: each entry says its `environment` and `isSandbox`;
    /// `environments` lists where the customer has facts, `environment` stays when there is one.
    /// A product subscribed in two environments is listed once: the active one, else Production's.
    package static func render(_ status: SubscriberStatus, appAccountToken: String?, environments: [AppStoreEnvironment]) -> JSONObject {
        var answer = JSONObject()
        write(status, appAccountToken: appAccountToken, environments: environments, into: &answer)
        return answer
    }

    package static func write<Object: JSONObjectBuilder>(
        _ status: SubscriberStatus, appAccountToken: String?, environments: [AppStoreEnvironment], into subscriber: inout Object
    ) {
        var chosen: [SubscriptionState] = []
        for state in status.subscriptions {
            guard let index = chosen.firstIndex(where: { $0.productId == state.productId }) else {
                chosen.append(state)
                continue
            }
            if state.isActive && !chosen[index].isActive { chosen[index] = state }
        }
        subscriber.set("appAccountToken", ifPresent: appAccountToken)
        if environments.count == 1 { subscriber.set("environment", environments[0].rawValue) }
        subscriber.set("environments", strings: environments.map(\.rawValue))
        subscriber.object("entitlements") { entitlements in
            for name in status.entitlements.keys.sorted() {
                let grant = status.entitlements[name]!
                entitlements.object(name) { entry in
                    write(grant, into: &entry)
                    entry.set("environment", grant.environment)
                    entry.set("isSandbox", isSandbox(grant.environment))
                }
            }
        }
        subscriber.object("subscriptions") { subscriptions in
            for state in chosen {
                subscriptions.object(state.productId) { entry in
                    write(state, into: &entry)
                    entry.set("isSandbox", isSandbox(state.environment))
                }
            }
            writePlaySubscriptions(status, into: &subscriptions, marksSandbox: true)
        }
        subscriber.list("nonSubscriptions") { list in
            for transaction in status.nonSubscriptions {
                list.object { item in
                    write(transaction, into: &item)
                    item.set("environment", transaction.environment)
                    item.set("isSandbox", isSandbox(transaction.environment))
                }
            }
            writePlayProducts(status, into: &list, marksSandbox: true)
        }
    }

    /// Google Play subscriptions beside the App Store's, under `googlePlay:<productId>`
    /// (`:<basePlanId>`); each says `"store": "play_store"`. A purchase another one replaced is
    /// left out (its successor carries on).
    private static func writePlaySubscriptions<Object: JSONObjectBuilder>(
        _ status: SubscriberStatus, into subscriptions: inout Object, marksSandbox: Bool
    ) {
        let current = status.playPurchases.filter { !$0.isSuperseded && $0.purchase.kind != .product }
        let keyed = lastByKey(current) { "googlePlay:" + $0.purchase.productId + ($0.purchase.basePlanId.map { ":" + $0 } ?? "") }
        for (key, state) in keyed {
            subscriptions.object(key) { item in
                write(state, into: &item)
                if marksSandbox { item.set("isSandbox", isSandbox(state.purchase.environment)) }
            }
        }
    }

    /// Google Play one-time products, among `nonSubscriptions`.
    private static func writePlayProducts<List: JSONListBuilder>(_ status: SubscriberStatus, into list: inout List, marksSandbox: Bool) {
        for state in status.playPurchases where !state.isSuperseded && state.purchase.kind == .product {
            list.object { item in
                write(state, into: &item)
                if marksSandbox { item.set("isSandbox", isSandbox(state.purchase.environment)) }
            }
        }
    }

    /// Each key once, at its first position, with its last item: what assigning them one by one
    /// into an object gives.
    private static func lastByKey<Item>(_ items: [Item], _ key: (Item) -> String) -> [(String, Item)] {
        var keyed: [(String, Item)] = []
        for item in items {
            let name = key(item)
            if let index = keyed.firstIndex(where: { $0.0 == name }) { keyed[index].1 = item } else { keyed.append((name, item)) }
        }
        return keyed
    }

    package static func json(_ state: PlayPurchaseState) -> JSONObject { tree { write(state, into: &$0) } }

    package static func write<Object: JSONObjectBuilder>(_ state: PlayPurchaseState, into object: inout Object) {
        let purchase = state.purchase
        object.set("store", "play_store")
        object.set("state", state.state)
        object.set("isActive", state.isActive)
        object.set("googleProductId", purchase.productId)
        object.set("purchaseToken", purchase.purchaseToken)
        object.set("productId", ifPresent: state.catalogProductId)
        object.set("basePlanId", ifPresent: purchase.basePlanId)
        object.set("offerId", ifPresent: purchase.offerId)
        object.set("orderId", ifPresent: purchase.orderId)
        Timestamps.set(&object, "purchaseDate", purchase.startTime)
        Timestamps.set(&object, "expiresDate", purchase.expiryTime)
        if purchase.kind == .subscription { object.set("willRenew", state.willRenew) }
        Timestamps.set(&object, "revocationDate", purchase.voidedAt)
        object.set("linkedPurchaseToken", ifPresent: purchase.linkedPurchaseToken)
        object.set("acknowledged", purchase.acknowledged)
        object.set("environment", purchase.environment)
        // Entitle's reading of Google's 2026 members, then the members as Google sent them.
        object.set("periodType", ifPresent: purchase.details.periodType)
        object.set("nextProductId", ifPresent: purchase.details.nextProductId)
        if purchase.kind == .product { object.set("entitledQuantity", ifPresent: purchase.details.entitledQuantity) }
        purchase.details.write(into: &object)
    }

    /// Anything but Production is a test purchase.
    private static func isSandbox(_ environment: String) -> Bool { environment != AppStoreEnvironment.production.rawValue }

    package static func json(_ transaction: TransactionRecord) -> JSONObject { tree { write(transaction, into: &$0) } }

    package static func write<Object: JSONObjectBuilder>(_ transaction: TransactionRecord, into item: inout Object) {
        item.set("productId", transaction.productId)
        item.set("transactionId", transaction.transactionId)
        item.set("type", transaction.type)
        item.set("store", "app_store")
        Timestamps.set(&item, "purchaseDate", transaction.purchaseDate)
        Timestamps.set(&item, "revocationDate", transaction.revocationDate)
        // An offer code redeemed for a one-time purchase (`offerType` 3, `offerDiscountType` ONE_TIME).
        item.set("offerType", ifPresent: transaction.offerType.map(offerTypeName))
        item.set("offerIdentifier", ifPresent: transaction.offerIdentifier)
        item.set("offerDiscountType", ifPresent: transaction.offerDiscountType)
        item.set("offerPeriod", ifPresent: transaction.offerPeriod)
        item.set("revocationType", ifPresent: transaction.revocationType)
        item.set("revocationPercentage", ifPresent: transaction.revocationPercentage)
    }

    package static func json(_ state: SubscriptionState) -> JSONObject { tree { write(state, into: &$0) } }

    package static func write<Object: JSONObjectBuilder>(_ state: SubscriptionState, into object: inout Object) {
        object.set("state", state.state.rawValue)
        object.set("isActive", state.isActive)
        object.set("originalTransactionId", state.originalTransactionId)
        object.set("transactionId", state.transactionId)
        object.set("store", "app_store")
        Timestamps.set(&object, "purchaseDate", state.purchaseDate)
        Timestamps.set(&object, "originalPurchaseDate", state.originalPurchaseDate)
        Timestamps.set(&object, "expiresDate", state.expiresDate)
        Timestamps.set(&object, "gracePeriodExpiresDate", state.gracePeriodExpiresDate)
        object.set("willRenew", state.willRenew)
        object.set("autoRenewProductId", ifPresent: state.autoRenewProductId)
        object.set("periodType", state.periodType)
        object.set("offerType", ifPresent: state.offerType.map(offerTypeName))
        object.set("offerIdentifier", ifPresent: state.offerIdentifier)
        object.set("offerDiscountType", ifPresent: state.offerDiscountType)
        object.set("offerPeriod", ifPresent: state.offerPeriod)
        Timestamps.set(&object, "billingIssueDetectedAt", state.billingIssueDetectedAt)
        Timestamps.set(&object, "unsubscribeDetectedAt", state.unsubscribeDetectedAt)
        Timestamps.set(&object, "revocationDate", state.revocationDate)
        object.set("revocationReason", ifPresent: state.revocationReason)
        object.set("revocationType", ifPresent: state.revocationType)
        object.set("revocationPercentage", ifPresent: state.revocationPercentage)
        object.set("isUpgraded", state.isUpgraded)
        object.set("ownershipType", ifPresent: state.ownershipType)
        object.set("environment", state.environment)
        if !state.eligibleWinBackOfferIds.isEmpty { object.set("eligibleWinBackOfferIds", strings: state.eligibleWinBackOfferIds) }
        object.set("billingPlanType", ifPresent: state.billingPlanType)
        object.set("renewalBillingPlanType", ifPresent: state.renewalBillingPlanType)
        if state.commitment != nil || state.renewalCommitment != nil {
            // Both of Apple's commitmentInfo objects in one, under Apple's member names (they do
            // not overlap): this period's place in the commitment, and the next term.
            object.object("commitment") { commitment in
                state.commitment?.write(into: &commitment, isoDates: true)
                state.renewalCommitment?.write(into: &commitment, isoDates: true)
            }
        }
    }

    package static func json(_ entitlement: ProductGrant) -> JSONObject { tree { write(entitlement, into: &$0) } }

    package static func write<Object: JSONObjectBuilder>(_ entitlement: ProductGrant, into object: inout Object) {
        object.set("isActive", entitlement.isActive)
        object.set("state", entitlement.state)
        if !entitlement.productId.isEmpty { object.set("productId", entitlement.productId) }
        object.set("originalTransactionId", ifPresent: entitlement.originalTransactionId)
        Timestamps.set(&object, "expiresDate", entitlement.expiresDate)
        Timestamps.set(&object, "gracePeriodExpiresDate", entitlement.gracePeriodExpiresDate)
        object.set("willRenew", entitlement.willRenew)
        object.set("periodType", entitlement.periodType)
        object.set("ownershipType", ifPresent: entitlement.ownershipType)
        object.set("store", entitlement.store)
        object.set("grantId", ifPresent: entitlement.promotional?.id)
        object.set("purchaseToken", ifPresent: entitlement.purchaseToken)
    }

    /// A promotional grant as the grant endpoints and the history answer it.
    package static func json(_ grant: PromotionalGrant, now: Int64) -> JSONObject { tree { write(grant, now: now, into: &$0) } }

    package static func write<Object: JSONObjectBuilder>(_ grant: PromotionalGrant, now: Int64, into object: inout Object) {
        object.set("id", grant.id)
        object.set("entitlement", grant.entitlement)
        object.set("appAccountToken", grant.appAccountToken)
        object.set("environment", grant.environment)
        object.set("store", "promotional")
        object.set("state", grant.state(at: now) ?? "PENDING")
        object.set("grantedBy", grant.grantedBy)
        Timestamps.set(&object, "startsAt", grant.startsAt)
        Timestamps.set(&object, "expiresDate", grant.expiresDate)
        object.set("reason", ifPresent: grant.reason)
        Timestamps.set(&object, "revokedAt", grant.revokedAt)
        object.set("revokedBy", ifPresent: grant.revokedBy)
    }

    package static func offerTypeName(_ type: Int64) -> String {
        switch type {
        case 1: "INTRODUCTORY"
        case 2: "PROMOTIONAL"
        case 3: "OFFER_CODE"
        case 4: "WIN_BACK"
        default: String(type)
        }
    }

    private static func tree(_ build: (inout JSONObject) -> Void) -> JSONObject {
        var object = JSONObject()
        build(&object)
        return object
    }
}
