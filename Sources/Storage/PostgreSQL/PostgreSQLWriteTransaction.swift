import Entitlements
import Foundation

/// A connection inside the transaction that writes a batch, as `FactWriter` uses it: PostgreSQL's
/// statements for each primitive and nothing else. The puts are deferred (`executeLater`): they
/// reach the database with the next statement that is waited for, in one pipeline. Several
/// instances write at once, so `lock`
/// takes transaction-scoped advisory locks (in the sorted order the writer gives: no deadlock
/// between two batches) and the event counter row stays locked until the commit.
struct PostgreSQLWriteTransaction: FactWriteTransaction {
    let db: PostgreSQLConnection
    let appId: String
    let unreadable: UnreadableRows
    /// Locks this transaction took already (a group commit takes all of its batches' at once).
    var heldLocks: Set<String> = []
    /// Subscriptions read for this batch. The writer reads before it writes (and holds their
    /// locks), so a subscription read once, link and all, need not be read again; its metric
    /// moments come in the same round trip (the writer asks for them once it has merged).
    private let read = ReadSubscriptions()

    private final class ReadSubscriptions: @unchecked Sendable {
        var facts: [String: SubscriptionFacts?] = [:]
        var moments: [String: [MetricMoment: Int64]] = [:]
    }

    // MARK: Reading

    private static func key(_ environment: String, _ original: String) -> String { environment + "\u{1F}" + original }

    /// The subscription with its link and its metric moments, read in one round trip, once per batch.
    private func subscription(_ environment: String, _ original: String) throws -> SubscriptionFacts? {
        let key = Self.key(environment, original)
        if let known = read.facts[key] { return known }
        let answers = try db.execute(
            together: [
                PostgreSQLFactStore.subscriptionRead(appId: appId, environment: environment, originalTransactionId: original),
                PostgreSQLFactStore.momentsRead(appId: appId, environment: environment, subscription: original),
            ])
        let facts = PostgreSQLFactStore.subscription(from: answers[0], environment: environment)
        read.facts[key] = .some(facts)
        read.moments[key] = PostgreSQLFactStore.moments(from: answers[1])
        return facts
    }

    /// The moments read with the subscription, once (the writer puts new ones next), else read
    /// now (a Play purchase's, a rebuild's).
    func metricMoments(environment: String, subscription: String) throws -> [MetricMoment: Int64] {
        if let known = read.moments.removeValue(forKey: Self.key(environment, subscription)) { return known }
        let (sql, parameters) = PostgreSQLFactStore.momentsRead(appId: appId, environment: environment, subscription: subscription)
        return PostgreSQLFactStore.moments(from: try db.execute(sql, parameters))
    }

    func facts(environment: String, originalTransactionId: String, storedToken: String??) throws -> SubscriptionFacts? {
        try subscription(environment, originalTransactionId)
    }

    func facts(environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        try PostgreSQLFactStore.facts(db, appId: appId, environment: environment, appAccountToken: appAccountToken)
    }

    func token(environment: String, originalTransactionId: String) throws -> String? {
        try subscription(environment, originalTransactionId)?.appAccountToken
    }

    func linkTransfers(environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        try PostgreSQLFactStore.linkTransfers(db, appId: appId, environment: environment, appAccountToken: appAccountToken)
    }

    func grants(environment: String, appAccountToken: String) throws -> [PromotionalGrant] {
        try PostgreSQLFactStore.grants(db, appId: appId, environment: environment, appAccountToken: appAccountToken)
    }

    func grant(id: String) throws -> PromotionalGrant? { try PostgreSQLFactStore.grant(db, appId: appId, id: id) }

    func playPurchases(appAccountToken: String) throws -> [PlayPurchase] {
        try PostgreSQLFactStore.playPurchases(db, appId: appId, appAccountToken: appAccountToken)
    }

    func subscriber(environments: [String], appAccountToken: String) throws -> SubscriberFacts {
        try PostgreSQLFactStore.subscriber(db, appId: appId, environments: environments, appAccountToken: appAccountToken)
    }

    func playPurchase(token: String) throws -> PlayPurchase? {
        try PostgreSQLFactStore.playPurchase(db, appId: appId, purchaseToken: token)
    }

    func appDownloads(appAccountToken: String) throws -> [AppDownload] {
        try PostgreSQLFactStore.appDownloads(db, appId: appId, appAccountToken: appAccountToken)
    }

    func experimentAssignments(appAccountToken: String) throws -> [ExperimentAssignment] {
        try db.execute(PostgreSQLFactStore.assignmentsStatement, [.text(appId), .text(appAccountToken)]).rows.map(
            PostgreSQLFactStore.assignment)
    }

    // MARK: Writing

    func lock(_ keys: [String]) throws { try Self.lock(keys.filter { !heldLocks.contains($0) }, on: db) }

    /// Takes the advisory locks of `keys`, in their order, until the transaction ends.
    static func lock(_ keys: [String], on db: PostgreSQLConnection) throws {
        guard !keys.isEmpty else { return }
        // One round trip for all of them; `ORDER BY` keeps the writer's order.
        try db.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) WITH ORDINALITY AS u(k, n) ORDER BY n",
            [.texts(keys)])
    }

    /// The insert goes with the read of the subscription the notification names, in one round
    /// trip: the batch reads it next (under the locks it holds already), and a round trip per
    /// batch was a sixth of one instance's ingest. A duplicate leaves the read unused.
    func insertNotificationIfNew(_ notification: StoredNotification) throws -> Bool {
        let insert = (NotificationCodec.table.postgresInsertIfNew + " RETURNING sequence", NotificationCodec.values(notification))
        // A Google notification names a purchase token, not an App Store subscription to read.
        guard notification.store == "app_store", let original = notification.originalTransactionId,
            read.facts[Self.key(notification.environment, original)] == nil
        else { return !(try db.execute(insert.0, insert.1).isEmpty) }
        let answers = try db.execute(
            together: [
                insert,
                PostgreSQLFactStore.subscriptionRead(appId: appId, environment: notification.environment, originalTransactionId: original),
                PostgreSQLFactStore.momentsRead(appId: appId, environment: notification.environment, subscription: original),
            ])
        let key = Self.key(notification.environment, original)
        read.facts[key] = .some(PostgreSQLFactStore.subscription(from: answers[1], environment: notification.environment))
        read.moments[key] = PostgreSQLFactStore.moments(from: answers[2])
        return !answers[0].isEmpty
    }

    func insertPubSubMessageIfNew(_ messageId: String, receivedAt: Int64) throws -> Bool {
        !(try db.execute(
            StoredTables.pubSubMessages.postgresInsertIfNew + " RETURNING 1",
            [.text(appId), .text(messageId), .integer(receivedAt)]
        ).isEmpty)
    }

    func putTransaction(_ record: TransactionRecord, jws: String) throws {
        try db.executeLater(TransactionCodec.table.postgresPut, TransactionCodec.values(appId: appId, record, jws: jws))
    }

    func putRenewal(_ record: RenewalRecord, jws: String) throws {
        try db.executeLater(RenewalCodec.table.postgresPut, RenewalCodec.values(appId: appId, record, jws: jws))
    }

    func putAppTransaction(environment: String, originalTransactionId: String, appTransactionId: String) throws {
        try db.executeLater(
            StoredTables.appTransactions.postgresPut,
            [.text(appId), .text(environment), .text(originalTransactionId), .text(appTransactionId)])
    }

    func insertSignal(environment: String, originalTransactionId: String, _ signal: SubscriptionSignal) throws {
        try db.executeLater(
            StoredTables.signals.postgresInsertIfNew,
            [.text(appId), .text(environment), .text(originalTransactionId), .text(signal.kind.storedName), .integer(signal.at)])
    }

    func putLink(environment: String, originalTransactionId: String, appAccountToken: String) throws {
        try db.executeLater(
            StoredTables.subscriberLinks.postgresPut,
            [.text(appId), .text(environment), .text(originalTransactionId), .text(appAccountToken)])
    }

    func insertTransfer(environment: String, _ transfer: LinkTransfer) throws {
        try db.executeLater(
            StoredTables.linkTransfers.postgresInsertIfNew,
            [
                .text(appId), .text(environment), .text(transfer.originalTransactionId), .text(transfer.from), .text(transfer.to),
                .integer(transfer.at),
            ])
    }

    func putAppleCall(_ call: PendingAppleCall, dueAt: Int64) throws {
        try db.executeLater(
            StoredTables.appleCalls.postgresPut,
            [
                .text(appId), .text(call.environment), .text(call.kind.rawValue), .text(call.transactionId), .from(call.appAccountToken),
                .integer(Int64(call.attempts)), .integer(dueAt),
            ])
    }

    func rescheduleAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String, retryAt: Int64) throws {
        try db.executeLater(
            """
            UPDATE apple_calls SET attempts = attempts + 1, next_at = $5
            WHERE app_id = $1 AND environment = $2 AND kind = $3 AND transaction_id = $4
            """, [.text(appId), .text(environment), .text(kind.rawValue), .text(transactionId), .integer(retryAt)])
    }

    func removeAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String) throws {
        try db.executeLater(
            "DELETE FROM apple_calls WHERE app_id = $1 AND environment = $2 AND kind = $3 AND transaction_id = $4",
            [.text(appId), .text(environment), .text(kind.rawValue), .text(transactionId)])
    }

    func putSyncRevision(environment: String, originalTransactionId: String, revision: String) throws {
        try db.executeLater(
            StoredTables.syncRevisions.postgresPut, [.text(appId), .text(environment), .text(originalTransactionId), .text(revision)])
    }

    func putPlayPurchase(_ purchase: PlayPurchase, answer: String) throws {
        try db.executeLater(
            StoredTables.playPurchases.postgresPut,
            [
                .text(appId), .text(purchase.purchaseToken), .text(purchase.kind.rawValue), .text(purchase.productId),
                .from(purchase.basePlanId), .from(purchase.offerId), .text(purchase.environment), .text(purchase.googleState),
                .integer(purchase.startTime), .from(purchase.expiryTime), .from(purchase.autoRenewing),
                .from(purchase.linkedPurchaseToken), .from(purchase.acknowledged), .from(purchase.appAccountToken),
                .from(purchase.orderId), .from(purchase.voidedAt), .integer(purchase.readAt), .from(purchase.details.storedText),
                .text(answer),
            ])
    }

    func putGrant(_ grant: PromotionalGrant) throws {
        try db.executeLater(GrantCodec.table.postgresPut, GrantCodec.values(appId: appId, grant))
    }

    func putAttribute(appAccountToken: String, name: String, value: String?, at: Int64) throws {
        let table = AttributeCodec.table
        guard let value else {
            return try db.executeLater(table.postgresDelete, [.text(appId), .text(appAccountToken), .text(name)])
        }
        try db.executeLater(table.postgresPut, [.text(appId), .text(appAccountToken), .text(name), .text(value), .integer(at)])
    }

    func putAppDownload(_ download: AppDownload) throws {
        try db.executeLater(AppDownloadCodec.table.postgresPut, AppDownloadCodec.values(appId: appId, download))
    }

    func insertAcknowledgementIfNew(_ pending: PendingAcknowledgement) throws {
        try db.executeLater(
            StoredTables.playAcknowledgements.postgresInsertIfNew,
            [
                .text(appId), .text(pending.purchaseToken), .text(pending.kind.rawValue), .text(pending.productId),
                .integer(Int64(pending.attempts)), .integer(pending.queuedAt), .integer(pending.nextAt),
            ])
    }

    func rescheduleAcknowledgement(purchaseToken: String, retryAt: Int64) throws {
        try db.executeLater(
            "UPDATE play_acknowledgements SET attempts = attempts + 1, next_at = $3 WHERE app_id = $1 AND purchase_token = $2",
            [.text(appId), .text(purchaseToken), .integer(retryAt)])
    }

    func removeAcknowledgement(purchaseToken: String) throws {
        try db.executeLater(
            "DELETE FROM play_acknowledgements WHERE app_id = $1 AND purchase_token = $2", [.text(appId), .text(purchaseToken)])
    }

    func nextEventSequence() throws -> Int64 {
        // Taking the row (`FOR UPDATE`, created on first use) holds it until this commit.
        let rows = try db.execute(
            """
            INSERT INTO event_sequences AS s (app_id, last) VALUES ($1, 0)
            ON CONFLICT (app_id) DO UPDATE SET last = s.last RETURNING last
            """, [.text(appId)])
        return (rows.int64(0, 0) ?? 0) + 1
    }

    func insertEvent(_ event: OutboxEvent) throws {
        try db.executeLater(EventCodec.table.postgresInsert, EventCodec.values(event))
    }

    func eventsWritten(through sequence: Int64) throws {
        try db.executeLater("UPDATE event_sequences SET last = $2 WHERE app_id = $1", [.text(appId), .integer(sequence)])
    }

    func insertDelivery(_ delivery: NewDelivery) throws {
        try db.executeLater(DeliveryCodec.table.postgresInsert, DeliveryCodec.values(appId: appId, delivery))
    }
}
