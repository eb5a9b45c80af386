/// What the app's configuration says about one product: its subscription group, the
/// entitlements it unlocks, and (for a non-renewing subscription) how long it lasts.
public struct CatalogProduct: Sendable {
    public var subscriptionGroup: String?
    public var entitlements: [String]
    /// The length of a non-renewing subscription (ISO 8601, e.g. `P1M`).
    public var duration: ISO8601Duration?

    public init(subscriptionGroup: String? = nil, entitlements: [String] = [], duration: ISO8601Duration? = nil) {
        self.subscriptionGroup = subscriptionGroup
        self.entitlements = entitlements
        self.duration = duration
    }
}
