extension FactStore {
    /// `entitle metrics rebuild`: forgets an environment's day sums, then computes every stored
    /// subscription's moments again from its facts, a page to a commit, through the writer (a
    /// write arriving meanwhile is counted once: each commit adds what changed against what is
    /// stored). Answers how many subscriptions were counted.
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
        return counted
    }
}
