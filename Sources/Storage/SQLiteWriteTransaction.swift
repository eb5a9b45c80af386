import Entitlements

/// The writer connection inside a group commit, as `FactWriter` uses it: SQLite's statements for
/// each primitive and nothing else. There is one writer, so `lock` has nothing to do.
struct SQLiteWriteTransaction: FactWriteTransaction {
    let database: SQLiteDatabase
    let appId: String
    let memory: SQLiteFactStore.WriterMemory
    let unreadable: UnreadableRows

    // MARK: Reading

    func facts(environment: String, originalTransactionId: String, storedToken: String??) throws -> SubscriptionFacts? {
        try SQLiteFactStore.facts(
            database, appId: appId, environment: environment, originalTransactionId: originalTransactionId, token: storedToken ?? nil,
            tokenKnown: storedToken != nil, evenWithoutTransactions: true)
    }

    func facts(environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        try SQLiteFactStore.facts(database, appId: appId, environment: environment, appAccountToken: appAccountToken)
    }

    func token(environment: String, originalTransactionId: String) throws -> String? {
        let query = try database.statement(
            "SELECT app_account_token FROM subscriber_links WHERE app_id = ? AND environment = ? AND original_transaction_id = ?"
        ).bind([.text(appId), .text(environment), .text(originalTransactionId)])
        return try query.step() ? query.text(0) : nil
    }

    func linkTransfers(environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        try SQLiteFactStore.linkTransfers(database, appId: appId, environment: environment, appAccountToken: appAccountToken)
    }

    func grants(environment: String, appAccountToken: String) throws -> [PromotionalGrant] {
        guard try memory.grantedTokens.mayHave(appId, appAccountToken, database) else { return [] }
        return try SQLiteFactStore.grants(database, appId: appId, environment: environment, appAccountToken: appAccountToken)
    }

    func grant(id: String) throws -> PromotionalGrant? { try SQLiteFactStore.grant(database, appId: appId, id: id) }

    func playPurchases(appAccountToken: String) throws -> [PlayPurchase] {
        try SQLiteFactStore.playPurchases(database, appId: appId, appAccountToken: appAccountToken)
    }

    func playPurchase(token: String) throws -> PlayPurchase? {
        try SQLiteFactStore.playPurchase(database, appId: appId, purchaseToken: token)
    }

    func appDownloads(appAccountToken: String) throws -> [AppDownload] {
        try SQLiteFactStore.appDownloads(database, appId: appId, appAccountToken: appAccountToken)
    }

    func experimentAssignments(appAccountToken: String) throws -> [ExperimentAssignment] {
        try SQLiteFactStore.experimentAssignments(database, appId: appId, appAccountToken: appAccountToken)
    }

    // MARK: Writing

    func lock(_ keys: [String]) throws {}

    func insertNotificationIfNew(_ notification: StoredNotification) throws -> Bool {
        try database.statement(NotificationCodec.table.sqliteInsertIfNew).bind(NotificationCodec.values(notification)).run()
        return database.changes > 0
    }

    func insertPubSubMessageIfNew(_ messageId: String, receivedAt: Int64) throws -> Bool {
        try database.statement(
            StoredTables.pubSubMessages.sqliteInsertIfNew
        ).bind([.text(appId), .text(messageId), .integer(receivedAt)]).run()
        return database.changes > 0
    }

    func putTransaction(_ record: TransactionRecord, jws: String) throws {
        try database.statement(TransactionCodec.table.sqlitePut).bind(TransactionCodec.values(appId: appId, record, jws: jws)).run()
    }

    func putRenewal(_ record: RenewalRecord, jws: String) throws {
        try database.statement(RenewalCodec.table.sqlitePut).bind(RenewalCodec.values(appId: appId, record, jws: jws)).run()
    }

    func putAppTransaction(environment: String, originalTransactionId: String, appTransactionId: String) throws {
        try database.statement(StoredTables.appTransactions.sqlitePut).bind([
            .text(appId), .text(environment), .text(originalTransactionId), .text(appTransactionId),
        ]).run()
    }

    func insertSignal(environment: String, originalTransactionId: String, _ signal: SubscriptionSignal) throws {
        try database.statement(StoredTables.signals.sqliteInsertIfNew)
            .bind([.text(appId), .text(environment), .text(originalTransactionId), .text(signal.kind.storedName), .integer(signal.at)])
            .run()
    }

    func putLink(environment: String, originalTransactionId: String, appAccountToken: String) throws {
        try database.statement(StoredTables.subscriberLinks.sqlitePut).bind([
            .text(appId), .text(environment), .text(originalTransactionId), .text(appAccountToken),
        ]).run()
    }

    func insertTransfer(environment: String, _ transfer: LinkTransfer) throws {
        try database.statement(StoredTables.linkTransfers.sqliteInsertIfNew).bind([
            .text(appId), .text(environment), .text(transfer.originalTransactionId), .text(transfer.from), .text(transfer.to),
            .integer(transfer.at),
        ]).run()
    }

    func putAppleCall(_ call: PendingAppleCall, dueAt: Int64) throws {
        try database.statement(StoredTables.appleCalls.sqlitePut).bind([
            .text(appId), .text(call.environment), .text(call.kind.rawValue), .text(call.transactionId), .from(call.appAccountToken),
            .integer(Int64(call.attempts)), .integer(dueAt),
        ]).run()
    }

    func rescheduleAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String, retryAt: Int64) throws {
        try database.statement(
            """
            UPDATE apple_calls SET attempts = attempts + 1, next_at = ?
            WHERE app_id = ? AND environment = ? AND kind = ? AND transaction_id = ?
            """
        ).bind([.integer(retryAt), .text(appId), .text(environment), .text(kind.rawValue), .text(transactionId)]).run()
    }

    func removeAppleCall(environment: String, kind: PendingAppleCall.Kind, transactionId: String) throws {
        try database.statement("DELETE FROM apple_calls WHERE app_id = ? AND environment = ? AND kind = ? AND transaction_id = ?")
            .bind([.text(appId), .text(environment), .text(kind.rawValue), .text(transactionId)]).run()
    }

    func putSyncRevision(environment: String, originalTransactionId: String, revision: String) throws {
        try database.statement(StoredTables.syncRevisions.sqlitePut).bind([
            .text(appId), .text(environment), .text(originalTransactionId), .text(revision),
        ]).run()
    }

    func putPlayPurchase(_ purchase: PlayPurchase, answer: String) throws {
        try database.statement(StoredTables.playPurchases.sqlitePut).bind(
            [.text(appId)] + SQLiteFactStore.playValues(purchase) + [.text(answer)]
        ).run()
    }

    func putGrant(_ grant: PromotionalGrant) throws {
        try database.statement(GrantCodec.table.sqlitePut).bind(GrantCodec.values(appId: appId, grant)).run()
        memory.grantedTokens.add(appId, grant.appAccountToken)
    }

    func putAttribute(appAccountToken: String, name: String, value: String?, at: Int64) throws {
        let table = AttributeCodec.table
        guard let value else {
            return try database.statement(table.sqliteDelete).bind([.text(appId), .text(appAccountToken), .text(name)]).run()
        }
        try database.statement(table.sqlitePut).bind([.text(appId), .text(appAccountToken), .text(name), .text(value), .integer(at)]).run()
    }

    func putAppDownload(_ download: AppDownload) throws {
        try database.statement(AppDownloadCodec.table.sqlitePut).bind(AppDownloadCodec.values(appId: appId, download)).run()
    }

    func insertAcknowledgementIfNew(_ pending: PendingAcknowledgement) throws {
        try database.statement(StoredTables.playAcknowledgements.sqliteInsertIfNew).bind([
            .text(appId), .text(pending.purchaseToken), .text(pending.kind.rawValue), .text(pending.productId),
            .integer(Int64(pending.attempts)), .integer(pending.queuedAt), .integer(pending.nextAt),
        ]).run()
    }

    func rescheduleAcknowledgement(purchaseToken: String, retryAt: Int64) throws {
        try database.statement(
            "UPDATE play_acknowledgements SET attempts = attempts + 1, next_at = ? WHERE app_id = ? AND purchase_token = ?"
        ).bind([.integer(retryAt), .text(appId), .text(purchaseToken)]).run()
    }

    func removeAcknowledgement(purchaseToken: String) throws {
        try database.statement("DELETE FROM play_acknowledgements WHERE app_id = ? AND purchase_token = ?")
            .bind([.text(appId), .text(purchaseToken)]).run()
    }

    func nextEventSequence() throws -> Int64 { try memory.sequences.next(appId, database) }

    func insertEvent(_ event: OutboxEvent) throws {
        try database.statement(EventCodec.table.sqliteInsert).bind(EventCodec.values(event)).run()
    }

    func eventsWritten(through sequence: Int64) throws { memory.sequences.used(appId, through: sequence) }

    func insertDelivery(_ delivery: NewDelivery) throws {
        try database.statement(DeliveryCodec.table.sqliteInsert).bind(DeliveryCodec.values(appId: appId, delivery)).run()
    }
}
