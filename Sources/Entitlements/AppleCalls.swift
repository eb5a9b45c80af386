import AppStore

extension PendingAppleCall {
    /// Which purchases Entitle finishes with Apple when the app lets the server deliver content
    /// (`finishTransactions`): the one-time kinds (consumable, non-consumable, non-renewing), as
    /// StoreKit's `finish()` is called for them once delivered; not a subscription's renewals (the
    /// App Store renews them whatever the app does), not one already refunded (nothing to deliver).
    package static func isFinishedByServer(_ purchase: TransactionRecord) -> Bool {
        oneTimeKinds.contains(purchase.type) && purchase.revocationDate == nil
    }

    private static let oneTimeKinds: Set<String> = [
        ProductType.consumable.rawValue, ProductType.nonConsumable.rawValue, ProductType.nonRenewing.rawValue,
    ]
}
