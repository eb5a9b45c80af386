import AppStore

/// What one customer has at an instant, derived from their stored facts.
public struct SubscriberStatus: Sendable, Equatable {
    /// One state per auto-renewable subscription.
    public var subscriptions: [SubscriptionState] = []
    /// Non-consumables, non-renewing subscriptions and consumables, merged (newest signed copy).
    public var nonSubscriptions: [TransactionRecord] = []
    /// The best grant for each entitlement name (EntitlementResolver's rule).
    public var entitlements: [String: ProductGrant] = [:]

    public init() {}
}

/// Facts → status for one customer in one environment: the one place that decides which
/// transactions are subscriptions (auto-renewable ones) and which are other purchases.
public enum SubscriberEvaluation {
    public static func evaluate(
        _ facts: [SubscriptionFacts], now: Int64, environment: String,
        products: [String: CatalogProduct], billingRetryGrantsAccess: Bool
    ) -> SubscriberStatus {
        var status = SubscriberStatus()
        var grants: [ProductGrant] = []
        for subscription in facts {
            let autoRenewable = subscription.transactions.filter(\.isAutoRenewable)
            if !autoRenewable.isEmpty,
                let state = SubscriptionEngine.evaluate(
                    transactions: autoRenewable, renewal: subscription.renewal,
                    signals: subscription.signals, now: now, environment: environment,
                    billingRetryGrantsAccess: billingRetryGrantsAccess)
            {
                status.subscriptions.append(state)
                grants.append(ProductGrant(state))
            }
            guard autoRenewable.count < subscription.transactions.count else { continue }
            for transaction in TransactionRecord.merged(subscription.transactions) where !transaction.isAutoRenewable {
                status.nonSubscriptions.append(transaction)
                if let grant = NonSubscriptionEngine.grant(transaction, now: now, duration: products[transaction.productId]?.duration) {
                    grants.append(grant)
                }
            }
        }
        status.entitlements = EntitlementResolver.resolve(grants) { products[$0]?.entitlements ?? [] }
        return status
    }
}

extension TransactionRecord {
    public var isAutoRenewable: Bool { type == ProductType.autoRenewable.rawValue }
}
