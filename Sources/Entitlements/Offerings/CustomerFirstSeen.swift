/// When Entitle first saw a customer, for targeting by days since: the earliest instant any of
/// their facts carries — a purchase on either store, a grant, their app's download, an attribute
/// the app set. Nil: nothing is known of them yet (they are new today).
package enum CustomerFirstSeen {
    package static func instant(_ read: SubscriberFacts, attributes: [CustomerAttribute]) -> Int64? {
        var instants: [Int64] = []
        for (_, facts) in read.environments {
            for subscription in facts { instants += subscription.transactions.map { $0.originalPurchaseDate ?? $0.purchaseDate } }
        }
        instants += read.playPurchases.map(\.startTime)
        instants += read.grants.map(\.startsAt)
        instants += read.downloads.map(\.postedAt)
        instants += attributes.map(\.updatedAt)
        return instants.min()
    }
}
