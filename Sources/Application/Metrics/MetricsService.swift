package import Entitlements
import Instants
package import JSON

/// `GET /v1/metrics/summary` and `GET /v1/metrics/{name}`: the business figures of
/// docs/METRICS.md, per environment, read on the blocking pool from the day sums the writer keeps
/// in the facts' commit (`MetricsLedger`): the sums from the first day asked on, and the moments
/// of the day an instant asked falls in. What a read costs depends on the days asked, not on how
/// many subscriptions there are.
package final class MetricsService: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let exchangeRates: ExchangeRates?
    /// `metrics.enabled`: off, the writer keeps no figures and there are none to read.
    let enabled: Bool
    /// At most this many buckets in one series.
    package static let maximumBuckets = 1000

    init(_ context: AppContext, settings: MetricsSettings) {
        app = context.app
        store = context.store
        pool = context.pool
        exchangeRates = settings.exchangeRates
        enabled = settings.enabled
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
        guard enabled else { return completion(.failure(Self.turnedOff)) }
        pool.run(
            {
                let metrics = try self.ledger(filter, firstDay: Self.day(at), instant: at, flows: false)
                var answer: JSONObject = ["environment": .string(filter.environment)]
                Timestamps.set(&answer, "at", at)
                Timestamps.set(&answer, "factsReadAt", now)
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

    /// Whole buckets: those that overlap [from, to), each with its figure over the whole bucket.
    package func series(
        _ name: MetricName, from: Int64, to: Int64, interval: MetricsInterval, filter: Filter, now: Int64,
        completion: @escaping @Sendable (Result<Series, any Error>) -> Void
    ) {
        guard enabled else { return completion(.failure(Self.turnedOff)) }
        guard from < to else { return completion(.failure(ServiceError.badRequest("from must be before to"))) }
        guard let buckets = interval.buckets(from: from, to: to, limit: Self.maximumBuckets), let first = buckets.first else {
            return completion(
                .failure(
                    ServiceError.badRequest("at most \(Self.maximumBuckets) buckets in one series (a longer interval, or a shorter range)"))
            )
        }
        pool.run(
            {
                let metrics = try self.ledger(filter, firstDay: min(Self.day(first.start), Self.day(now)), instant: now)
                let values = buckets.map { bucket in (bucket.start, metrics.value(name, start: bucket.start, end: bucket.end, now: now)) }
                return Series(name: name, interval: interval, filter: filter, from: from, to: to, factsReadAt: now, buckets: values)
            }, completion: completion)
    }

    private static let turnedOff = ServiceError.notFound(
        "the business figures are turned off (metrics.enabled is false in the configuration)")

    // MARK: - The day sums

    private static func day(_ instant: Int64) -> Int64 { instant.floorDivided(by: MetricMoment.dayMs) }

    /// The day sums from `firstDay` on and what stands for the day of `instant` at it (its hours',
    /// ten minutes' and minutes' sums and its minute's moments, `MetricsInstant`: a read costs the
    /// same however many facts that day holds), as the filter sees them; `flows` false for a read
    /// of the stocks at `instant` alone (the summary).
    private func ledger(_ filter: Filter, firstDay: Int64, instant: Int64, flows: Bool = true) throws -> MetricsLedger {
        let (appId, environment) = (app.id, filter.environment)
        let sums =
            try flows
            ? store.metricSums(appId: appId, environment: environment, fromDay: firstDay)
            : store.metricStockSums(appId: appId, environment: environment, fromDay: firstDay)
        var moments = try MetricsInstant.standing(
            at: instant, flows: flows,
            totals: { width, spans in
                try store.metricBucketTotals(appId: appId, environment: environment, width: width, stocks: spans.stocks, flows: spans.flows)
            },
            moments: { from, to in try store.metricMoments(appId: appId, environment: environment, from: from, to: to) })
        let momentDays: Set<Int64> = [Self.day(instant)]
        let products = app.products
        // Google Play's products are kept as Google names them: read as the catalog's.
        var playCatalog: [String: String] = [:]
        func product(_ store: String, _ kept: String) -> String {
            guard store == MetricsSubscription.playStore, !kept.isEmpty else { return kept }
            if let known = playCatalog[kept] { return known }
            let catalog = MetricsSubscription.catalogProductId(ofPlay: kept, in: products) ?? kept
            playCatalog[kept] = catalog
            return catalog
        }
        let catalogSums = sums.map { sum in
            var key = sum.key
            key.productId = product(key.store, key.productId)
            return (key: key, value: sum.value)
        }
        for index in moments.indices { moments[index].moment.productId = product(moments[index].store, moments[index].moment.productId) }
        return MetricsLedger(
            firstDay: firstDay, sums: catalogSums, momentDays: momentDays, moments: moments,
            configuredPeriods: products.compactMapValues(\.period),
            includes: { store, productId in
                (filter.store.map { $0 == store } ?? true) && (filter.productId.map { $0 == productId } ?? true)
                    && (filter.subscriptionGroup.map { products[productId]?.subscriptionGroup == $0 } ?? true)
            })
    }
}
