import Instants
import Synchronization

/// A `FactStore` in memory, written through the same `FactWriter` as the SQL stores: for unit
/// tests of the use cases and for trying Entitle without a database file.
package final class InMemoryFactStore: FactStore {
    private struct Key: Hashable { let app: String, environment: String, id: String }

    private struct StoredMoments {
        var store: String
        var moments: [MetricMoment: Int64]
    }

    private struct State {
        var transactions: [Key: TransactionRecord] = [:]
        var renewals: [Key: RenewalRecord] = [:]
        /// The signed text of each stored transaction and renewal info.
        var signed: [Key: String] = [:]
        var signedRenewals: [Key: String] = [:]
        var links: [Key: String] = [:]
        var signals: [Key: [SubscriptionSignal]] = [:]
        var notifications: [StoredNotification] = []
        var revisions: [Key: String] = [:]
        /// Subscription (original transaction id) → its app transaction id.
        var appTransactions: [Key: String] = [:]
        var transfers: [(app: String, environment: String, transfer: LinkTransfer)] = []
        /// By kind and transaction id (`id` is `kind/transactionId`).
        var appleCalls: [Key: (call: PendingAppleCall, nextAt: Int64)] = [:]
        var sequence: Int64 = 0
        var events: [OutboxEvent] = []
        var lastEventSequence: [String: Int64] = [:]
        var deliveries: [WebhookDelivery] = []
        /// Promotional grants by app and id, and the order they were first stored in.
        var grants: [Key: PromotionalGrant] = [:]
        var grantOrder: [Key] = []
        /// Play purchases by app and purchase token, and the Pub/Sub messages applied.
        var playPurchases: [Key: PlayPurchase] = [:]
        var playAnswers: [Key: String] = [:]
        var pubsubMessages: Set<Key> = []
        var acknowledgements: [Key: PendingAcknowledgement] = [:]
        /// Refund reviews: usage by record id, overrides by token, requests by id.
        var usage: [Key: UsageRecord] = [:]
        var refundOverrides: [Key: RefundOverride] = [:]
        var refundRequests: [Key: RefundRequest] = [:]
        /// Retention answers by request identifier.
        var retention: [Key: RetentionRecord] = [:]
        /// Business figures: each subscription's moments (by original transaction id), each
        /// environment's day sums (`id` empty).
        var metricMoments: [Key: StoredMoments] = [:]
        var metricDays: [Key: [MetricDayKey: Int64]] = [:]

        func retention(_ appId: String, _ environment: String, original: String) -> [RetentionRecord] {
            retention.filter { $0.key.app == appId && $0.value.environment == environment && $0.value.originalTransactionId == original }
                .map(\.value).sorted { ($0.answeredAt, $0.requestIdentifier) < ($1.answeredAt, $1.requestIdentifier) }
        }

        func playPurchases(_ appId: String, token: String) -> [PlayPurchase] {
            playPurchases.filter { $0.key.app == appId && $0.value.appAccountToken == token }.map(\.value)
                .sorted { ($0.startTime, $0.purchaseToken) < ($1.startTime, $1.purchaseToken) }
        }

        func grants(_ appId: String, _ environment: String, token: String) -> [PromotionalGrant] {
            grantOrder.filter { $0.app == appId }.compactMap { grants[$0] }.filter {
                $0.environment == environment && $0.appAccountToken == token
            }
        }

        func facts(_ appId: String, _ environment: String, original: String, evenWithoutTransactions: Bool = false) -> SubscriptionFacts? {
            let transactions = self.transactions.filter {
                $0.key.app == appId && $0.key.environment == environment && $0.value.originalTransactionId == original
            }.map(\.value)
            let key = Key(app: appId, environment: environment, id: original)
            guard !transactions.isEmpty || (evenWithoutTransactions && (renewals[key] != nil || signals[key] != nil || links[key] != nil))
            else { return nil }
            return SubscriptionFacts(
                originalTransactionId: original, environment: environment,
                appAccountToken: links[key],
                transactions: transactions.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) },
                renewal: renewals[key], signals: signals[key] ?? [])
        }

        func facts(_ appId: String, _ environment: String, token: String) -> [SubscriptionFacts] {
            links.filter { $0.key.app == appId && $0.key.environment == environment && $0.value == token }.map(\.key.id).sorted()
                .compactMap { facts(appId, environment, original: $0) }
        }

        func transfers(_ appId: String, _ environment: String, token: String) -> [LinkTransfer] {
            transfers.filter {
                $0.app == appId && $0.environment == environment && ($0.transfer.from == token || $0.transfer.to == token)
            }.map(\.transfer)
        }
    }

    private let state = Mutex(State())

    package init() {}

    package func write(_ batch: FactBatch) throws -> AppliedBatch {
        try state.withLock { state in
            // The state moves into the transaction and back, so nothing copies it.
            var taken = State()
            swap(&taken, &state)
            let transaction = Transaction(state: taken, appId: batch.appId)
            defer { state = transaction.finish() }
            let written = try FactWriter.write(batch, into: transaction)
            if !written.undo { transaction.commit() }
            return written.applied
        }
    }

    /// The state inside one write, as `FactWriter` uses it. Each change logs how to undo it, so a
    /// batch that must be undone (or throws) leaves the state as it found it.
    private final class Transaction: FactWriteTransaction {
        private var state: State
        private var undoLog: [(inout State) -> Void] = []
        private var committed = false
        let appId: String

        init(state: State, appId: String) {
            self.state = state
            self.appId = appId
        }

        func rollBack() {
            for undo in undoLog.reversed() { undo(&state) }
            undoLog.removeAll()
        }

        /// The state after the write: rolled back unless the writer got to the end.
        func finish() -> State {
            if !committed { rollBack() }
            var result = State()
            swap(&result, &state)
            return result
        }

        /// Sets one entry of a dictionary of the state, remembering its old value.
        private func set<Value>(_ path: WritableKeyPath<State, [Key: Value]>, _ key: Key, _ value: Value?) {
            let old = state[keyPath: path][key]
            undoLog.append { $0[keyPath: path][key] = old }
            state[keyPath: path][key] = value
        }

        private func key(_ environment: String, _ id: String) -> Key { Key(app: appId, environment: environment, id: id) }

        func facts(environment: String, originalTransactionId: String, storedToken: String??) -> SubscriptionFacts? {
            state.facts(appId, environment, original: originalTransactionId, evenWithoutTransactions: true)
        }

        func facts(environment: String, appAccountToken: String) -> [SubscriptionFacts] {
            state.facts(appId, environment, token: appAccountToken)
        }

        func token(environment: String, originalTransactionId: String) -> String? {
            state.links[key(environment, originalTransactionId)]
        }

        func linkTransfers(environment: String, appAccountToken: String) -> [LinkTransfer] {
            state.transfers(appId, environment, token: appAccountToken)
        }

        func grants(environment: String, appAccountToken: String) -> [PromotionalGrant] {
            state.grants(appId, environment, token: appAccountToken)
        }

        func grant(id: String) -> PromotionalGrant? { state.grants[key("", id)] }

        func playPurchases(appAccountToken: String) -> [PlayPurchase] { state.playPurchases(appId, token: appAccountToken) }

        func playPurchase(token: String) -> PlayPurchase? { state.playPurchases[key("", token)] }

        func lock(_ keys: [String]) {}

        func insertNotificationIfNew(_ notification: StoredNotification) -> Bool {
            guard !state.notifications.contains(where: { $0.notificationUUID == notification.notificationUUID }) else { return false }
            var stored = notification
            state.sequence += 1
            stored.sequence = state.sequence
            state.notifications.append(stored)
            undoLog.append { $0.notifications.removeLast() }
            return true
        }

        func insertPubSubMessageIfNew(_ messageId: String, receivedAt: Int64) -> Bool {
            let messageKey = key("", messageId)
            guard state.pubsubMessages.insert(messageKey).inserted else { return false }
            undoLog.append { $0.pubsubMessages.remove(messageKey) }
            return true
        }

        func metricMoments(environment: String, subscription: String) -> [MetricMoment: Int64] {
            state.metricMoments[key(environment, subscription)]?.moments ?? [:]
        }

        func applyMetricMoments(environment: String, subscription: String, store: String, _ change: MetricMomentsChange) {
            var moments = metricMoments(environment: environment, subscription: subscription)
            for moment in change.removed { moments[moment] = nil }
            for (moment, value) in change.put { moments[moment] = value }
            set(\.metricMoments, key(environment, subscription), StoredMoments(store: store, moments: moments))
            var days = state.metricDays[key(environment, "")] ?? [:]
            for (dayKey, delta) in change.dayDeltas { days[dayKey, default: 0].addSaturating(delta) }
            set(\.metricDays, key(environment, ""), days)
            for width in MetricBucketWidth.allCases {
                var buckets = state.metricDays[key(environment, "\(width)")] ?? [:]
                for (_, bucketKey, delta) in change.bucketDeltas.filter({ $0.width == width }) {
                    buckets[bucketKey, default: 0].addSaturating(delta)
                }
                set(\.metricDays, key(environment, "\(width)"), buckets)
            }
        }

        func clearMetrics(environment: String) {
            for subscription in state.metricMoments.keys where subscription.app == appId && subscription.environment == environment {
                set(\.metricMoments, subscription, nil)
            }
            set(\.metricDays, key(environment, ""), nil)
            for width in MetricBucketWidth.allCases { set(\.metricDays, key(environment, "\(width)"), nil) }
        }

        func putTransaction(_ record: TransactionRecord, jws: String) {
            set(\.transactions, key(record.environment, record.transactionId), record)
            set(\.signed, key(record.environment, record.transactionId), jws)
        }

        func putRenewal(_ record: RenewalRecord, jws: String) {
            set(\.renewals, key(record.environment, record.originalTransactionId), record)
            set(\.signedRenewals, key(record.environment, record.originalTransactionId), jws)
        }

        func putAppTransaction(environment: String, originalTransactionId: String, appTransactionId: String) {
            set(\.appTransactions, key(environment, originalTransactionId), appTransactionId)
        }

        func insertSignal(environment: String, originalTransactionId: String, _ signal: SubscriptionSignal) {
            let signals = state.signals[key(environment, originalTransactionId)] ?? []
            set(\.signals, key(environment, originalTransactionId), (signals + [signal]).sorted { $0.at < $1.at })
        }

        func putLink(environment: String, originalTransactionId: String, appAccountToken: String) {
            set(\.links, key(environment, originalTransactionId), appAccountToken)
        }

        func insertTransfer(environment: String, _ transfer: LinkTransfer) {
            state.transfers.append((appId, environment, transfer))
            undoLog.append { $0.transfers.removeLast() }
        }

        private func callKey(_ environment: String, _ kind: PendingAppleCall.Kind, _ transactionId: String) -> Key {
            key(environment, kind.rawValue + "/" + transactionId)
        }

        func putAppleCall(_ call: PendingAppleCall, dueAt: Int64) {
            set(\.appleCalls, callKey(call.environment, call.kind, call.transactionId), (call, dueAt))
        }

        func rescheduleAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String, retryAt: Int64) {
            guard var pending = state.appleCalls[callKey(environment, kind, transactionId)] else { return }
            pending.call.attempts += 1
            pending.nextAt = retryAt
            set(\.appleCalls, callKey(environment, kind, transactionId), pending)
        }

        func removeAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String) {
            set(\.appleCalls, callKey(environment, kind, transactionId), nil)
        }

        func putSyncRevision(environment: String, originalTransactionId: String, revision: String) {
            set(\.revisions, key(environment, originalTransactionId), revision)
        }

        func insertUsage(_ record: UsageRecord) {
            if state.usage[key("", record.id)] == nil { set(\.usage, key("", record.id), record) }
        }

        func retentionRecords(environment: String, originalTransactionId: String) -> [RetentionRecord] {
            state.retention(appId, environment, original: originalTransactionId)
        }

        func insertRetentionRecordIfNew(_ record: RetentionRecord) -> Bool {
            guard state.retention[key("", record.requestIdentifier)] == nil else { return false }
            set(\.retention, key("", record.requestIdentifier), record)
            return true
        }

        func markRetentionSaved(requestIdentifier: String, at: Int64, how: String) {
            guard var record = state.retention[key("", requestIdentifier)], record.savedAt == nil else { return }
            (record.savedAt, record.savedBy) = (at, how)
            set(\.retention, key("", requestIdentifier), record)
        }

        func putRefundOverride(appAccountToken: String, _ override: RefundOverride?) {
            set(\.refundOverrides, key("", appAccountToken), override)
        }

        func insertRefundRequestIfNew(_ request: RefundRequest) -> Bool {
            guard state.refundRequests[key("", request.id)] == nil else { return false }
            set(\.refundRequests, key("", request.id), request)
            return true
        }

        func putRefundRequest(_ request: RefundRequest) {
            guard let stored = state.refundRequests[key("", request.id)] else { return }
            var updated = request
            (updated.outcome, updated.outcomeAt) = (stored.outcome, stored.outcomeAt)
            set(\.refundRequests, key("", request.id), updated)
        }

        func markRefundOutcome(transactionId: String?, purchaseToken: String?, outcome: String, at: Int64) {
            for (key, request) in state.refundRequests where key.app == appId && request.outcome == nil {
                guard
                    (transactionId != nil && request.transactionId == transactionId)
                        || (purchaseToken != nil && request.purchaseToken == purchaseToken)
                else { continue }
                var decided = request
                (decided.outcome, decided.outcomeAt) = (outcome, at)
                set(\.refundRequests, key, decided)
            }
        }

        func putPlayPurchase(_ purchase: PlayPurchase, answer: String) {
            set(\.playPurchases, key("", purchase.purchaseToken), purchase)
            set(\.playAnswers, key("", purchase.purchaseToken), answer)
        }

        func putGrant(_ grant: PromotionalGrant) {
            let grantKey = key("", grant.id)
            if state.grants[grantKey] == nil {
                state.grantOrder.append(grantKey)
                undoLog.append { $0.grantOrder.removeLast() }
            }
            set(\.grants, grantKey, grant)
        }

        func insertAcknowledgementIfNew(_ pending: PendingAcknowledgement) {
            guard state.acknowledgements[key("", pending.purchaseToken)] == nil else { return }
            set(\.acknowledgements, key("", pending.purchaseToken), pending)
        }

        func rescheduleAcknowledgement(purchaseToken: String, retryAt: Int64) {
            guard var pending = state.acknowledgements[key("", purchaseToken)] else { return }
            pending.attempts += 1
            pending.nextAt = retryAt
            set(\.acknowledgements, key("", purchaseToken), pending)
        }

        func removeAcknowledgement(purchaseToken: String) { set(\.acknowledgements, key("", purchaseToken), nil) }

        func nextEventSequence() -> Int64 { (state.lastEventSequence[appId] ?? 0) + 1 }

        func insertEvent(_ event: OutboxEvent) {
            let last = state.lastEventSequence[appId]
            undoLog.append { [appId] state in
                state.events.removeLast()
                state.lastEventSequence[appId] = last
            }
            state.events.append(event)
            state.lastEventSequence[appId] = event.sequence
        }

        /// The counter moved with each event already.
        func eventsWritten(through sequence: Int64) {}

        func insertDelivery(kind: WebhookDelivery.Kind, eventId: String?, eventType: String?, endpoint: String, body: String?, at: Int64) {
            // An event's delivery posts the event's body (the SQL stores read it from the event row).
            let posted = body ?? state.events.last { $0.id == eventId }?.body ?? ""
            state.deliveries.append(InMemoryFactStore.delivery(appId, kind, eventId, eventType, endpoint, at: at, body: posted))
            undoLog.append { $0.deliveries.removeLast() }
        }

        /// Called once the writer is through: the changes stay.
        func commit() { committed = true }
    }

    package func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        state.withLock { $0.facts(appId, environment, token: appAccountToken) }
    }

    package func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts? {
        state.withLock { $0.facts(appId, environment, original: originalTransactionId) }
    }

    package func dueAppleCalls(appId: String, now: Int64, limit: Int) throws -> [PendingAppleCall] {
        state.withLock { state in
            Array(
                state.appleCalls.values.filter { $0.call.appId == appId && $0.nextAt <= now }.sorted { $0.nextAt < $1.nextAt }
                    .prefix(limit).map(\.call))
        }
    }

    package func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        state.withLock { $0.transfers(appId, environment, token: appAccountToken) }
    }

    package func retentionRecord(appId: String, requestIdentifier: String) throws -> RetentionRecord? {
        state.withLock { $0.retention[Key(app: appId, environment: "", id: requestIdentifier)] }
    }

    package func retentionRecords(appId: String, environment: String, originalTransactionId: String) throws -> [RetentionRecord] {
        state.withLock { $0.retention(appId, environment, original: originalTransactionId) }
    }

    /// Records are kept as values, never as text: none is ever unreadable.
    package let unreadableRows = UnreadableRows()

    package func usage(appId: String, appAccountToken: String) throws -> [UsageRecord] {
        state.withLock { state in
            state.usage.filter { $0.key.app == appId && $0.value.appAccountToken == appAccountToken }.map(\.value)
                .sorted { ($0.recordedAt, $0.id) < ($1.recordedAt, $1.id) }
        }
    }

    package func refundOverride(appId: String, appAccountToken: String) throws -> RefundOverride? {
        state.withLock { $0.refundOverrides[Key(app: appId, environment: "", id: appAccountToken)] }
    }

    package func refundRequests(appId: String, limit: Int) throws -> [RefundRequest] {
        state.withLock { state in
            Array(
                state.refundRequests.filter { $0.key.app == appId }.map(\.value)
                    .sorted { ($1.requestedAt, $0.id) < ($0.requestedAt, $1.id) }.prefix(limit))
        }
    }

    package func dueRefundRequests(appId: String, now: Int64, limit: Int) throws -> [RefundRequest] {
        state.withLock { state in
            Array(
                state.refundRequests.filter { $0.key.app == appId && $0.value.status == .pending && $0.value.nextAt <= now }
                    .map(\.value).sorted { $0.nextAt < $1.nextAt }.prefix(limit))
        }
    }

    package func originalTransactionIds(appId: String, environment: String, appTransactionId: String) throws -> [String] {
        state.withLock { state in
            state.appTransactions.filter { $0.key.app == appId && $0.key.environment == environment && $0.value == appTransactionId }
                .map(\.key.id).sorted()
        }
    }

    package func syncRevision(appId: String, environment: String, originalTransactionId: String) throws -> String? {
        state.withLock { $0.revisions[Key(app: appId, environment: environment, id: originalTransactionId)] }
    }

    package func originalTransactionId(appId: String, environment: String, transactionId: String) throws -> String? {
        state.withLock { $0.transactions[Key(app: appId, environment: environment, id: transactionId)]?.originalTransactionId }
    }

    package func notifications(appId: String, limit: Int, before: Int64?) throws -> [StoredNotification] {
        state.withLock { state in
            let matching = state.notifications.filter { notification in
                notification.appId == appId && (before.map { notification.sequence < $0 } ?? true)
            }
            return Array(matching.sorted { $0.sequence > $1.sequence }.prefix(limit))
        }
    }

    package func checkHealth() throws {}

    // MARK: - Outbox

    /// Delivery ids only need to be unique within this store.
    private static let deliveryCounter = Mutex<Int>(0)

    fileprivate static func delivery(
        _ app: String, _ kind: WebhookDelivery.Kind, _ eventId: String?, _ eventType: String?, _ endpoint: String, at: Int64,
        body: String
    ) -> WebhookDelivery {
        let number = deliveryCounter.withLock {
            $0 += 1
            return $0
        }
        return WebhookDelivery(
            id: "\(number)", appId: app, kind: kind, eventId: eventId, eventType: eventType, endpoint: endpoint,
            status: .pending, attempts: 0, nextAt: at, createdAt: at, windowStart: at, body: body)
    }

    package func events(appId: String, after sequence: Int64, limit: Int) throws -> [OutboxEvent] {
        state.withLock { Array($0.events.filter { $0.appId == appId && $0.sequence > sequence }.prefix(limit)) }
    }

    package func event(appId: String, id: String) throws -> OutboxEvent? {
        state.withLock { $0.events.first { $0.appId == appId && $0.id == id } }
    }

    package func claimDeliveries(appId: String, endpoint: String, now: Int64, leaseUntil: Int64, limit: Int) throws -> [WebhookDelivery] {
        state.withLock { state in
            let due = state.deliveries.indices.filter {
                let delivery = state.deliveries[$0]
                return delivery.appId == appId && delivery.endpoint == endpoint && delivery.status == .pending && delivery.nextAt <= now
            }.sorted { state.deliveries[$0].nextAt < state.deliveries[$1].nextAt }.prefix(limit)
            return due.map { index in
                let claimed = state.deliveries[index]
                state.deliveries[index].nextAt = leaseUntil
                return claimed
            }
        }
    }

    package func record(_ outcomes: [DeliveryOutcome]) throws {
        state.withLock { state in
            for outcome in outcomes {
                guard let index = state.deliveries.firstIndex(where: { $0.id == outcome.id && $0.status == .pending }) else { continue }
                state.deliveries[index].attempts += 1
                state.deliveries[index].lastStatus = outcome.httpStatus
                state.deliveries[index].lastError = outcome.error
                switch outcome.result {
                case .delivered(let at):
                    state.deliveries[index].status = .delivered
                    state.deliveries[index].nextAt = at
                    state.deliveries[index].deliveredAt = at
                case .retry(let at): state.deliveries[index].nextAt = at
                case .failed(let at):
                    state.deliveries[index].status = .failed
                    state.deliveries[index].nextAt = at
                }
            }
        }
    }

    package func deliveries(appId: String, status: WebhookDelivery.Status?, limit: Int) throws -> [WebhookDelivery] {
        state.withLock { state in
            Array(
                state.deliveries.filter { $0.appId == appId && (status == nil || $0.status == status) }
                    .sorted(by: WebhookDelivery.listedBefore).prefix(limit)
                    .map { delivery in
                        var listed = delivery
                        listed.body = ""
                        return listed
                    })
        }
    }

    package func retryDelivery(appId: String, id: String, now: Int64) throws -> WebhookDelivery? {
        state.withLock { state in
            guard let index = state.deliveries.firstIndex(where: { $0.appId == appId && $0.id == id }) else { return nil }
            state.deliveries[index].status = .pending
            state.deliveries[index].nextAt = now
            state.deliveries[index].windowStart = now
            var listed = state.deliveries[index]
            listed.body = ""
            return listed
        }
    }

    package func abandonDeliveries(appId: String, keeping endpoints: Set<String>, now: Int64) throws -> Int {
        state.withLock { state in
            var count = 0
            for index in state.deliveries.indices
            where state.deliveries[index].appId == appId && state.deliveries[index].status == .pending
                && !endpoints.contains(state.deliveries[index].endpoint)
            {
                state.deliveries[index].status = .failed
                state.deliveries[index].nextAt = now
                state.deliveries[index].lastError = "endpoint no longer configured"
                count += 1
            }
            return count
        }
    }

    package func deliveryBacklog(appId: String) throws -> DeliveryBacklog {
        state.withLock { state in
            let mine = state.deliveries.filter { $0.appId == appId }
            let pending = mine.filter { $0.status == .pending }
            return DeliveryBacklog(
                pending: pending.count, failed: mine.filter { $0.status == .failed }.count,
                oldestPendingCreatedAt: pending.map(\.createdAt).min())
        }
    }

    // MARK: - Support

    package func grants(appId: String, environment: String, appAccountToken: String) throws -> [PromotionalGrant] {
        state.withLock { $0.grants(appId, environment, token: appAccountToken) }
    }

    package func grant(appId: String, id: String) throws -> PromotionalGrant? {
        state.withLock { $0.grants[Key(app: appId, environment: "", id: id)] }
    }

    package func activeGrants(appId: String, at now: Int64) throws -> [PromotionalGrant] {
        state.withLock { state in
            state.grantOrder.filter { $0.app == appId }.compactMap { state.grants[$0] }.filter { $0.state(at: now) == "ACTIVE" }
        }
    }

    package func signedFacts(appId: String, environment: String, originalTransactionId: String) throws -> [SignedFact] {
        state.withLock { state in
            var found = state.transactions.filter {
                $0.key.app == appId && $0.key.environment == environment && $0.value.originalTransactionId == originalTransactionId
            }.map { key, record in
                SignedFact(
                    kind: .transaction, originalTransactionId: originalTransactionId, id: record.transactionId,
                    signedDate: record.signedDate, jws: state.signed[key] ?? "")
            }
            let key = Key(app: appId, environment: environment, id: originalTransactionId)
            if let renewal = state.renewals[key] {
                found.append(
                    SignedFact(
                        kind: .renewalInfo, originalTransactionId: originalTransactionId, id: originalTransactionId,
                        signedDate: renewal.signedDate, jws: state.signedRenewals[key] ?? ""))
            }
            return found.sorted { $0.signedDate < $1.signedDate }
        }
    }

    package func notifications(appId: String, environment: String, originalTransactionId: String) throws -> [StoredNotification] {
        state.withLock { state in
            state.notifications.filter {
                $0.appId == appId && $0.environment == environment && $0.originalTransactionId == originalTransactionId
            }
        }
    }

    package func events(appId: String, originalTransactionId: String) throws -> [OutboxEvent] {
        state.withLock { $0.events.filter { $0.appId == appId && $0.originalTransactionId == originalTransactionId } }
    }

    package func events(appId: String, appAccountToken: String) throws -> [OutboxEvent] {
        state.withLock { $0.events.filter { $0.appId == appId && $0.appAccountToken == appAccountToken } }
    }

    package func deliveries(appId: String, eventId: String) throws -> [WebhookDelivery] {
        state.withLock { $0.deliveries.filter { $0.appId == appId && $0.eventId == eventId } }
    }

    package func metricSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] {
        state.withLock { state in
            (state.metricDays[Key(app: appId, environment: environment, id: "")] ?? [:]).filter { $0.key.day >= fromDay }.map {
                ($0.key, $0.value)
            }
        }
    }

    package func metricStockSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] {
        try metricSums(appId: appId, environment: environment, fromDay: fromDay).filter { $0.key.figure.isStock }
    }

    package func metricBucketSums(
        appId: String, environment: String, width: MetricBucketWidth, buckets: ClosedRange<Int64>
    ) throws -> [(key: MetricDayKey, value: Int64)] {
        state.withLock { state in
            (state.metricDays[Key(app: appId, environment: environment, id: "\(width)")] ?? [:]).filter { buckets.contains($0.key.day) }
                .map { ($0.key, $0.value) }
        }
    }

    package func metricBucketTotals(
        appId: String, environment: String, width: MetricBucketWidth, stocks: MetricBucketSpan, flows: MetricBucketSpan
    ) throws -> [(key: MetricDayKey, value: Int64)] {
        let sums = try metricBucketSums(appId: appId, environment: environment, width: width, buckets: Int64.min...Int64.max)
        return MetricBucketSpan.totals(sums, stocks: stocks, flows: flows)
    }

    package func metricMoments(appId: String, environment: String, from: Int64, to: Int64) throws -> [StoredMetricMoment] {
        state.withLock { state in
            state.metricMoments.filter { $0.key.app == appId && $0.key.environment == environment }.flatMap { _, stored in
                stored.moments.filter { (from..<to).contains($0.key.at) }.map {
                    StoredMetricMoment(store: stored.store, moment: $0.key, value: $0.value)
                }
            }
        }
    }

    package func subscriptions(appId: String, environment: String, after: String?, limit: Int) throws -> [SubscriptionFacts] {
        state.withLock { state in
            let ids = Set(
                state.transactions.filter { $0.key.app == appId && $0.key.environment == environment }.map(\.value.originalTransactionId))
            return ids.filter { id in after.map { id > $0 } ?? true }.sorted().prefix(limit).compactMap {
                state.facts(appId, environment, original: $0)
            }
        }
    }

    package func notificationCounts(appId: String, since: Int64) throws -> [NotificationCount] {
        state.withLock { state in
            var counts: [String: NotificationCount] = [:]
            for notification in state.notifications where notification.appId == appId && notification.receivedAt >= since {
                let hour = notification.receivedAt / 3_600_000 * 3_600_000
                let key = "\(hour) \(notification.environment) \(notification.notificationType)"
                counts[
                    key,
                    default: NotificationCount(
                        hourStart: hour, environment: notification.environment, notificationType: notification.notificationType, count: 0)
                ]
                .count += 1
            }
            return counts.values.sorted { ($0.hourStart, $0.notificationType) < ($1.hourStart, $1.notificationType) }
        }
    }

    // MARK: - Google Play

    package func playPurchases(appId: String, appAccountToken: String) throws -> [PlayPurchase] {
        state.withLock { $0.playPurchases(appId, token: appAccountToken) }
    }

    package func playPurchase(appId: String, purchaseToken: String) throws -> PlayPurchase? {
        state.withLock { $0.playPurchases[Key(app: appId, environment: "", id: purchaseToken)] }
    }

    package func hasPubSubMessage(appId: String, messageId: String) throws -> Bool {
        state.withLock { $0.pubsubMessages.contains(Key(app: appId, environment: "", id: messageId)) }
    }

    package func playPurchase(appId: String, orderId: String) throws -> PlayPurchase? {
        state.withLock { state in state.playPurchases.first { $0.key.app == appId && $0.value.orderId == orderId }?.value }
    }

    package func playPurchaseAnswer(appId: String, purchaseToken: String) throws -> String? {
        state.withLock { $0.playAnswers[Key(app: appId, environment: "", id: purchaseToken)] }
    }

    package func playPurchases(appId: String, after: String?, limit: Int) throws -> [PlayPurchase] {
        state.withLock { state in
            Array(
                state.playPurchases.filter { key, _ in key.app == appId && after.map { key.id > $0 } ?? true }.values
                    .sorted { $0.purchaseToken < $1.purchaseToken }.prefix(limit))
        }
    }

    package func dueAcknowledgements(appId: String, now: Int64, limit: Int) throws -> [PendingAcknowledgement] {
        state.withLock { state in
            Array(
                state.acknowledgements.values.filter { $0.appId == appId && $0.nextAt <= now }.sorted { $0.nextAt < $1.nextAt }
                    .prefix(limit))
        }
    }

    package func pendingAcknowledgements(appId: String, queuedBefore: Int64) throws -> Int {
        state.withLock { state in state.acknowledgements.values.filter { $0.appId == appId && $0.queuedAt < queuedBefore }.count }
    }
}
