import AppStore
package import Instants

/// Non-consumables, non-renewing subscriptions and consumables (docs/ENTITLEMENTS.md, "Other product
/// types"). Dates are epoch milliseconds.
package enum NonSubscriptionEngine {
    /// The grant of one non-subscription purchase at `now`, or nil for a consumable (never an
    /// entitlement). `duration` is the configured length of a non-renewing subscription; without
    /// one it grants nothing (its end is unknown).
    package static func grant(_ transaction: TransactionRecord, now: Int64, duration: ISO8601Duration?) -> ProductGrant? {
        let revoked = transaction.revocationDate.map { $0 <= now } ?? false
        switch ProductType(rawValue: transaction.type) {
        case .nonConsumable:
            return ProductGrant(
                productId: transaction.productId, isActive: !revoked, state: revoked ? "REVOKED" : "ACTIVE",
                originalTransactionId: transaction.originalTransactionId, expiresDate: nil,
                ownershipType: transaction.ownershipType,
                lastEventDate: transaction.revocationDate ?? transaction.purchaseDate, environment: transaction.environment)
        case .nonRenewing:
            // An end past year 9999 is as good as never.
            let expires = duration.map { $0.end(from: transaction.purchaseDate) ?? Milliseconds.range.upperBound }
            let active = !revoked && transaction.purchaseDate <= now && (expires.map { now < $0 } ?? false)
            return ProductGrant(
                productId: transaction.productId, isActive: active,
                state: revoked ? "REVOKED" : active ? "ACTIVE" : "EXPIRED",
                originalTransactionId: transaction.originalTransactionId, expiresDate: expires,
                ownershipType: transaction.ownershipType,
                lastEventDate: transaction.revocationDate ?? expires ?? transaction.purchaseDate,
                environment: transaction.environment)
        default:
            return nil
        }
    }
}
