/// Where a customer stands with the app's subscriptions, for targeting (docs/OFFERINGS.md). One
/// state each, the first that holds in this order: a billing problem, a trial, an active
/// subscription, a subscription that ended, none ever.
package enum CustomerLifecycle: String, Sendable, CaseIterable {
    /// A subscription in billing retry or in its grace period (the payment failed).
    case billingRetry
    /// An active subscription in a free trial.
    case trial
    /// An active subscription (paid, or at an introductory or promotional price).
    case active
    /// Subscribed before; nothing active now.
    case lapsed
    /// No subscription ever (one-time purchases do not count).
    case neverSubscribed

    /// The customer's state from their evaluated status (both stores).
    package init(_ status: SubscriberStatus) {
        let apple = status.subscriptions
        let play = status.playPurchases.filter { $0.purchase.kind == .subscription && !$0.isSuperseded }
        if apple.contains(where: { $0.state == .billingRetry || $0.state == .gracePeriod })
            || play.contains(where: { $0.state == "BILLING_RETRY" || $0.state == "GRACE_PERIOD" })
        {
            self = .billingRetry
        } else if apple.contains(where: { $0.isActive && $0.periodType == "TRIAL" })
            || play.contains(where: { $0.isActive && $0.purchase.details.offerPhase == "freeTrial" })
        {
            self = .trial
        } else if apple.contains(where: \.isActive) || play.contains(where: \.isActive) {
            self = .active
        } else if !apple.isEmpty || !play.isEmpty {
            self = .lapsed
        } else {
            self = .neverSubscribed
        }
    }
}
