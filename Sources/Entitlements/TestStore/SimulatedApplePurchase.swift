/// A one-time purchase as the test store's App Store holds it: a consumable, a non-consumable or
/// a non-renewing subscription, bought once, perhaps refunded (docs/TEST_STORE.md).
package struct SimulatedApplePurchase: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case consumable = "Consumable"
        case nonConsumable = "Non-Consumable"
        /// Its length is the app's to know (the catalog's `duration`); Apple's transaction has
        /// no expiry.
        case nonRenewing = "Non-Renewing Subscription"
    }

    package var bundleId: String
    package var environment: String
    package var transactionId: String
    package var productId: String
    package var kind: Kind
    package var quantity: Int
    /// The price of all `quantity` items, in milliunits, and its currency.
    package var price: Int64
    package var currency: String
    package var appAccountToken: String?
    package var purchaseDate: Int64
    package var revocationDate: Int64?
}
