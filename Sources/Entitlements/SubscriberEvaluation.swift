import AppStore

/// What one customer has at an instant, derived from their stored facts.
package struct SubscriberStatus: Sendable, Equatable {
    /// One state per auto-renewable subscription.
    package var subscriptions: [SubscriptionState] = []
    /// Non-consumables, non-renewing subscriptions and consumables, merged (newest signed copy).
    package var nonSubscriptions: [TransactionRecord] = []
    /// The best grant for each entitlement name (EntitlementResolver's rule).
    package var entitlements: [String: ProductGrant] = [:]
    /// Google Play purchases (subscriptions and one-time products) and their states.
    package var playPurchases: [PlayPurchaseState] = []

    package init() {}
}

/// Facts → status for one customer: the one place that decides which transactions are
/// subscriptions (auto-renewable ones) and which are other purchases, and which grants count.
package enum SubscriberEvaluation {
    /// One environment's facts.
    package static func evaluate(
        _ facts: [SubscriptionFacts], now: Int64, environment: String,
        products: [String: CatalogProduct], billingRetryGrantsAccess: Bool, promotional: [PromotionalGrant] = []
    ) -> SubscriberStatus {
        evaluate(
            [(environment, facts)], now: now, products: products, billingRetryGrantsAccess: billingRetryGrantsAccess,
            promotional: promotional
        ) { _ in true }
    }

    /// Several environments' facts, each evaluated in its own environment (a Sandbox fact never
    /// changes a Production subscription). Subscriptions and purchases of every environment are
    /// listed; only grants of environments `grantsAccess` permits make entitlements, and the best
    /// of those wins per entitlement. Promotional grants (support's) weigh in like any other
    /// grant of their environment.
    package static func evaluate(
        _ environments: [(environment: String, facts: [SubscriptionFacts])], now: Int64,
        products: [String: CatalogProduct], billingRetryGrantsAccess: Bool, promotional: [PromotionalGrant] = [],
        play: [PlayPurchase] = [], grantsAccess: (String) -> Bool
    ) -> SubscriberStatus {
        var status = SubscriberStatus()
        var grants: [ProductGrant] = []
        for (environment, facts) in environments {
            let one = statesAndGrants(
                facts, now: now, environment: environment, products: products,
                billingRetryGrantsAccess: billingRetryGrantsAccess)
            status.subscriptions += one.status.subscriptions
            status.nonSubscriptions += one.status.nonSubscriptions
            if grantsAccess(environment) { grants += one.grants }
        }
        grants += promotional.filter { grantsAccess($0.environment) }.compactMap { $0.productGrant(at: now) }
        let fromPlay = PlayEvaluation.evaluate(play, now: now, products: products, billingRetryGrantsAccess: billingRetryGrantsAccess)
        status.playPurchases = fromPlay.states
        grants += fromPlay.grants.filter { grantsAccess($0.environment) }
        status.entitlements = EntitlementResolver.resolve(grants) { products[$0]?.entitlements ?? [] }
        return status
    }

    private static func statesAndGrants(
        _ facts: [SubscriptionFacts], now: Int64, environment: String,
        products: [String: CatalogProduct], billingRetryGrantsAccess: Bool
    ) -> (status: SubscriberStatus, grants: [ProductGrant]) {
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
        return (status, grants)
    }
}

extension TransactionRecord {
    package var isAutoRenewable: Bool { type == ProductType.autoRenewable.rawValue }
}
