extension FactStore {
    /// Every stored subscription of an app's environment, handed to `body` a page at a time
    /// (memory stays one page), by original transaction id. Whole-store figures walk this way:
    /// the overview's counts and the business metrics.
    package func eachSubscriptionPage(
        appId: String, environment: String, pageSize: Int = 500, _ body: ([SubscriptionFacts]) throws -> Void
    ) throws {
        var after: String?
        while true {
            let page = try subscriptions(appId: appId, environment: environment, after: after, limit: pageSize)
            try body(page)
            guard page.count == pageSize, let last = page.last else { return }
            after = last.originalTransactionId
        }
    }
}
