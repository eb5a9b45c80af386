package import Instants

/// What the app's configuration says about one product: its subscription group, the
/// entitlements it unlocks, and (for a non-renewing subscription) how long it lasts.
package struct CatalogProduct: Sendable {
    package var subscriptionGroup: String?
    package var entitlements: [String]
    /// The length of a non-renewing subscription (ISO 8601, e.g. `P1M`).
    package var duration: ISO8601Duration?
    /// The same product on Google Play (`"googlePlay": {"productId", "basePlanId"?}`), so one
    /// entitlement can be granted by either store.
    package var googlePlay: GooglePlayProduct?
    /// The app offers a free sample or trial of the content (a refund review tells the store).
    package var sampleContentProvided = false
    /// A subscription's billing period for the business figures (`P1W`, `P1M`, `P2M`, `P3M`,
    /// `P6M`, `P1Y`); without it, each period's length decides (docs/METRICS.md).
    package var period: String?

    package init(subscriptionGroup: String? = nil, entitlements: [String] = [], duration: ISO8601Duration? = nil) {
        self.subscriptionGroup = subscriptionGroup
        self.entitlements = entitlements
        self.duration = duration
    }
}

/// A Google Play product: a subscription's id and (optionally) one of its base plans, or a
/// one-time product's id.
package struct GooglePlayProduct: Sendable, Equatable {
    package var productId: String
    package var basePlanId: String?

    package init(productId: String, basePlanId: String?) {
        self.productId = productId
        self.basePlanId = basePlanId
    }
}

extension [String: CatalogProduct] {
    /// The catalog product a Play purchase is: the one naming its product id and base plan, else
    /// the one naming its product id without a base plan.
    package func catalogId(playProduct productId: String, basePlanId: String?) -> String? {
        let matching = filter { $0.value.googlePlay?.productId == productId }
        return matching.first { $0.value.googlePlay?.basePlanId != nil && $0.value.googlePlay?.basePlanId == basePlanId }?.key
            ?? matching.filter { $0.value.googlePlay?.basePlanId == nil }.keys.sorted().first
    }
}
