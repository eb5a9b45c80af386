/// What a store does inside the transaction that writes one batch, and nothing more: read the
/// stored facts, put rows, insert rows that must be new. Every decision (what is new, which copy
/// wins, what a duplicate is, which events follow) is `FactWriter`'s, so the stores cannot drift
/// apart; a store keeps only its SQL, its transactions and its group commit.
///
/// Every call is scoped to the app the transaction was opened for. `put…` replaces the row of
/// the same key (or adds it); `insert…IfNew` adds a row only when its key is not stored and says
/// whether it did.
package protocol FactWriteTransaction: FactReading {
    /// Serializes this transaction with every other one writing any of `keys` (sorted), until it
    /// ends. A store with a single writer has nothing to do.
    func lock(_ keys: [String]) throws

    func insertNotificationIfNew(_ notification: StoredNotification) throws -> Bool
    func insertPubSubMessageIfNew(_ messageId: String, receivedAt: Int64) throws -> Bool

    func putTransaction(_ record: TransactionRecord, jws: String) throws
    func putRenewal(_ record: RenewalRecord, jws: String) throws
    func putAppTransaction(environment: String, originalTransactionId: String, appTransactionId: String) throws
    /// Adds a signal; the writer never adds one already stored.
    func insertSignal(environment: String, originalTransactionId: String, _ signal: SubscriptionSignal) throws
    func putLink(environment: String, originalTransactionId: String, appAccountToken: String) throws
    func insertTransfer(environment: String, _ transfer: LinkTransfer) throws

    /// An Apple call due at `dueAt`, replacing any of its kind queued for the same transaction.
    func putAppleCall(_ call: PendingAppleCall, dueAt: Int64) throws
    /// The queued call tried once more without success: due again at `retryAt`.
    func rescheduleAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String, retryAt: Int64) throws
    func removeAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String) throws
    func putSyncRevision(environment: String, originalTransactionId: String, revision: String) throws

    /// A retention answer; false when its request identifier is stored (Apple asked again).
    func insertRetentionRecordIfNew(_ record: RetentionRecord) throws -> Bool
    func markRetentionSaved(requestIdentifier: String, at: Int64, how: String) throws
    /// A usage record, unless one with its id is stored: a record is a fact, never rewritten.
    func insertUsage(_ record: UsageRecord) throws
    /// Sets the customer's override, or removes it (nil).
    func putRefundOverride(appAccountToken: String, _ override: RefundOverride?) throws
    /// A new request; false when one with its id is stored (the notification came again).
    func insertRefundRequestIfNew(_ request: RefundRequest) throws -> Bool
    /// A stored request as it now stands (its outcome is kept: `markRefundOutcome` sets it).
    func putRefundRequest(_ request: RefundRequest) throws
    /// The store's decision on the open requests about a transaction or purchase token.
    func markRefundOutcome(transactionId: String?, purchaseToken: String?, outcome: String, at: Int64) throws

    /// A Play purchase with Google's answer as text.
    func putPlayPurchase(_ purchase: PlayPurchase, answer: String) throws
    func putGrant(_ grant: PromotionalGrant) throws
    /// Sets one attribute of the customer (replacing its value), or removes it (`value` nil).
    func putAttribute(appAccountToken: String, name: String, value: String?, at: Int64) throws
    /// Puts an experiment as it stands now.
    func putExperiment(_ experiment: Experiment) throws
    /// Stores a customer's assignment unless they have one in that experiment; whether it was new.
    func insertAssignmentIfNew(_ assignment: ExperimentAssignment) throws -> Bool
    /// Stores what the app reported of a paywall (the same report twice is one).
    func insertPaywallEvent(_ event: PaywallEvent) throws
    /// Replaces the customer's download of its environment.
    func putAppDownload(_ download: AppDownload) throws
    /// Queues a Google acknowledgement unless one is queued for the purchase already.
    func insertAcknowledgementIfNew(_ pending: PendingAcknowledgement) throws
    /// The acknowledgement tried once more without success: due again at `retryAt`.
    func rescheduleAcknowledgement(purchaseToken: String, retryAt: Int64) throws
    func removeAcknowledgement(purchaseToken: String) throws

    /// A subscription's stored metric moments (`subscription`: its original transaction id).
    func metricMoments(environment: String, subscription: String) throws -> [MetricMoment: Int64]
    /// Deletes the change's removed moments, puts its new values, adds its deltas to the day sums.
    func applyMetricMoments(environment: String, subscription: String, store: String, _ change: MetricMomentsChange) throws
    /// Forgets every metric moment and day sum of the environment.
    func clearMetrics(environment: String) throws

    /// The sequence the next event of the app takes. Sequences follow commit order: a store with
    /// several writers holds the app's counter until this transaction ends.
    func nextEventSequence() throws -> Int64
    /// One event, numbered from `nextEventSequence()` on.
    func insertEvent(_ event: OutboxEvent) throws
    /// The app's counter has reached `sequence` (the last event this transaction wrote).
    func eventsWritten(through sequence: Int64) throws
    /// A new delivery, as the domain made it.
    func insertDelivery(_ delivery: NewDelivery) throws
}
