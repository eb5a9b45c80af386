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
        return Held(subscriptions.map { ($0.subscriptionGroupIdentifier, $0.isActive) }).admits(rule, group: group)
    }
}

extension OfferEligibility {
    /// The subscriptions a customer holds on both stores, by group, for the promotional rules
    /// (an offering lists an offer only to customers its rule admits).
    package struct Held: Sendable {
        /// Each subscription's group (nil: unknown) and whether it is active now.
        var subscriptions: [(group: String?, isActive: Bool)]

        init(_ subscriptions: [(group: String?, isActive: Bool)]) { self.subscriptions = subscriptions }

        package init(_ status: SubscriberStatus, groupOf: (String) -> String?) {
            subscriptions = status.subscriptions.map { ($0.subscriptionGroupIdentifier ?? groupOf($0.productId), $0.isActive) }
            subscriptions += status.playPurchases.filter { $0.purchase.kind == .subscription && !$0.isSuperseded }.map {
                ($0.catalogProductId.flatMap(groupOf), $0.isActive)
            }
        }

        /// The same rule as `promotional(rule:group:subscriptions:)`, over both stores.
        package func admits(_ rule: PromotionalRule, group: String?) -> Bool {
            let inGroup = subscriptions.filter { group == nil || $0.group == group }
            switch rule {
            case .any: return true
            case .existing: return !inGroup.isEmpty
            case .current: return inGroup.contains(where: \.isActive)
            case .lapsed: return !inGroup.isEmpty && !inGroup.contains(where: \.isActive)
            }
        }
    }
}
