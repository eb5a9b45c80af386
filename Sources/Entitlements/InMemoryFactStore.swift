import Synchronization

/// A `FactStore` in memory, with the same merge and link rules as the SQLite store: for unit tests
/// and for trying Entitle without a database file.
public final class InMemoryFactStore: FactStore {
    private struct Key: Hashable { let app: String, environment: String, id: String }

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
        var tokenCalls: [Key: (call: PendingTokenCall, nextAt: Int64)] = [:]
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

        func playPurchases(_ appId: String, token: String) -> [PlayPurchase] {
            playPurchases.filter { $0.key.app == appId && $0.value.appAccountToken == token }.map(\.value)
                .sorted { ($0.startTime, $0.purchaseToken) < ($1.startTime, $1.purchaseToken) }
        }

        func grants(_ appId: String, _ environment: String, token: String) -> [PromotionalGrant] {
            grantOrder.filter { $0.app == appId }.compactMap { grants[$0] }.filter {
                $0.environment == environment && $0.appAccountToken == token
            }
        }

        func facts(_ appId: String, _ environment: String, original: String) -> SubscriptionFacts? {
            let transactions = self.transactions.filter {
                $0.key.app == appId && $0.key.environment == environment && $0.value.originalTransactionId == original
            }.map(\.value)
            guard !transactions.isEmpty else { return nil }
            let key = Key(app: appId, environment: environment, id: original)
            return SubscriptionFacts(
                originalTransactionId: original, environment: environment,
                appAccountToken: links[key], transactions: transactions.sorted { $0.purchaseDate < $1.purchaseDate },
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

    /// The state as stored before a batch, for `FactChange.read`.
    private struct Reader: FactReading {
        let state: State
        let appId: String

        func facts(environment: String, originalTransactionId: String, storedToken: String??) -> SubscriptionFacts? {
            state.facts(appId, environment, original: originalTransactionId)
        }

        func facts(environment: String, appAccountToken: String) -> [SubscriptionFacts] {
            state.facts(appId, environment, token: appAccountToken)
        }

        func token(environment: String, originalTransactionId: String) -> String? {
            state.links[Key(app: appId, environment: environment, id: originalTransactionId)]
        }

        func linkTransfers(environment: String, appAccountToken: String) -> [LinkTransfer] {
            state.transfers(appId, environment, token: appAccountToken)
        }

        func grants(environment: String, appAccountToken: String) -> [PromotionalGrant] {
            state.grants(appId, environment, token: appAccountToken)
        }

        func grant(id: String) -> PromotionalGrant? { state.grants[Key(app: appId, environment: "", id: id)] }

        func playPurchases(appAccountToken: String) -> [PlayPurchase] { state.playPurchases(appId, token: appAccountToken) }

        func playPurchase(token: String) -> PlayPurchase? { state.playPurchases[Key(app: appId, environment: "", id: token)] }
    }

    private let state = Mutex(State())

    public init() {}

    public func apply(_ batch: FactBatch) throws -> ApplyOutcome {
        let (outcome, events) = try write(batch)
        if batch.wroteToOutbox(outcome, events: events) { batch.eventWriter?.committed(events) }
        return outcome
    }

    private func write(_ batch: FactBatch) throws -> (ApplyOutcome, [OutboxEvent]) {
        try state.withLock { state in
            if let notification = batch.notification,
                state.notifications.contains(where: { $0.notificationUUID == notification.notificationUUID })
            {
                return (.duplicateNotification, [])
            }
            if let message = batch.pubsubMessageId, state.pubsubMessages.contains(Key(app: batch.appId, environment: "", id: message)) {
                return (.duplicateNotification, [])
            }
            func key(_ id: String) -> Key { Key(app: batch.appId, environment: batch.environment, id: id) }
            let pending = try batch.eventWriter.map {
                try FactChange.read(batch, environments: $0.environments, from: Reader(state: state, appId: batch.appId))
            }
            var outcome = ApplyOutcome.applied
            if let link = batch.requestedLink, let existing = state.links[key(link.originalTransactionId)],
                existing != link.appAccountToken
            {
                guard batch.transfersLink else { return (.linkConflict(existingToken: existing), []) }
                state.links[key(link.originalTransactionId)] = link.appAccountToken
                state.transfers.append(
                    (
                        batch.appId, batch.environment,
                        LinkTransfer(
                            originalTransactionId: link.originalTransactionId, from: existing, to: link.appAccountToken,
                            at: batch.requestedAt)
                    ))
                outcome = .transferred(from: existing)
            }
            for (record, jws) in batch.transactions {
                let transactionKey = key(record.transactionId)
                if let stored = state.transactions[transactionKey], !record.newer(than: stored) { continue }
                state.transactions[transactionKey] = record
                state.signed[transactionKey] = jws
                if let token = record.appAccountToken { state.links[key(record.originalTransactionId)] = token }
                if let app = record.appTransactionId { state.appTransactions[key(record.originalTransactionId)] = app }
            }
            if let (record, jws) = batch.renewal {
                let renewalKey = key(record.originalTransactionId)
                if state.renewals[renewalKey].map({ record.signedDate > $0.signedDate }) ?? true {
                    state.renewals[renewalKey] = record
                    state.signedRenewals[renewalKey] = jws
                }
                if let app = record.appTransactionId { state.appTransactions[renewalKey] = app }
            }
            for (original, signal) in batch.signals { state.signals[key(original), default: []].append(signal) }
            if let link = batch.requestedLink, state.links[key(link.originalTransactionId)] == nil {
                state.links[key(link.originalTransactionId)] = link.appAccountToken
            }
            if let link = batch.requestedLink, batch.queuesTokenCall {
                state.tokenCalls[key(link.originalTransactionId)] = (
                    PendingTokenCall(
                        appId: batch.appId, environment: batch.environment, originalTransactionId: link.originalTransactionId,
                        appAccountToken: link.appAccountToken, attempts: 0), batch.requestedAt
                )
            }
            if let outcome = batch.tokenCallOutcome {
                let callKey = key(outcome.originalTransactionId)
                if let retryAt = outcome.retryAt, var pending = state.tokenCalls[callKey] {
                    pending.call.attempts += 1
                    pending.nextAt = retryAt
                    state.tokenCalls[callKey] = pending
                } else {
                    state.tokenCalls[callKey] = nil
                }
            }
            if let sync = batch.syncRevision { state.revisions[key(sync.originalTransactionId)] = sync.revision }
            if let message = batch.pubsubMessageId { state.pubsubMessages.insert(Key(app: batch.appId, environment: "", id: message)) }
            for (purchase, json) in batch.playPurchases {
                let purchaseKey = Key(app: batch.appId, environment: "", id: purchase.purchaseToken)
                if state.playPurchases[purchaseKey].map({ purchase.readAt >= $0.readAt }) ?? true { state.playAnswers[purchaseKey] = json }
                state.playPurchases[purchaseKey] = state.playPurchases[purchaseKey].map { purchase.replacing($0) } ?? purchase
            }
            if let grant = batch.grant {
                let grantKey = Key(app: batch.appId, environment: "", id: grant.id)
                if let stored = state.grants[grantKey] {
                    // The first revocation stands, as in the SQL stores.
                    if stored.revokedAt == nil { state.grants[grantKey] = grant }
                } else {
                    state.grantOrder.append(grantKey)
                    state.grants[grantKey] = grant
                }
            }
            if var notification = batch.notification {
                state.sequence += 1
                notification.sequence = state.sequence
                state.notifications.append(notification)
            }
            var events: [OutboxEvent] = []
            if let writer = batch.eventWriter, let pending {
                let first = (state.lastEventSequence[batch.appId] ?? 0) + 1
                events = writer.events(for: FactChange.applying(batch, to: pending), firstSequence: first)
                for event in events {
                    state.events.append(event)
                    state.lastEventSequence[batch.appId] = event.sequence
                    for endpoint in event.endpoints {
                        state.deliveries.append(
                            Self.delivery(batch.appId, .event, event.id, event.type, endpoint, at: event.createdAt, body: event.body))
                    }
                }
            }
            if let forward = batch.forward {
                state.deliveries.append(
                    Self.delivery(
                        batch.appId, .forward, nil, batch.notification?.notificationType, forward.url,
                        at: batch.notification?.receivedAt ?? batch.requestedAt, body: forward.body))
            }
            return (outcome, events)
        }
    }

    public func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        state.withLock { $0.facts(appId, environment, token: appAccountToken) }
    }

    public func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts? {
        state.withLock { $0.facts(appId, environment, original: originalTransactionId) }
    }

    public func dueTokenCalls(appId: String, now: Int64, limit: Int) throws -> [PendingTokenCall] {
        state.withLock { state in
            Array(
                state.tokenCalls.values.filter { $0.call.appId == appId && $0.nextAt <= now }.sorted { $0.nextAt < $1.nextAt }
                    .prefix(limit).map(\.call))
        }
    }

    public func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        state.withLock { $0.transfers(appId, environment, token: appAccountToken) }
    }

    public func originalTransactionIds(appId: String, environment: String, appTransactionId: String) throws -> [String] {
        state.withLock { state in
            state.appTransactions.filter { $0.key.app == appId && $0.key.environment == environment && $0.value == appTransactionId }
                .map(\.key.id).sorted()
        }
    }

    public func syncRevision(appId: String, environment: String, originalTransactionId: String) throws -> String? {
        state.withLock { $0.revisions[Key(app: appId, environment: environment, id: originalTransactionId)] }
    }

    public func originalTransactionId(appId: String, environment: String, transactionId: String) throws -> String? {
        state.withLock { $0.transactions[Key(app: appId, environment: environment, id: transactionId)]?.originalTransactionId }
    }

    public func notifications(appId: String, limit: Int, before: Int64?) throws -> [StoredNotification] {
        state.withLock { state in
            let matching = state.notifications.filter { notification in
                notification.appId == appId && (before.map { notification.sequence < $0 } ?? true)
            }
            return Array(matching.sorted { $0.sequence > $1.sequence }.prefix(limit))
        }
    }

    public func checkHealth() throws {}

    // MARK: - Outbox

    /// Delivery ids only need to be unique within this store.
    private static let deliveryCounter = Mutex<Int>(0)

    private static func delivery(
        _ app: String, _ kind: WebhookDelivery.Kind, _ eventId: String?, _ eventType: String?, _ endpoint: String, at: Int64,
        body: String
    ) -> WebhookDelivery {
        let number = deliveryCounter.withLock {
            $0 += 1
            return $0
        }
        return WebhookDelivery(
            id: "delivery-\(number)", appId: app, kind: kind, eventId: eventId, eventType: eventType, endpoint: endpoint,
            status: .pending, attempts: 0, nextAt: at, createdAt: at, windowStart: at, body: body)
    }

    public func events(appId: String, after sequence: Int64, limit: Int) throws -> [OutboxEvent] {
        state.withLock { Array($0.events.filter { $0.appId == appId && $0.sequence > sequence }.prefix(limit)) }
    }

    public func event(appId: String, id: String) throws -> OutboxEvent? {
        state.withLock { $0.events.first { $0.appId == appId && $0.id == id } }
    }

    public func claimDeliveries(appId: String, endpoint: String, now: Int64, leaseUntil: Int64, limit: Int) throws -> [WebhookDelivery] {
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

    public func record(_ outcomes: [DeliveryOutcome]) throws {
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

    public func deliveries(appId: String, status: WebhookDelivery.Status?, limit: Int) throws -> [WebhookDelivery] {
        state.withLock { state in
            Array(
                state.deliveries.filter { $0.appId == appId && (status == nil || $0.status == status) }.reversed().prefix(limit)
                    .map { delivery in
                        var listed = delivery
                        listed.body = ""
                        return listed
                    })
        }
    }

    public func retryDelivery(appId: String, id: String, now: Int64) throws -> WebhookDelivery? {
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

    public func abandonDeliveries(appId: String, keeping endpoints: Set<String>, now: Int64) throws -> Int {
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

    public func deliveryBacklog(appId: String) throws -> DeliveryBacklog {
        state.withLock { state in
            let mine = state.deliveries.filter { $0.appId == appId }
            let pending = mine.filter { $0.status == .pending }
            return DeliveryBacklog(
                pending: pending.count, failed: mine.filter { $0.status == .failed }.count,
                oldestPendingCreatedAt: pending.map(\.createdAt).min())
        }
    }

    // MARK: - Support

    public func grants(appId: String, environment: String, appAccountToken: String) throws -> [PromotionalGrant] {
        state.withLock { $0.grants(appId, environment, token: appAccountToken) }
    }

    public func grant(appId: String, id: String) throws -> PromotionalGrant? {
        state.withLock { $0.grants[Key(app: appId, environment: "", id: id)] }
    }

    public func activeGrants(appId: String, at now: Int64) throws -> [PromotionalGrant] {
        state.withLock { state in
            state.grantOrder.filter { $0.app == appId }.compactMap { state.grants[$0] }.filter { $0.state(at: now) == "ACTIVE" }
        }
    }

    public func signedFacts(appId: String, environment: String, originalTransactionId: String) throws -> [SignedFact] {
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

    public func notifications(appId: String, environment: String, originalTransactionId: String) throws -> [StoredNotification] {
        state.withLock { state in
            state.notifications.filter {
                $0.appId == appId && $0.environment == environment && $0.originalTransactionId == originalTransactionId
            }
        }
    }

    public func events(appId: String, originalTransactionId: String) throws -> [OutboxEvent] {
        state.withLock { $0.events.filter { $0.appId == appId && $0.originalTransactionId == originalTransactionId } }
    }

    public func events(appId: String, appAccountToken: String) throws -> [OutboxEvent] {
        state.withLock { $0.events.filter { $0.appId == appId && $0.appAccountToken == appAccountToken } }
    }

    public func deliveries(appId: String, eventId: String) throws -> [WebhookDelivery] {
        state.withLock { $0.deliveries.filter { $0.appId == appId && $0.eventId == eventId } }
    }

    public func subscriptions(appId: String, environment: String, after: String?, limit: Int) throws -> [SubscriptionFacts] {
        state.withLock { state in
            let ids = Set(
                state.transactions.filter { $0.key.app == appId && $0.key.environment == environment }.map(\.value.originalTransactionId))
            return ids.filter { id in after.map { id > $0 } ?? true }.sorted().prefix(limit).compactMap {
                state.facts(appId, environment, original: $0)
            }
        }
    }

    public func notificationCounts(appId: String, since: Int64) throws -> [NotificationCount] {
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

    public func playPurchases(appId: String, appAccountToken: String) throws -> [PlayPurchase] {
        state.withLock { $0.playPurchases(appId, token: appAccountToken) }
    }

    public func playPurchase(appId: String, purchaseToken: String) throws -> PlayPurchase? {
        state.withLock { $0.playPurchases[Key(app: appId, environment: "", id: purchaseToken)] }
    }

    public func playPurchase(appId: String, orderId: String) throws -> PlayPurchase? {
        state.withLock { state in state.playPurchases.first { $0.key.app == appId && $0.value.orderId == orderId }?.value }
    }

    public func playPurchaseAnswer(appId: String, purchaseToken: String) throws -> String? {
        state.withLock { $0.playAnswers[Key(app: appId, environment: "", id: purchaseToken)] }
    }

    public func playPurchases(appId: String, after: String?, limit: Int) throws -> [PlayPurchase] {
        state.withLock { state in
            Array(
                state.playPurchases.filter { key, _ in key.app == appId && after.map { key.id > $0 } ?? true }.values
                    .sorted { $0.purchaseToken < $1.purchaseToken }.prefix(limit))
        }
    }
}
