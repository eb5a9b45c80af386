/// Offer eligibility from stored history, per subscription group (docs/ENTITLEMENTS.md, "Offer eligibility").
package enum OfferEligibility {
    package enum IntroductoryReason: String, Sendable {
        case neverSubscribedToGroup = "NEVER_SUBSCRIBED_TO_GROUP"
        case alreadySubscribedToGroup = "ALREADY_SUBSCRIBED_TO_GROUP"
    }

    /// Eligible iff no stored transaction of any product in `group` (Apple's rule is per group).
    package static func introductory(
        group: String, transactions: [TransactionRecord],
        groupOf: (String) -> String?
    ) -> IntroductoryReason {
        let subscribed = transactions.contains { ($0.subscriptionGroupIdentifier ?? groupOf($0.productId)) == group }
        return subscribed ? .alreadySubscribedToGroup : .neverSubscribedToGroup
    }

    /// Who may receive a promotional offer (the catalog's `eligibility`, checked against stored history).
    package enum PromotionalRule: String, Sendable, CaseIterable {
        /// Anyone the App Store accepts it for.
        case any
        /// Customers who have or had a subscription in the offer's group.
        case existing
        /// Customers whose subscription in the group is active now.
        case current
        /// Customers whose subscription in the group has ended.
        case lapsed
    }

    /// `any`: no check; `existing`: ever subscribed to the group; `current`: a subscription of the
    /// group is active now; `lapsed`: ever subscribed and none active now.
    package static func promotional(rule: PromotionalRule, group: String?, subscriptions: [SubscriptionState]) -> Bool {
        guard rule != .any else { return true }
        let inGroup = subscriptions.filter { group == nil || $0.subscriptionGroupIdentifier == group }
        switch rule {
        case .any: return true
        case .existing: return !inGroup.isEmpty
        case .current: return inGroup.contains(where: \.isActive)
        case .lapsed: return !inGroup.isEmpty && !inGroup.contains(where: \.isActive)
        }
    }
}
