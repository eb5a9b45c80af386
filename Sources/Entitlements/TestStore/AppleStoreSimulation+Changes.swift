import Instants

/// What changes a subscription without ending it, in the test store's App Store: plan changes in
/// the group, price increases, Family Sharing's revocation (docs/TEST_STORE.md has the table).
extension AppleStoreSimulation {
    /// An upgrade (or a crossgrade to a product of the same duration) takes effect now: a new
    /// transaction of the new product starts a new period, the replaced one is marked
    /// `isUpgraded` (Apple refunds its unused part to the customer), `DID_CHANGE_RENEWAL_PREF/UPGRADE`.
    /// Answers the replaced transaction's last state too, for the store's history.
    package static func changePlanNow(
        _ subscription: inout SimulatedAppleSubscription, to plan: SimulatedAppleSubscription.Plan, transactionId: String, now: Int64
    ) throws(Refusal) -> (replaced: SimulatedAppleSubscription, step: Step) {
        guard subscription.status == .active else { throw Refusal("only an active subscription changes plan at once") }
        guard plan.productId != subscription.productId else { throw Refusal("the subscription is \(plan.productId) already") }
        var replaced = subscription
        replaced.isUpgraded = true
        try startPeriod(&subscription, of: plan, offer: nil, transactionId: transactionId, now: now)
        return (replaced, step(subscription, "DID_CHANGE_RENEWAL_PREF", "UPGRADE", at: now))
    }

    /// A downgrade (or a crossgrade to another duration) takes effect at the next renewal: the
    /// renewal info's `autoRenewProductId` names it now, `DID_CHANGE_RENEWAL_PREF/DOWNGRADE`.
    /// Choosing the current product again withdraws a pending change
    /// (`DID_CHANGE_RENEWAL_PREF` without a subtype).
    package static func changePlanAtRenewal(
        _ subscription: inout SimulatedAppleSubscription, to plan: SimulatedAppleSubscription.Plan, now: Int64
    ) throws(Refusal) -> Step {
        guard [.active, .gracePeriod, .billingRetry].contains(subscription.status) else {
            throw Refusal("the subscription has ended: buy again instead")
        }
        guard plan.productId != subscription.productId else {
            guard subscription.pendingPlan != nil else { throw Refusal("the subscription is \(plan.productId) already") }
            subscription.pendingPlan = nil
            return step(subscription, "DID_CHANGE_RENEWAL_PREF", nil, at: now)
        }
        subscription.pendingPlan = plan
        subscription.autoRenew = true
        subscription.expirationIntent = nil
        return step(subscription, "DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", at: now)
    }

    /// Apple announces a higher price from the next renewal: the customer consents
    /// (`PRICE_INCREASE/ACCEPTED`, renewals at the new price) or has not yet
    /// (`PRICE_INCREASE/PENDING`; without consent by the renewal date the subscription ends,
    /// `EXPIRED/PRICE_INCREASE`). `price` nil: the customer consents to the pending increase.
    package static func increasePrice(
        _ subscription: inout SimulatedAppleSubscription, to price: Int64?, consent: Bool, now: Int64
    ) throws(Refusal) -> Step {
        guard subscription.status == .active || subscription.status == .gracePeriod || subscription.status == .billingRetry,
            subscription.autoRenew
        else { throw Refusal("only a subscription that renews gets a price increase") }
        if let price {
            guard price > subscription.price else { throw Refusal("the new price must be higher than \(subscription.price)") }
            subscription.priceIncrease = SimulatedAppleSubscription.PriceIncrease(price: price, consented: consent)
        } else {
            guard consent, subscription.priceIncrease?.consented == false else {
                throw Refusal("give the new \"price\"; without one, \"consent\": true accepts a pending increase")
            }
            subscription.priceIncrease?.consented = true
        }
        return step(subscription, "PRICE_INCREASE", consent ? "ACCEPTED" : "PENDING", at: now)
    }

    /// The purchaser stops sharing (or leaves the family): the family member's access ends,
    /// `REVOKE`, the transaction revoked with `revocationType` `FAMILY_REVOKE`.
    package static func revokeFamilySharing(_ subscription: inout SimulatedAppleSubscription, now: Int64) throws(Refusal) -> Step {
        guard subscription.ownership == "FAMILY_SHARED" else { throw Refusal("the subscription is not shared through Family Sharing") }
        guard subscription.revocationDate == nil else { throw Refusal("the access is revoked already") }
        subscription.revocationDate = now
        subscription.revocationType = "FAMILY_REVOKE"
        subscription.status = .revoked
        subscription.autoRenew = false
        subscription.nextRenewalFails = nil
        return step(subscription, "REVOKE", nil, at: now)
    }
}
