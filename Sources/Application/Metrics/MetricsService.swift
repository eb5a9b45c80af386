import AppStore
package import Entitlements
import Instants
package import JSON
import Synchronization

/// `GET /v1/metrics/summary` and `GET /v1/metrics/{name}`: the business figures of
/// docs/METRICS.md from the app's stored App Store subscriptions, per environment.
///
/// The figures are computed from the facts when asked: the subscriptions of an environment are
/// read in pages on the blocking pool and kept for `cacheSeconds`, so a dashboard's several
/// series cost one walk (`factsReadAt` says when it was made). Reading thus grows with the number
/// of subscriptions; day buckets kept by the writer are the way to make it constant.
package final class MetricsService: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let exchangeRates: ExchangeRates?
    static let cacheSeconds: Int64 = 60
    /// At most this many buckets in one series.
    package static let maximumBuckets = 1000
    private let cached = Mutex<[String: (at: Int64, subscriptions: [MetricsSubscription])]>([:])
    /// Held while walking, so concurrent requests read the walk in progress instead of repeating it.
    private let walking = Mutex<Void>(())

    init(app: AppConfiguration, store: any FactStore, pool: BlockingPool, exchangeRates: ExchangeRates?) {
        self.app = app
        self.exchangeRates = exchangeRates
        self.store = store
        self.pool = pool
    }

    /// What to count: one environment, optionally one store, one product, one subscription group.
    package struct Filter: Sendable {
        package var environment: String
        package var store: String?
        package var productId: String?
        package var subscriptionGroup: String?

        package init(environment: String, store: String? = nil, productId: String? = nil, subscriptionGroup: String? = nil) {
            self.environment = environment
            self.store = store
            self.productId = productId
            self.subscriptionGroup = subscriptionGroup
        }
    }

    package func summary(
        at: Int64, filter: Filter, now: Int64, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        pool.run(
            {
                let (readAt, metrics) = try self.metrics(filter, now: now)
                var answer: JSONObject = ["environment": .string(filter.environment)]
                Timestamps.set(&answer, "at", at)
                Timestamps.set(&answer, "factsReadAt", readAt)
                answer["activeSubscriptions"] = .int(Int64(metrics.activeSubscriptions(at: at)))
                answer["activeTrials"] = .int(Int64(metrics.activeTrials(at: at)))
                let mrr = metrics.mrr(at: at)
                let arr = mrr.mapValues { $0 * 12 }
                answer["mrr"] = .object(MetricsRendering.money(mrr))
                answer["arr"] = .object(MetricsRendering.money(arr))
                if let rates = self.exchangeRates {
                    answer["mrrConverted"] = .object(MetricsRendering.converted(mrr, rates))
                    answer["arrConverted"] = .object(MetricsRendering.converted(arr, rates))
                }
                return answer
            }, completion: completion)
    }

    package struct Series: Sendable {
        package var name: MetricName
        package var interval: MetricsInterval
        package var filter: Filter
        package var from: Int64
        package var to: Int64
        package var factsReadAt: Int64
        package var buckets: [(start: Int64, value: MetricValue)]
    }

    package func series(
        _ name: MetricName, from: Int64, to: Int64, interval: MetricsInterval, filter: Filter, now: Int64,
        completion: @escaping @Sendable (Result<Series, any Error>) -> Void
    ) {
        guard from < to else { return completion(.failure(ServiceError.badRequest("from must be before to"))) }
        guard let buckets = interval.buckets(from: from, to: to, limit: Self.maximumBuckets) else {
            return completion(
                .failure(
                    ServiceError.badRequest("at most \(Self.maximumBuckets) buckets in one series (a longer interval, or a shorter range)"))
            )
        }
        pool.run(
            {
                let (readAt, metrics) = try self.metrics(filter, now: now)
                let values = buckets.map { bucket in
                    (bucket.start, metrics.value(name, start: max(bucket.start, from), end: min(bucket.end, to), now: now))
                }
                return Series(
                    name: name, interval: interval, filter: filter, from: from, to: to, factsReadAt: readAt, buckets: values)
            }, completion: completion)
    }

    // MARK: - The facts

    private func metrics(_ filter: Filter, now: Int64) throws -> (Int64, BusinessMetrics) {
        let (readAt, all) = try subscriptions(environment: filter.environment, now: now)
        let products = app.products
        let kept: [MetricsSubscription] = all.compactMap { subscription in
            if let store = filter.store, subscription.store != store { return nil }
            var subscription = subscription
            if let productId = filter.productId { subscription.periods.removeAll { $0.productId != productId } }
            if let group = filter.subscriptionGroup {
                subscription.periods.removeAll { products[$0.productId]?.subscriptionGroup != group }
            }
            return subscription.periods.isEmpty ? nil : subscription
        }
        return (readAt, BusinessMetrics(subscriptions: kept, configuredPeriods: products.compactMapValues(\.period)))
    }

    private func subscriptions(environment: String, now: Int64) throws -> (Int64, [MetricsSubscription]) {
        try walking.withLock { _ in
            if let hit = cached.withLock({ $0[environment] }), now - hit.at < Self.cacheSeconds * 1000 {
                return (hit.at, hit.subscriptions)
            }
            var subscriptions: [MetricsSubscription] = []
            try store.eachSubscriptionPage(appId: app.id, environment: environment) { subscriptions += $0.map(MetricsSubscription.init) }
            cached.withLock { $0[environment] = (now, subscriptions) }
            return (now, subscriptions)
        }
    }
}
