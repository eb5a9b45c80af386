/// A product's answer for entitlement purposes (a subscription, or a non-subscription purchase);
/// an entitlement answers with the best grant of the products that confer it.
package struct ProductGrant: Sendable, Equatable {
    package var productId: String
    package var isActive: Bool
    package var state: String
    package var originalTransactionId: String?
    /// nil means no expiry (a non-consumable), which beats any date.
    package var expiresDate: Int64?
    package var gracePeriodExpiresDate: Int64?
    package var willRenew: Bool
    package var periodType: String
    package var ownershipType: String?
    /// For ordering inactive grants: the most recent wins.
    package var lastEventDate: Int64
    /// The environment of the facts behind the grant (`Production`, `Sandbox`, …).
    package var environment: String = ""
    /// Where it comes from: `app_store`, or `promotional` (a grant given by support).
    package var store = "app_store"
    /// The promotional grant behind it; it confers its own entitlement, not a product's.
    package var promotional: PromotionalGrant?
    /// The Google Play purchase behind it (`store` is `play_store`).
    package var purchaseToken: String?

    package init(_ subscription: SubscriptionState) {
        environment = subscription.environment
        productId = subscription.productId
        isActive = subscription.isActive
        state = subscription.state.rawValue
        originalTransactionId = subscription.originalTransactionId
        expiresDate = subscription.expiresDate
        gracePeriodExpiresDate = subscription.gracePeriodExpiresDate
        willRenew = subscription.willRenew
        periodType = subscription.periodType
        ownershipType = subscription.ownershipType
        lastEventDate = subscription.revocationDate ?? subscription.expiresDate ?? subscription.purchaseDate
    }

    package init(
        productId: String, isActive: Bool, state: String, originalTransactionId: String?, expiresDate: Int64?,
        ownershipType: String?, lastEventDate: Int64, environment: String = ""
    ) {
        self.environment = environment
        self.productId = productId
        self.isActive = isActive
        self.state = state
        self.originalTransactionId = originalTransactionId
        self.expiresDate = expiresDate
        gracePeriodExpiresDate = nil
        willRenew = false
        periodType = "NORMAL"
        self.ownershipType = ownershipType
        self.lastEventDate = lastEventDate
    }
}

/// Maps products to the entitlements they grant and picks, per entitlement, the best grant:
/// active beats inactive; among active ones the latest expiry (none beats any); among inactive
/// ones a purchase before a promotional grant, then the most recent.
package enum EntitlementResolver {
    /// The best grant per entitlement name.
    package static func resolve(_ grants: [ProductGrant], entitlementsOf: (String) -> [String]) -> [String: ProductGrant] {
        var best: [String: ProductGrant] = [:]
        for grant in grants {
            let names = grant.promotional.map { [$0.entitlement] } ?? entitlementsOf(grant.productId)
            for name in names where best[name].map({ isBetter(grant, than: $0) }) ?? true {
                best[name] = grant
            }
        }
        return best
    }

    package static func isBetter(_ candidate: ProductGrant, than existing: ProductGrant) -> Bool {
        if candidate.isActive != existing.isActive { return candidate.isActive }
        if candidate.isActive {
            switch (candidate.expiresDate, existing.expiresDate) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case (let lhs?, let rhs?): return lhs > rhs
            }
        }
        // An ended promotional grant says less than the customer's own purchase: it shows only when
        // nothing else confers the entitlement.
        if (candidate.promotional == nil) != (existing.promotional == nil) { return candidate.promotional == nil }
        return candidate.lastEventDate > existing.lastEventDate
    }
}
