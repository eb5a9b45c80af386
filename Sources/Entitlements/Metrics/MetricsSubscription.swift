/// One subscription as the business figures see it (docs/METRICS.md): its periods in time order
/// and what its renewal info says about how it ended. Built from stored facts by
/// `MetricsSubscription.init(_:store:)`; the figures are functions of a list of these.
package struct MetricsSubscription: Sendable, Equatable {
    /// `app_store` or `play_store`.
    package var store: String
    package static let appStore = "app_store"
    package static let playStore = "play_store"

    package var periods: [MetricsPeriod]
    /// One-time purchases kept under the same key (an App Store consumable, non-consumable or
    /// non-renewing subscription, a Play one-time product): revenue, refunds and the refund rate
    /// count them; the subscription figures do not.
    package var purchases: [MetricsPurchase] = []
    /// Renewal info: a grace period that carries the last period on, billing retry in progress,
    /// auto-renew turned off, and Apple's `expirationIntent` (1 voluntary, 2 billing).
    package var gracePeriodExpiresDate: Int64?
    package var isInBillingRetry: Bool
    package var autoRenewOff: Bool
    package var expirationReason: Int64?

    package init(
        store: String, periods: [MetricsPeriod], gracePeriodExpiresDate: Int64? = nil, isInBillingRetry: Bool = false,
        autoRenewOff: Bool = false, expirationReason: Int64? = nil
    ) {
        self.store = store
        self.periods = periods.sorted { ($0.start, $0.transactionId) < ($1.start, $1.transactionId) }
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.isInBillingRetry = isInBillingRetry
        self.autoRenewOff = autoRenewOff
        self.expirationReason = expirationReason
    }

    /// An App Store subscription's facts: each transaction with an `expiresDate` is a period (an
    /// upgraded one ends where the next begins); a free trial is `offerDiscountType` `FREE_TRIAL`.
    package init(_ facts: SubscriptionFacts) {
        let ordered = facts.transactions.filter { $0.expiresDate != nil }.sorted {
            ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId)
        }
        var periods: [MetricsPeriod] = []
        // A family member's copy was paid for by the organizer, whose own transaction counts.
        let oneTime = facts.transactions.filter { $0.expiresDate == nil && $0.ownershipType != "FAMILY_SHARED" }
        let purchases = oneTime.map { transaction in
            MetricsPurchase(
                productId: transaction.productId, at: transaction.purchaseDate,
                priceMilliunits: transaction.price ?? 0, currency: transaction.currency ?? "", refundedAt: transaction.revocationDate,
                refundedMilliunits: transaction.refundedMilliunits)
        }
        for (index, transaction) in ordered.enumerated() {
            guard let expires = transaction.expiresDate else { continue }
            var end = expires
            if transaction.isUpgraded, index + 1 < ordered.count { end = min(end, ordered[index + 1].purchaseDate) }
            periods.append(
                MetricsPeriod(
                    transactionId: transaction.transactionId, productId: transaction.productId, start: transaction.purchaseDate,
                    end: max(end, transaction.purchaseDate), isTrial: transaction.offerDiscountType == "FREE_TRIAL",
                    priceMilliunits: transaction.price ?? 0, currency: transaction.currency ?? "", refundedAt: transaction.revocationDate))
        }
        let renewal = facts.renewal
        self.init(
            store: Self.appStore, periods: periods, gracePeriodExpiresDate: renewal?.gracePeriodExpiresDate,
            isInBillingRetry: renewal?.isInBillingRetryPeriod ?? false, autoRenewOff: renewal?.autoRenewStatus == 0,
            expirationReason: renewal?.expirationIntent)
        self.purchases = purchases
    }

    /// A Google Play purchase. A one-time product is one purchase at its order's price, refunded
    /// whole by a void. A subscription: the periods Entitle has seen (`PlayPeriod`); a void refunds
    /// the latest. Google's state says how it ended: on hold is billing retry, expired while
    /// still renewing is a billing failure, auto-renew off is the customer's choice.
    package init(play purchase: PlayPurchase) {
        guard purchase.kind == .subscription else {
            self.init(store: Self.playStore, periods: [])
            if let price = purchase.details.price, let currency = purchase.details.priceCurrency,
                purchase.googleState != "PENDING", purchase.googleState != "CANCELLED"
            {
                purchases = [
                    MetricsPurchase(
                        productId: purchase.productId, at: purchase.startTime,
                        priceMilliunits: price, currency: currency, refundedAt: purchase.voidedAt)
                ]
            }
            return
        }
        let periods = purchase.details.periods.map { period in
            MetricsPeriod(
                transactionId: period.orderId, productId: Self.playProductId(purchase.productId, basePlanId: purchase.basePlanId),
                start: period.start,
                end: period.end, isTrial: period.isTrial, priceMilliunits: period.priceMilliunits, currency: period.currency)
        }
        var metrics = MetricsSubscription(
            store: Self.playStore, periods: periods, isInBillingRetry: purchase.googleState == "SUBSCRIPTION_STATE_ON_HOLD",
            autoRenewOff: !purchase.autoRenewing,
            expirationReason: purchase.googleState == "SUBSCRIPTION_STATE_EXPIRED" && purchase.autoRenewing ? 2 : nil)
        if let voided = purchase.voidedAt, let last = metrics.periods.indices.last { metrics.periods[last].refundedAt = voided }
        self = metrics
    }

    /// A Play product as the figures keep it: Google's product and base plan (`pro:monthly`; a
    /// colon is in neither's alphabet), mapped to the catalog's product when read, so that a
    /// catalog change needs no rebuild.
    package static func playProductId(_ productId: String, basePlanId: String?) -> String {
        basePlanId.map { "\(productId):\($0)" } ?? productId
    }

    /// The catalog product a kept Play product id is, when the catalog maps it.
    package static func catalogProductId(ofPlay kept: String, in products: [String: CatalogProduct]) -> String? {
        let parts = kept.split(separator: ":", maxSplits: 1).map(String.init)
        return products.catalogId(playProduct: parts[0], basePlanId: parts.count > 1 ? parts[1] : nil)
    }

    /// The last period, carried on to the end of its grace period when renewal info grants one:
    /// a period in grace counts as paid (billing retry does not).
    package func effectiveEnd(of index: Int) -> Int64 {
        let period = periods[index]
        var end = period.end
        if index == periods.count - 1, !period.isTrial, let grace = gracePeriodExpiresDate, grace > end { end = grace }
        if let refunded = period.refundedAt { end = min(end, max(refunded, period.start)) }
        return end
    }
}

/// One period of a subscription: a transaction's `[purchaseDate, expiresDate)`.
package struct MetricsPeriod: Sendable, Equatable {
    package var transactionId: String
    package var productId: String
    package var start: Int64
    package var end: Int64
    package var isTrial: Bool
    /// The store's price in milliunits of `currency` (Apple's `price`).
    package var priceMilliunits: Int64
    package var currency: String
    package var refundedAt: Int64?

    package init(
        transactionId: String, productId: String, start: Int64, end: Int64, isTrial: Bool, priceMilliunits: Int64, currency: String,
        refundedAt: Int64? = nil
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.start = start
        self.end = end
        self.isTrial = isTrial
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.refundedAt = refundedAt
    }
}

/// One one-time purchase as the figures see it: paid at `at`, perhaps refunded later (all of it,
/// or the prorated share `TransactionRecord.refundedMilliunits` says).
package struct MetricsPurchase: Sendable, Equatable {
    package var productId: String
    package var at: Int64
    package var priceMilliunits: Int64
    package var currency: String
    package var refundedAt: Int64?
    /// What the refund gave back (the price when not said).
    package var refundedMilliunits: Int64?

    package init(
        productId: String, at: Int64, priceMilliunits: Int64, currency: String, refundedAt: Int64? = nil, refundedMilliunits: Int64? = nil
    ) {
        self.productId = productId
        self.at = at
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.refundedAt = refundedAt
        self.refundedMilliunits = refundedMilliunits
    }
}
