extension FactStore {
    /// `entitle metrics rebuild`: forgets an environment's day sums, then computes every stored
    /// subscription's moments again from its facts (the App Store's, then Google Play's), a page
    /// to a commit, through the writer (a write arriving meanwhile is counted once: each commit
    /// adds what changed against what is stored). Answers how many subscriptions were counted.
    package func rebuildMetrics(appId: String, environment: String, pageSize: Int = 500) throws -> Int {
        var clear = FactBatch(appId: appId, environment: environment)
        clear.clearsMetrics = true
        _ = try write(clear)
        var counted = 0
        try eachSubscriptionPage(appId: appId, environment: environment, pageSize: pageSize) { page in
            var batch = FactBatch(appId: appId, environment: environment)
            batch.metricsRecomputed = page.map(\.originalTransactionId)
            _ = try write(batch)
            counted += page.count
        }
        var after: String?
        while true {
            let page = try playPurchases(appId: appId, after: after, limit: pageSize)
            let subscriptions = page.filter { $0.environment == environment }.map(\.purchaseToken)
            if !subscriptions.isEmpty {
                var batch = FactBatch(appId: appId, environment: environment)
                batch.playMetricsRecomputed = subscriptions
                _ = try write(batch)
                counted += subscriptions.count
            }
            guard page.count == pageSize, let last = page.last else { return counted }
            after = last.purchaseToken
        }
    }
}
