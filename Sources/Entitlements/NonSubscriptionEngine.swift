import AppStore

/// Non-consumables, non-renewing subscriptions and consumables (ENTITLEMENTS.md, "Other product
/// types"). Dates are epoch milliseconds.
public enum NonSubscriptionEngine {
    /// The grant of one non-subscription purchase at `now`, or nil for a consumable (never an
    /// entitlement). `durationMilliseconds` is the configured length of a non-renewing subscription.
    public static func grant(_ transaction: TransactionRecord, now: Int64, durationMilliseconds: Int64?) -> ProductGrant? {
        let revoked = transaction.revocationDate.map { $0 <= now } ?? false
        switch ProductType(rawValue: transaction.type) {
        case .nonConsumable:
            return ProductGrant(productId: transaction.productId, isActive: !revoked, state: revoked ? "REVOKED" : "ACTIVE",
                                originalTransactionId: transaction.originalTransactionId, expiresDate: nil,
                                ownershipType: transaction.ownershipType,
                                lastEventDate: transaction.revocationDate ?? transaction.purchaseDate)
        case .nonRenewing:
            let expires = durationMilliseconds.map { transaction.purchaseDate + $0 }
            let active = !revoked && transaction.purchaseDate <= now && (expires.map { now < $0 } ?? false)
            return ProductGrant(productId: transaction.productId, isActive: active,
                                state: revoked ? "REVOKED" : active ? "ACTIVE" : "EXPIRED",
                                originalTransactionId: transaction.originalTransactionId, expiresDate: expires,
                                ownershipType: transaction.ownershipType,
                                lastEventDate: transaction.revocationDate ?? expires ?? transaction.purchaseDate)
        default:
            return nil
        }
    }
}
