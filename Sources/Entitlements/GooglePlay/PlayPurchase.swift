/// A Google Play purchase as Entitle stores it: what `subscriptionsv2.get` or `products.get` said
/// when it was last read (a notification is only a signal; the purchase is always re-read).
package struct PlayPurchase: Sendable, Equatable {
    package enum Kind: String, Sendable { case subscription, product }

    package var purchaseToken: String
    package var kind: Kind
    /// Google's product id (a subscription's id, or a one-time product's).
    package var productId: String
    package var basePlanId: String?
    package var offerId: String?
    /// `Sandbox` for a license tester's purchase (`testPurchase`), else `Production`.
    package var environment: String
    /// Google's `subscriptionState` (`SUBSCRIPTION_STATE_ACTIVE`, …), or for a one-time product
    /// `PURCHASED`, `CANCELED` or `PENDING`.
    package var googleState: String
    package var startTime: Int64
    package var expiryTime: Int64?
    package var autoRenewing: Bool
    /// The purchase this one replaced (an upgrade, downgrade or resubscription).
    package var linkedPurchaseToken: String?
    package var acknowledged: Bool
    /// The customer: `obfuscatedExternalAccountId` when it is a UUID, else the app's post.
    package var appAccountToken: String?
    package var orderId: String?
    /// When Google voided it (a refund or chargeback), from a voided-purchase notification or list.
    package var voidedAt: Int64?
    /// When Entitle read it from Google: a later read replaces an earlier one, never the reverse.
    package var readAt: Int64
    /// What Google's answers of 2025–26 add (offer phase, price changes, units, …).
    package var details: PlayPurchaseDetails

    package init(
        purchaseToken: String, kind: Kind, productId: String, basePlanId: String?, offerId: String?, environment: String,
        googleState: String, startTime: Int64, expiryTime: Int64?, autoRenewing: Bool, linkedPurchaseToken: String?,
        acknowledged: Bool, appAccountToken: String?, orderId: String?, voidedAt: Int64?, readAt: Int64,
        details: PlayPurchaseDetails = PlayPurchaseDetails()
    ) {
        self.details = details
        self.purchaseToken = purchaseToken
        self.kind = kind
        self.productId = productId
        self.basePlanId = basePlanId
        self.offerId = offerId
        self.environment = environment
        self.googleState = googleState
        self.startTime = startTime
        self.expiryTime = expiryTime
        self.autoRenewing = autoRenewing
        self.linkedPurchaseToken = linkedPurchaseToken
        self.acknowledged = acknowledged
        self.appAccountToken = appAccountToken
        self.orderId = orderId
        self.voidedAt = voidedAt
        self.readAt = readAt
    }
}

extension PlayPurchase {
    /// This read stored over `stored` (nil: the first read) by the stores' rules: an older read
    /// changes nothing; the customer link stays when this read has none; a void is never
    /// forgotten; the periods seen before are kept, this read's added (`PlayPeriod.adding`).
    package func replacing(_ stored: PlayPurchase?) -> PlayPurchase {
        if let stored, readAt < stored.readAt { return stored }
        var merged = self
        merged.appAccountToken = appAccountToken ?? stored?.appAccountToken
        merged.voidedAt = stored?.voidedAt ?? voidedAt
        merged.details.periods = PlayPeriod.adding(self, to: stored?.details.periods ?? [])
        return merged
    }
}

/// A Play purchase's state at an instant, in Entitle's terms.
package struct PlayPurchaseState: Sendable, Equatable {
    package var purchase: PlayPurchase
    /// The catalog product it is, when the catalog maps it.
    package var catalogProductId: String?
    /// `ACTIVE`, `GRACE_PERIOD`, `BILLING_RETRY`, `PAUSED`, `EXPIRED`, `REVOKED`, `PENDING`.
    package var state: String
    package var isActive: Bool
    package var willRenew: Bool
    /// A later purchase names this one as its `linkedPurchaseToken`: it was replaced.
    package var isSuperseded: Bool
}

/// Google Play's states mapped onto Entitle's (the one place that decides them):
/// `SUBSCRIPTION_STATE_ACTIVE` → ACTIVE; `IN_GRACE_PERIOD` → GRACE_PERIOD (access kept);
/// `ON_HOLD` → BILLING_RETRY (access as `billingRetryGrantsAccess` says); `PAUSED` → PAUSED (no
/// access); `CANCELED` → ACTIVE until its expiry with `willRenew` false, then EXPIRED;
/// `EXPIRED` → EXPIRED; a voided purchase → REVOKED; a purchase another one replaced
/// (`linkedPurchaseToken`) → EXPIRED. Time is checked too: a stored ACTIVE whose expiry passed
/// reads EXPIRED until Google says more.
package enum PlayEvaluation {
    package static func state(
        _ purchase: PlayPurchase, supersededTokens: Set<String>, now: Int64, products: [String: CatalogProduct],
        billingRetryGrantsAccess: Bool
    ) -> PlayPurchaseState {
        let catalogId = products.catalogId(playProduct: purchase.productId, basePlanId: purchase.basePlanId)
        let superseded = supersededTokens.contains(purchase.purchaseToken)
        func result(_ state: String, active: Bool, renews: Bool = false) -> PlayPurchaseState {
            PlayPurchaseState(
                purchase: purchase, catalogProductId: catalogId, state: state, isActive: active, willRenew: renews,
                isSuperseded: superseded)
        }
        if let voided = purchase.voidedAt, voided <= now { return result("REVOKED", active: false) }
        if superseded { return result("EXPIRED", active: false) }
        if purchase.kind == .product {
            // Every unit refunded (quantity-based refunds): nothing is owned any more.
            if purchase.details.entitledQuantity == 0 { return result("REVOKED", active: false) }
            switch purchase.googleState {
            case "PURCHASED": return result("ACTIVE", active: true)
            case "PENDING": return result("PENDING", active: false)
            default: return result("REVOKED", active: false)
            }
        }
        let running = purchase.expiryTime.map { $0 > now } ?? false
        switch purchase.googleState {
        case "SUBSCRIPTION_STATE_ACTIVE":
            return running ? result("ACTIVE", active: true, renews: purchase.autoRenewing) : result("EXPIRED", active: false)
        case "SUBSCRIPTION_STATE_CANCELED": return running ? result("ACTIVE", active: true) : result("EXPIRED", active: false)
        case "SUBSCRIPTION_STATE_IN_GRACE_PERIOD": return result("GRACE_PERIOD", active: true, renews: true)
        case "SUBSCRIPTION_STATE_ON_HOLD": return result("BILLING_RETRY", active: billingRetryGrantsAccess, renews: true)
        case "SUBSCRIPTION_STATE_PAUSED": return result("PAUSED", active: false, renews: true)
        case "SUBSCRIPTION_STATE_PENDING": return result("PENDING", active: false)
        default: return result("EXPIRED", active: false)
        }
    }

    /// Each purchase's state, and the grants of those the catalog maps (for the resolver).
    package static func evaluate(
        _ purchases: [PlayPurchase], now: Int64, products: [String: CatalogProduct], billingRetryGrantsAccess: Bool
    ) -> (states: [PlayPurchaseState], grants: [ProductGrant]) {
        let superseded = Set(purchases.compactMap(\.linkedPurchaseToken))
        let states = purchases.filter { $0.startTime <= now }.map {
            state($0, supersededTokens: superseded, now: now, products: products, billingRetryGrantsAccess: billingRetryGrantsAccess)
        }
        let grants = states.compactMap { state -> ProductGrant? in
            guard let catalogId = state.catalogProductId, !state.isSuperseded else { return nil }
            var grant = ProductGrant(
                productId: catalogId, isActive: state.isActive, state: state.state, originalTransactionId: nil,
                expiresDate: state.purchase.kind == .product ? nil : state.purchase.expiryTime, ownershipType: nil,
                lastEventDate: state.purchase.voidedAt ?? state.purchase.expiryTime ?? state.purchase.startTime,
                environment: state.purchase.environment)
            grant.store = "play_store"
            grant.willRenew = state.willRenew
            if let period = state.purchase.details.periodType { grant.periodType = period }
            grant.purchaseToken = state.purchase.purchaseToken
            return grant
        }
        return (states, grants)
    }
}
