/// One notification as stored (the audit trail of `GET /v1/notifications`).
package struct StoredNotification: Sendable, Equatable {
    package var notificationUUID: String
    package var appId: String
    package var environment: String
    package var notificationType: String
    package var subtype: String?
    package var signedDate: Int64
    package var receivedAt: Int64
    package var originalTransactionId: String?
    /// Apple's signed payload; for a Google notification, the developer notification as JSON.
    package var jws: String
    /// `app_store`, or `play_store` for a Google real-time developer notification: its
    /// `notificationUUID` is then `pubsub:<appId>:<messageId>`, its type Google's name
    /// (`SUBSCRIPTION_RENEWED`, …), `signedDate` its `eventTimeMillis`, and
    /// `originalTransactionId` the purchase token it names.
    package var store = "app_store"
    /// Order of arrival, assigned by the store (for paging).
    package var sequence: Int64 = 0

    package init(
        notificationUUID: String, appId: String, environment: String, notificationType: String, subtype: String?,
        signedDate: Int64, receivedAt: Int64, originalTransactionId: String?, jws: String
    ) {
        self.notificationUUID = notificationUUID
        self.appId = appId
        self.environment = environment
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.receivedAt = receivedAt
        self.originalTransactionId = originalTransactionId
        self.jws = jws
    }
}

/// Everything verified facts add in one atomic step: a notification (stored once per UUID), the
/// transactions and renewal info it or a client carried, signals, and subscriber links.
package struct FactBatch: Sendable {
    package var appId: String
    package var environment: String
    package var notification: StoredNotification?
    package var transactions: [(record: TransactionRecord, jws: String)] = []
    package var renewal: (record: RenewalRecord, jws: String)?
    package var signals: [(originalTransactionId: String, signal: SubscriptionSignal)] = []
    /// A client's request to link an untokened subscription to its account token.
    package var requestedLink: (originalTransactionId: String, appAccountToken: String)?
    /// Whether a requested link to another token than the existing one moves the subscription
    /// (recorded as a `LinkTransfer` at `requestedAt`) instead of being refused.
    package var transfersLink = false
    package var requestedAt: Int64 = 0
    /// Queue a Set App Account Token call for the requested link, in the same transaction (so a
    /// crash after the commit cannot lose it).
    package var queuesTokenCall = false
    /// Queue a Finish Transaction call for each one-time purchase the batch stores for the first
    /// time (`appStoreServerAPI.finishTransactions`: the server delivers the content).
    package var finishesPurchases = false
    /// The end of a queued Apple call: done (nil) or to be tried again at the instant given.
    package var appleCallOutcome: (kind: PendingAppleCall.Kind, transactionId: String, retryAt: Int64?)?
    /// The transaction-history `revision` reached by a sync, stored with the facts it brought.
    package var syncRevision: (originalTransactionId: String, revision: String)?
    /// Where the facts came from, as events name it: the notification's UUID, `clientPost`,
    /// `sync` or `backfill`.
    package var source = "clientPost"
    /// Derives the events the batch causes and writes them in its transaction (nil: none).
    package var eventWriter: (any EventWriting)?
    /// A stored notification to pass on (written as a delivery in the same transaction).
    package var forward: ForwardedNotification?
    /// The id of a `TEST` event asked for by `POST /v1/webhooks/test` (the batch carries no facts).
    package var webhookTestId: String?
    /// A promotional grant given, or revoked (the same id stored again with `revokedAt`).
    package var grant: PromotionalGrant?
    /// Attributes an app set on its customer: each name to its new value, or nil to remove it.
    package var attributes: (appAccountToken: String, changes: [String: String?])?
    /// An experiment made or changed (started, stopped, shipped) by an admin.
    package var experiment: Experiment?
    /// A customer's first exposure to an experiment (stored once: a later one changes nothing).
    package var enrollment: ExperimentAssignment?
    /// What the app reported of a paywall (`POST …/paywall-events`).
    package var paywallEvent: PaywallEvent?
    /// An app download an app posted for its customer (replaces the customer's download of its
    /// environment).
    package var appDownload: AppDownload?
    /// Google Play purchases as just read from Google, with Google's answer as text.
    package var playPurchases: [(purchase: PlayPurchase, json: String)] = []
    /// The Pub/Sub message that brought them: stored once; the same id again is a duplicate.
    package var pubsubMessageId: String?
    /// The end of a queued Google acknowledgement: done (nil) or to be tried again at the
    /// instant given.
    package var acknowledgementOutcome: (purchaseToken: String, retryAt: Int64?)?
    /// Consent for the app withdrawn on a device (`RESCIND_CONSENT`): the notification is all
    /// that is stored; this names whom it concerns, for its event.
    package var consentRescinded: ConsentRescission?
    /// The app's evidence of use, recorded (`POST …/usage`).
    package var usage: [UsageRecord] = []
    /// Support's instruction for a customer's refund reviews, set (or removed: nil).
    package var refundOverride: (appAccountToken: String, override: RefundOverride?)?
    /// A store's refund request, stored once with the notification that brought it.
    package var refundRequest: RefundRequest?
    /// A queued request as it stands after an attempt to answer it.
    package var refundRequestUpdate: RefundRequest?
    /// What the store decided (`REFUNDED`, `DECLINED`) of the purchase's open request.
    package var refundOutcome: (transactionId: String?, purchaseToken: String?, outcome: String, at: Int64)?
    /// A retention request of Apple's and the answer given, stored once per request identifier.
    package var retention: RetentionRecord?
    /// The app's `offerCooldownDays` in milliseconds: a promotional offer in `retention` is written
    /// only when none was answered to its subscription within it (`RetentionRecord.refusal`).
    package var retentionOfferCooldown: Int64 = 0
    /// `entitle metrics rebuild`: forget the environment's metric moments and day sums first …
    package var clearsMetrics = false
    /// … then compute these subscriptions' moments again from their stored facts.
    package var metricsRecomputed: [String] = []
    /// … and these Google Play purchases' (by purchase token).
    package var playMetricsRecomputed: [String] = []

    package init(appId: String, environment: String) {
        self.appId = appId
        self.environment = environment
    }
}

package enum ApplyOutcome: Sendable, Equatable {
    case applied
    /// The notification's UUID was already stored: nothing was applied again.
    case duplicateNotification
    /// The subscription is linked to another account token: nothing was applied.
    case linkConflict(existingToken: String)
    /// A retention answer whose request identifier is stored: the stored answer stands.
    case retentionAlreadyAnswered
    /// A retention answer with a promotional offer, while another offer answered to the same
    /// subscription is within the cooldown (two requests decided at once): nothing was written.
    case retentionOfferCooling
    /// Applied, and the subscription moved from the token it was linked to.
    case transferred(from: String)
}

/// A call Entitle owes the App Store Server API, queued durably in the write that causes it and
/// made (again) until Apple takes it.
package struct PendingAppleCall: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        /// Set App Account Token: a client linked an untokened subscription.
        case setAppAccountToken = "set_app_account_token"
        /// Finish Transaction: the server, not the app, delivered a one-time purchase.
        case finishTransaction = "finish_transaction"
    }

    package var appId: String
    package var environment: String
    package var kind: Kind
    /// What the call names: the subscription's original transaction id (Set App Account Token),
    /// the purchase's transaction id (Finish Transaction).
    package var transactionId: String
    /// The token Set App Account Token sends; nil for Finish Transaction.
    package var appAccountToken: String?
    package var attempts: Int

    package init(
        appId: String, environment: String, kind: Kind, transactionId: String, appAccountToken: String? = nil, attempts: Int = 0
    ) {
        self.appId = appId
        self.environment = environment
        self.kind = kind
        self.transactionId = transactionId
        self.appAccountToken = appAccountToken
        self.attempts = attempts
    }
}

/// A subscription moved from one appAccountToken to another (`transferPolicy: transfer`).
package struct LinkTransfer: Sendable, Equatable {
    package var originalTransactionId: String
    package var from: String
    package var to: String
    package var at: Int64

    package init(originalTransactionId: String, from: String, to: String, at: Int64) {
        self.originalTransactionId = originalTransactionId
        self.from = from
        self.to = to
        self.at = at
    }
}

/// All stored facts of one subscription in one environment.
package struct SubscriptionFacts: Sendable, Equatable {
    package var originalTransactionId: String
    package var environment: String
    package var appAccountToken: String?
    package var transactions: [TransactionRecord]
    package var renewal: RenewalRecord?
    package var signals: [SubscriptionSignal]

    package init(
        originalTransactionId: String, environment: String, appAccountToken: String?, transactions: [TransactionRecord],
        renewal: RenewalRecord?, signals: [SubscriptionSignal]
    ) {
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.appAccountToken = appAccountToken
        self.transactions = transactions
        self.renewal = renewal
        self.signals = signals
    }
}

/// Durable storage of verified facts. The domain defines it; `Storage` implements it twice, on
/// SQLite and on PostgreSQL, and tests run on those (`makeTemporaryStore`). Implementations
/// block: call them off the event loops.
package protocol FactStore: Sendable {
    /// Writes the batch atomically through `FactWriter`; when it returns, the facts and the
    /// events they caused are durable.
    func write(_ batch: FactBatch) throws -> AppliedBatch
    /// The same without blocking the caller: `completion` runs (on a store thread) once the batch
    /// is durable or has failed. Event loops use this.
    func write(_ batch: FactBatch, completion: @escaping @Sendable (Result<AppliedBatch, any Error>) -> Void)
    /// Every subscription (and non-subscription purchase) linked to `appAccountToken`.
    func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts]
    func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts?
    /// The last transaction-history `revision` synced for a subscription.
    func syncRevision(appId: String, environment: String, originalTransactionId: String) throws -> String?
    /// The subscription a transaction belongs to, by any of its transaction ids.
    func originalTransactionId(appId: String, environment: String, transactionId: String) throws -> String?
    /// The answer a retention request got, by Apple's request identifier.
    func retentionRecord(appId: String, requestIdentifier: String) throws -> RetentionRecord?
    /// The retention answers of a subscription, oldest first.
    func retentionRecords(appId: String, environment: String, originalTransactionId: String) throws -> [RetentionRecord]
    /// The customer's usage records, oldest first.
    func usage(appId: String, appAccountToken: String) throws -> [UsageRecord]
    func refundOverride(appId: String, appAccountToken: String) throws -> RefundOverride?
    /// Refund requests, newest first.
    func refundRequests(appId: String, limit: Int) throws -> [RefundRequest]
    /// Pending refund requests whose next attempt is due at `now`.
    func dueRefundRequests(appId: String, now: Int64, limit: Int) throws -> [RefundRequest]
    /// Queued Apple calls of an app that are due at `now`, the longest due first.
    func dueAppleCalls(appId: String, now: Int64, limit: Int) throws -> [PendingAppleCall]
    /// The subscription moves into or out of `appAccountToken`, oldest first.
    func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer]
    /// Everything a subscriber view of `appAccountToken` shows in `environments` (its subscriptions
    /// with a transaction, moves and grants there, and its Play purchases): one read.
    func subscriber(appId: String, environments: [String], appAccountToken: String) throws -> SubscriberFacts
    /// The subscriptions whose transactions or renewal info carry `appTransactionId`.
    func originalTransactionIds(appId: String, environment: String, appTransactionId: String) throws -> [String]
    /// The app's experiments, oldest first.
    func experiments(appId: String) throws -> [Experiment]
    /// The experiments the customer is enrolled in.
    func experimentAssignments(appId: String, appAccountToken: String) throws -> [ExperimentAssignment]
    /// How many customers each variant of an experiment has enrolled, by variant id.
    func enrollmentCounts(appId: String, experiment: String) throws -> [String: Int64]
    /// The attributes the app set on its customer, by name.
    func attributes(appId: String, appAccountToken: String) throws -> [CustomerAttribute]
    /// The customer's app downloads (`AppDownload`), by environment.
    func appDownloads(appId: String, appAccountToken: String) throws -> [AppDownload]
    /// The customers who posted the download `appTransactionId` in `environment` (several devices
    /// of one Apple Account may each have a token of their own).
    func appDownloadTokens(appId: String, environment: String, appTransactionId: String) throws -> [String]
    /// Newest first; `before` is a sequence number for paging.
    func notifications(appId: String, limit: Int, before: Int64?) throws -> [StoredNotification]
    /// A cheap query proving the store answers (for `/readyz`).
    func checkHealth() throws
    /// The stored rows its reads met and could not read (left out of their answers).
    var unreadableRows: UnreadableRows { get }

    // MARK: Events and deliveries (the outbox)

    /// Events after `sequence`, oldest first.
    func events(appId: String, after sequence: Int64, limit: Int) throws -> [OutboxEvent]
    func event(appId: String, id: String) throws -> OutboxEvent?
    /// Takes up to `limit` due deliveries of one endpoint for this caller: they stay pending, not
    /// due again before `leaseUntil` (a crashed deliverer's claims come back then).
    func claimDeliveries(appId: String, endpoint: String, now: Int64, leaseUntil: Int64, limit: Int) throws -> [WebhookDelivery]
    func record(_ outcomes: [DeliveryOutcome]) throws
    /// Newest first; `status` nil lists all.
    func deliveries(appId: String, status: WebhookDelivery.Status?, limit: Int) throws -> [WebhookDelivery]
    /// Writes `rearming` (`WebhookDelivery.rearmed(at:)`) over a delivery; nil when unknown.
    func retryDelivery(appId: String, id: String, _ rearming: WebhookDelivery.Rearming) throws -> WebhookDelivery?
    func deliveryBacklog(appId: String) throws -> DeliveryBacklog
    /// Writes `abandonment` (`WebhookDelivery.abandoned(at:)`) over the pending deliveries to
    /// endpoints not in `endpoints`; returns how many.
    func abandonDeliveries(appId: String, keeping endpoints: Set<String>, _ abandonment: WebhookDelivery.Abandonment) throws -> Int

    // MARK: Support (grants, a customer's history, the overview)

    /// A customer's promotional grants in one environment, oldest first.
    func grants(appId: String, environment: String, appAccountToken: String) throws -> [PromotionalGrant]
    func grant(appId: String, id: String) throws -> PromotionalGrant?
    /// The app's grants that have not expired at `now` (a narrowing on an indexed column: which
    /// of them are active is `PromotionalGrant.isActive(at:)`'s to say; `activeGrants` asks it).
    func grants(appId: String, unexpiredAt now: Int64) throws -> [PromotionalGrant]
    /// The stored signed copies of one subscription: each transaction's newest, the renewal info.
    func signedFacts(appId: String, environment: String, originalTransactionId: String) throws -> [SignedFact]
    /// The notifications about one subscription, oldest first.
    func notifications(appId: String, environment: String, originalTransactionId: String) throws -> [StoredNotification]
    /// The events about one subscription, or naming one customer, oldest first.
    func events(appId: String, originalTransactionId: String) throws -> [OutboxEvent]
    func events(appId: String, appAccountToken: String) throws -> [OutboxEvent]
    /// Every delivery of one event, oldest first.
    func deliveries(appId: String, eventId: String) throws -> [WebhookDelivery]
    /// The subscriptions of an environment with their facts, by original transaction id, `limit`
    /// after `after` (walking every subscription for the overview, a page at a time).
    func subscriptions(appId: String, environment: String, after: String?, limit: Int) throws -> [SubscriptionFacts]
    /// The day sums of an environment's business figures, from `fromDay` (days since 1970) on.
    func metricSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)]
    /// The same of the stock figures alone (active, trials, MRR): what a read at one instant needs.
    func metricStockSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)]
    /// The hour or minute sums of an environment's business figures (`MetricsInstant`), the key's
    /// `day` being the bucket's number, for the buckets in `buckets`.
    func metricBucketSums(
        appId: String, environment: String, width: MetricBucketWidth, buckets: ClosedRange<Int64>
    ) throws -> [(key: MetricDayKey, value: Int64)]
    /// The totals per key (its `day` unused) of an environment's hour or minute sums, over `stocks`
    /// for the stock figures and over `flows` for the others (`MetricsInstant`): what a read of
    /// the figures at an instant adds up, whatever its day holds.
    func metricBucketTotals(
        appId: String, environment: String, width: MetricBucketWidth, stocks: MetricBucketSpan, flows: MetricBucketSpan
    ) throws -> [(key: MetricDayKey, value: Int64)]
    /// The environment's metric moments whose instant is in [from, to).
    func metricMoments(appId: String, environment: String, from: Int64, to: Int64) throws -> [StoredMetricMoment]
    /// Notifications received since `since`, counted per `width` (`NotificationCount.hour`),
    /// environment and type, in the order of the hours, then the types.
    func notificationCounts(appId: String, since: Int64, width: Int64) throws -> [NotificationCount]

    // MARK: Google Play

    /// A customer's Play purchases in every environment, oldest first.
    func playPurchases(appId: String, appAccountToken: String) throws -> [PlayPurchase]
    func playPurchase(appId: String, purchaseToken: String) throws -> PlayPurchase?
    /// Whether a Pub/Sub message was applied already (a redelivery need not ask Google again).
    func hasPubSubMessage(appId: String, messageId: String) throws -> Bool
    /// The purchase a Google order id (`GPA.…`, from the customer's receipt) belongs to.
    func playPurchase(appId: String, orderId: String) throws -> PlayPurchase?
    /// Google's answer as last read, as text (a customer's history shows it).
    func playPurchaseAnswer(appId: String, purchaseToken: String) throws -> String?
    /// Every Play purchase of the app in token order, `limit` after `after` (the overview's walk).
    func playPurchases(appId: String, after: String?, limit: Int) throws -> [PlayPurchase]
    /// Acknowledgements of the app due at `now`, the earliest first.
    func dueAcknowledgements(appId: String, now: Int64, limit: Int) throws -> [PendingAcknowledgement]
    /// How many purchases of the app wait for their acknowledgement since before `queuedBefore`.
    func pendingAcknowledgements(appId: String, queuedBefore: Int64) throws -> Int
}

/// A batch as written: how it came out and the events its transaction put in the outbox.
package struct AppliedBatch: Sendable {
    package var outcome: ApplyOutcome
    package var events: [OutboxEvent]
    /// Whether the transaction put anything in the outbox: events, or a notification to pass on
    /// (which a duplicate never is).
    package var wroteToOutbox: Bool

    package init(outcome: ApplyOutcome, events: [OutboxEvent], forwards: Bool) {
        self.outcome = outcome
        self.events = events
        switch outcome {
        case .applied, .transferred: wroteToOutbox = !events.isEmpty || forwards
        case .duplicateNotification, .linkConflict, .retentionAlreadyAnswered, .retentionOfferCooling: wroteToOutbox = false
        }
    }
}

extension FactStore {
    /// The subscriber, read part by part (stores whose reads are local and cheap).
    package func subscriber(appId: String, environments: [String], appAccountToken: String) throws -> SubscriberFacts {
        try SubscriberFacts.assembled(
            appAccountToken, environments: environments,
            facts: { try facts(appId: appId, environment: $0, appAccountToken: appAccountToken) },
            transfers: { try linkTransfers(appId: appId, environment: $0, appAccountToken: appAccountToken) },
            grants: { try grants(appId: appId, environment: $0, appAccountToken: appAccountToken) },
            playPurchases: { try playPurchases(appId: appId, appAccountToken: appAccountToken) },
            downloads: { try appDownloads(appId: appId, appAccountToken: appAccountToken) },
            assignments: { try experimentAssignments(appId: appId, appAccountToken: appAccountToken) })
    }

    /// For stores whose writes are quick and in memory: write now, then call back.
    package func write(_ batch: FactBatch, completion: @escaping @Sendable (Result<AppliedBatch, any Error>) -> Void) {
        completion(Result { try write(batch) })
    }

    /// Grants of every environment active at `now` (`PromotionalGrant.isActive(at:)`).
    package func activeGrants(appId: String, at now: Int64) throws -> [PromotionalGrant] {
        try grants(appId: appId, unexpiredAt: now).filter { $0.isActive(at: now) }
    }

    /// The batch's outcome alone (tools, tests and writes that cause no events).
    package func apply(_ batch: FactBatch) throws -> ApplyOutcome { try write(batch).outcome }
}
