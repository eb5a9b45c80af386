/// A Google Play purchase waiting for its acknowledgement. Google refunds a purchase left
/// unacknowledged for three days, so the wait is a stored fact: queued by the batch that stores
/// the purchase, tried again with backoff until Google confirms, and gone once a stored read says
/// the purchase is acknowledged (or no longer waits for it).
package struct PendingAcknowledgement: Sendable, Equatable {
    package var appId: String
    package var purchaseToken: String
    package var kind: PlayPurchase.Kind
    package var productId: String
    /// Failed attempts so far.
    package var attempts: Int
    /// When the purchase was first stored waiting (the three days run from about then).
    package var queuedAt: Int64
    package var nextAt: Int64

    package init(
        appId: String, purchaseToken: String, kind: PlayPurchase.Kind, productId: String, attempts: Int, queuedAt: Int64, nextAt: Int64
    ) {
        self.appId = appId
        self.purchaseToken = purchaseToken
        self.kind = kind
        self.productId = productId
        self.attempts = attempts
        self.queuedAt = queuedAt
        self.nextAt = nextAt
    }
}

extension PlayPurchase {
    /// Whether Google waits for this purchase to be acknowledged: bought or renewing (a cancelled
    /// subscription still runs to its expiry), not acknowledged yet, not voided.
    package var awaitsAcknowledgement: Bool {
        guard !acknowledged, voidedAt == nil else { return false }
        switch kind {
        case .product: return googleState == "PURCHASED"
        case .subscription:
            return ["SUBSCRIPTION_STATE_ACTIVE", "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "SUBSCRIPTION_STATE_CANCELED"].contains(googleState)
        }
    }
}
