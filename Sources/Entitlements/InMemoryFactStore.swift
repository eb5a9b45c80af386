import Synchronization

/// A `FactStore` in memory, with the same merge and link rules as the SQLite store: for unit tests
/// and for trying Entitle without a database file.
public final class InMemoryFactStore: FactStore {
    private struct Key: Hashable { let app: String, environment: String, id: String }

    private struct State {
        var transactions: [Key: TransactionRecord] = [:]
        var renewals: [Key: RenewalRecord] = [:]
        var links: [Key: String] = [:]
        var signals: [Key: [SubscriptionSignal]] = [:]
        var notifications: [StoredNotification] = []
        var revisions: [Key: String] = [:]
        /// Subscription (original transaction id) → its app transaction id.
        var appTransactions: [Key: String] = [:]
        var transfers: [(app: String, environment: String, transfer: LinkTransfer)] = []
        var tokenCalls: [Key: (call: PendingTokenCall, nextAt: Int64)] = [:]
        var sequence: Int64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public func apply(_ batch: FactBatch) throws -> ApplyOutcome {
        state.withLock { state in
            if let notification = batch.notification,
                state.notifications.contains(where: { $0.notificationUUID == notification.notificationUUID })
            {
                return .duplicateNotification
            }
            func key(_ id: String) -> Key { Key(app: batch.appId, environment: batch.environment, id: id) }
            var outcome = ApplyOutcome.applied
            if let link = batch.requestedLink, let existing = state.links[key(link.originalTransactionId)],
                existing != link.appAccountToken
            {
                guard batch.transfersLink else { return .linkConflict(existingToken: existing) }
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
            for (record, _) in batch.transactions {
                let transactionKey = key(record.transactionId)
                if let stored = state.transactions[transactionKey], !record.newer(than: stored) { continue }
                state.transactions[transactionKey] = record
                if let token = record.appAccountToken { state.links[key(record.originalTransactionId)] = token }
                if let app = record.appTransactionId { state.appTransactions[key(record.originalTransactionId)] = app }
            }
            if let (record, _) = batch.renewal {
                let renewalKey = key(record.originalTransactionId)
                if state.renewals[renewalKey].map({ record.signedDate > $0.signedDate }) ?? true { state.renewals[renewalKey] = record }
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
            if var notification = batch.notification {
                state.sequence += 1
                notification.sequence = state.sequence
                state.notifications.append(notification)
            }
            return outcome
        }
    }

    public func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        let originals = state.withLock { state in
            state.links.filter { $0.key.app == appId && $0.key.environment == environment && $0.value == appAccountToken }.map(\.key.id)
        }
        return try originals.sorted().compactMap { try facts(appId: appId, environment: environment, originalTransactionId: $0) }
    }

    public func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts? {
        state.withLock { state in
            let transactions = state.transactions.filter {
                $0.key.app == appId && $0.key.environment == environment && $0.value.originalTransactionId == originalTransactionId
            }.map(\.value)
            guard !transactions.isEmpty else { return nil }
            let key = Key(app: appId, environment: environment, id: originalTransactionId)
            return SubscriptionFacts(
                originalTransactionId: originalTransactionId, environment: environment,
                appAccountToken: state.links[key], transactions: transactions.sorted { $0.purchaseDate < $1.purchaseDate },
                renewal: state.renewals[key], signals: state.signals[key] ?? [])
        }
    }

    public func dueTokenCalls(appId: String, now: Int64, limit: Int) throws -> [PendingTokenCall] {
        state.withLock { state in
            Array(
                state.tokenCalls.values.filter { $0.call.appId == appId && $0.nextAt <= now }.sorted { $0.nextAt < $1.nextAt }
                    .prefix(limit).map(\.call))
        }
    }

    public func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        state.withLock { state in
            state.transfers.filter {
                $0.app == appId && $0.environment == environment
                    && ($0.transfer.from == appAccountToken || $0.transfer.to == appAccountToken)
            }.map(\.transfer)
        }
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
}
