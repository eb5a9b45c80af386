internal import CSQLite
import Dispatch
import Entitlements
import Foundation
import Synchronization

/// `FactStore` on SQLite.
///
/// - WAL journal, so readers never block the writer nor each other.
/// - One writer connection behind a lock: SQLite allows one writer at a time anyway, and a single
///   connection keeps its prepared statements hot.
/// - `synchronous = FULL`: every commit syncs the WAL before `apply` returns, so a fact the server
///   acknowledged survives a crash or power loss (NORMAL would only survive a process crash).
/// - Reader connections are pooled; each is used by one caller at a time.
public final class SQLiteFactStore: FactStore {
    public let path: String
    let writerLoop: WriterLoop
    /// Deliveries claimed by this process, until when (see `claimDeliveries`).
    let leases = Mutex<[String: Int64]>([:])
    /// What the writer thread remembers between batches (used by it only).
    let memory = WriterMemory()
    private let readers = Mutex<[DatabaseBox]>([])

    /// Lets a connection live in a `Mutex` (see `SQLiteDatabase`'s invariant).
    struct DatabaseBox: @unchecked Sendable { let database: SQLiteDatabase }

    /// Thrown inside the write transaction to roll it back when a link conflicts.
    struct LinkConflict: Error { let existingToken: String }

    /// What the writer connection runs with, read back from SQLite after setting it (the README
    /// promises WAL and FULL; a test pins them).
    public let journalMode: String
    public let synchronousLevel: Int

    public init(path: String) throws {
        self.path = path
        try Self.createPrivately(path)
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL")
        journalMode = try Self.pragma("journal_mode", database)
        synchronousLevel = Int(try Self.pragma("synchronous", database)) ?? -1
        try Self.migrate(database)
        writerLoop = WriterLoop(database: database)
        writerLoop.start()
    }

    /// A new database file is created readable by its owner only (the facts are customers'
    /// purchases); SQLite gives its `-wal` and `-shm` files the same mode. An existing file keeps
    /// the mode its operator chose.
    private static func createPrivately(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
        } else if errno != EEXIST {
            throw StorageError(code: SQLITE_CANTOPEN, message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    private static func pragma(_ name: String, _ database: SQLiteDatabase) throws -> String {
        let query = try database.statement("PRAGMA \(name)")
        defer { query.reset() }
        return try query.step() ? query.text(0) ?? "" : ""
    }

    /// Applies the migrations the file has not seen yet (`PRAGMA user_version` counts them).
    static func migrate(_ database: SQLiteDatabase) throws {
        let version = try database.statement("PRAGMA user_version")
        _ = try version.step()
        let current = Int(version.int64(0) ?? 0)
        version.reset()
        for (index, migration) in Migrations.all.enumerated() where index >= current {
            try database.transaction {
                try database.execute(migration)
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    // MARK: - Writing

    /// Group commit on the writer thread: every write queued while the previous commit was syncing
    /// is written in one SQLite transaction (each inside its own savepoint, so one batch's conflict
    /// rolls back only that batch) and shares one WAL sync. Completions run after the commit.
    public func apply(_ batch: FactBatch, completion: @escaping @Sendable (Result<ApplyOutcome, Error>) -> Void) {
        writerLoop.enqueue({ [memory] in try Self.writeOrRollBack(batch, into: $0, memory: memory) }) { result in
            if case .success(let (outcome, events)) = result, batch.wroteToOutbox(outcome, events: events) {
                batch.eventWriter?.committed(events)
            }
            completion(result.map(\.0))
        }
    }

    /// Blocks until the batch is durable (tests, the CLI, handlers already off the event loops).
    public func apply(_ batch: FactBatch) throws -> ApplyOutcome {
        let (outcome, events) = try writerLoop.perform { [memory] in try Self.writeOrRollBack(batch, into: $0, memory: memory) }
        if batch.wroteToOutbox(outcome, events: events) { batch.eventWriter?.committed(events) }
        return outcome
    }

    deinit { writerLoop.stop() }

    /// A link conflict undoes the whole batch (the notification too, so Apple's retry is applied).
    static func writeOrRollBack(
        _ batch: FactBatch, into database: SQLiteDatabase, memory: WriterMemory
    ) throws -> (ApplyOutcome, [OutboxEvent]) {
        do { return try write(batch, into: database, memory: memory) } catch let conflict as LinkConflict {
            throw WriterLoop.RolledBack(value: (ApplyOutcome.linkConflict(existingToken: conflict.existingToken), [OutboxEvent]()))
        }
    }

    /// The batch's facts, then the events they cause (returned, to be announced after the commit).
    static func write(_ batch: FactBatch, into database: SQLiteDatabase, memory: WriterMemory) throws -> (ApplyOutcome, [OutboxEvent]) {
        if let notification = batch.notification {
            try database.statement(
                """
                INSERT INTO notifications (notification_uuid, app_id, environment, notification_type, subtype,
                    signed_date, received_at, original_transaction_id, jws)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (notification_uuid) DO NOTHING
                """
            ).bind([
                .text(notification.notificationUUID), .text(notification.appId), .text(notification.environment),
                .text(notification.notificationType), .from(notification.subtype), .integer(notification.signedDate),
                .integer(notification.receivedAt), .from(notification.originalTransactionId),
                .text(notification.jws),
            ]).run()
            if database.changes == 0 { return (.duplicateNotification, []) }
        }
        if let message = batch.pubsubMessageId,
            try !recordMessage(message, app: batch.appId, at: batch.requestedAt, into: database)
        {
            return (.duplicateNotification, [])
        }
        // What the batch changes, read once before writing (events are derived from it).
        let pending = try batch.eventWriter.map {
            try FactChange.read(
                batch, environments: $0.environments,
                from: SQLiteFactReader(database: database, appId: batch.appId, grantedTokens: memory.grantedTokens))
        }
        var outcome = ApplyOutcome.applied
        if let requested = batch.requestedLink,
            let existing = try token(database, batch.appId, batch.environment, requested.originalTransactionId),
            existing != requested.appAccountToken
        {
            guard batch.transfersLink else { throw LinkConflict(existingToken: existing) }
            try transfer(database, batch, requested.originalTransactionId, from: existing, to: requested.appAccountToken)
            outcome = .transferred(from: existing)
        }
        for (record, jws) in batch.transactions {
            try upsert(database, record, jws: jws, app: batch.appId)
            try recordAppTransaction(database, batch.appId, record.environment, record.originalTransactionId, record.appTransactionId)
        }
        if let (record, jws) = batch.renewal {
            try upsert(database, record, jws: jws, app: batch.appId)
            try recordAppTransaction(database, batch.appId, record.environment, record.originalTransactionId, record.appTransactionId)
        }
        for (original, signal) in batch.signals {
            try database.statement("INSERT INTO signals (app_id, environment, original_transaction_id, kind, at) VALUES (?, ?, ?, ?, ?)")
                .bind([
                    .text(batch.appId), .text(batch.environment), .text(original), .text(signal.kind.storedName),
                    .integer(signal.at),
                ]).run()
        }
        if let requested = batch.requestedLink {
            try link(database, batch.appId, batch.environment, requested.originalTransactionId, requested.appAccountToken)
            if batch.queuesTokenCall {
                try database.statement(
                    """
                    INSERT INTO token_calls (app_id, environment, original_transaction_id, app_account_token, attempts, next_at)
                    VALUES (?, ?, ?, ?, 0, ?) ON CONFLICT (app_id, environment, original_transaction_id)
                    DO UPDATE SET app_account_token = excluded.app_account_token, attempts = 0, next_at = excluded.next_at
                    """
                ).bind([
                    .text(batch.appId), .text(batch.environment), .text(requested.originalTransactionId),
                    .text(requested.appAccountToken), .integer(batch.requestedAt),
                ]).run()
            }
        }
        if let outcome = batch.tokenCallOutcome {
            if let retryAt = outcome.retryAt {
                try database.statement(
                    """
                    UPDATE token_calls SET attempts = attempts + 1, next_at = ?
                    WHERE app_id = ? AND environment = ? AND original_transaction_id = ?
                    """
                ).bind([.integer(retryAt), .text(batch.appId), .text(batch.environment), .text(outcome.originalTransactionId)]).run()
            } else {
                try database.statement(
                    "DELETE FROM token_calls WHERE app_id = ? AND environment = ? AND original_transaction_id = ?"
                ).bind([.text(batch.appId), .text(batch.environment), .text(outcome.originalTransactionId)]).run()
            }
        }
        if let sync = batch.syncRevision {
            try database.statement(
                """
                INSERT INTO sync_revisions (app_id, environment, original_transaction_id, revision) VALUES (?, ?, ?, ?)
                ON CONFLICT (app_id, environment, original_transaction_id) DO UPDATE SET revision = excluded.revision
                """
            ).bind([.text(batch.appId), .text(batch.environment), .text(sync.originalTransactionId), .text(sync.revision)]).run()
        }
        for (purchase, json) in batch.playPurchases { try upsert(purchase, json: json, app: batch.appId, into: database) }
        if let grant = batch.grant {
            try upsert(grant, app: batch.appId, into: database)
            memory.grantedTokens.add(batch.appId, grant.appAccountToken)
        }
        var events: [OutboxEvent] = []
        if let writer = batch.eventWriter, let pending {
            events = writer.events(
                for: FactChange.applying(batch, to: pending), firstSequence: try memory.sequences.next(batch.appId, database))
            try insert(events, into: database)
            if let last = events.last { memory.sequences.used(batch.appId, through: last.sequence) }
        }
        if let forward = batch.forward { try insertForward(forward, batch: batch, into: database) }
        return (outcome, events)
    }

    /// Moves a subscription to another token and records the move.
    static func transfer(_ database: SQLiteDatabase, _ batch: FactBatch, _ original: String, from: String, to: String) throws {
        try database.statement(
            "UPDATE subscriber_links SET app_account_token = ? WHERE app_id = ? AND environment = ? AND original_transaction_id = ?"
        ).bind([.text(to), .text(batch.appId), .text(batch.environment), .text(original)]).run()
        try database.statement(
            """
            INSERT INTO link_transfers (app_id, environment, original_transaction_id, from_token, to_token, at)
            VALUES (?, ?, ?, ?, ?, ?)
            """
        ).bind([.text(batch.appId), .text(batch.environment), .text(original), .text(from), .text(to), .integer(batch.requestedAt)])
            .run()
    }

    /// Inserts, or replaces only with a newer `signedDate` (E-01): an old copy never wins.
    static func upsert(_ database: SQLiteDatabase, _ record: TransactionRecord, jws: String, app: String) throws {
        try database.statement(
            """
            INSERT INTO transactions (app_id, environment, transaction_id, original_transaction_id, product_id,
                subscription_group, type, purchase_date, original_purchase_date, expires_date, revocation_date,
                revocation_reason, revocation_type, is_upgraded, offer_type, offer_discount_type, offer_identifier,
                ownership_type, signed_date, app_account_token, jws, price, currency)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app_id, environment, transaction_id) DO UPDATE SET
                original_transaction_id = excluded.original_transaction_id, product_id = excluded.product_id,
                subscription_group = excluded.subscription_group, type = excluded.type,
                purchase_date = excluded.purchase_date, original_purchase_date = excluded.original_purchase_date,
                expires_date = excluded.expires_date, revocation_date = excluded.revocation_date,
                revocation_reason = excluded.revocation_reason, revocation_type = excluded.revocation_type,
                is_upgraded = excluded.is_upgraded, offer_type = excluded.offer_type,
                offer_discount_type = excluded.offer_discount_type, offer_identifier = excluded.offer_identifier,
                ownership_type = excluded.ownership_type, signed_date = excluded.signed_date,
                app_account_token = excluded.app_account_token, jws = excluded.jws, price = excluded.price,
                currency = excluded.currency
            WHERE excluded.signed_date > transactions.signed_date
            """
        ).bind([
            .text(app), .text(record.environment), .text(record.transactionId), .text(record.originalTransactionId),
            .text(record.productId), .from(record.subscriptionGroupIdentifier), .text(record.type),
            .integer(record.purchaseDate), .from(record.originalPurchaseDate), .from(record.expiresDate),
            .from(record.revocationDate), .from(record.revocationReason), .from(record.revocationType),
            .from(record.isUpgraded), .from(record.offerType), .from(record.offerDiscountType),
            .from(record.offerIdentifier), .from(record.ownershipType), .integer(record.signedDate),
            .from(record.appAccountToken), .text(jws), .from(record.price), .from(record.currency),
        ]).run()
        // The signed token links the subscription to its subscriber (ENTITLEMENTS.md, "Subscribers"),
        // only when this copy was stored: an older copy carrying another token never moves the link.
        if let token = record.appAccountToken, database.changes > 0 {
            try database.statement(
                """
                INSERT INTO subscriber_links (app_id, environment, original_transaction_id, app_account_token)
                VALUES (?, ?, ?, ?) ON CONFLICT (app_id, environment, original_transaction_id)
                DO UPDATE SET app_account_token = excluded.app_account_token
                """
            ).bind([.text(app), .text(record.environment), .text(record.originalTransactionId), .text(token)]).run()
        }
    }

    static func upsert(_ database: SQLiteDatabase, _ record: RenewalRecord, jws: String, app: String) throws {
        try database.statement(
            """
            INSERT INTO renewal_infos (app_id, environment, original_transaction_id, product_id, auto_renew_product_id,
                auto_renew_status, is_in_billing_retry, grace_period_expires_date, expiration_intent,
                eligible_win_back_offer_ids, signed_date, jws)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app_id, environment, original_transaction_id) DO UPDATE SET
                product_id = excluded.product_id, auto_renew_product_id = excluded.auto_renew_product_id,
                auto_renew_status = excluded.auto_renew_status, is_in_billing_retry = excluded.is_in_billing_retry,
                grace_period_expires_date = excluded.grace_period_expires_date,
                expiration_intent = excluded.expiration_intent,
                eligible_win_back_offer_ids = excluded.eligible_win_back_offer_ids,
                signed_date = excluded.signed_date, jws = excluded.jws
            WHERE excluded.signed_date > renewal_infos.signed_date
            """
        ).bind([
            .text(app), .text(record.environment), .text(record.originalTransactionId), .from(record.productId),
            .from(record.autoRenewProductId), .from(record.autoRenewStatus), .from(record.isInBillingRetryPeriod),
            .from(record.gracePeriodExpiresDate), .from(record.expirationIntent),
            .text(record.eligibleWinBackOfferIds.joined(separator: "\n")), .integer(record.signedDate), .text(jws),
        ]).run()
    }

    /// Remembers the app download a subscription belongs to (the same for all its copies).
    static func recordAppTransaction(
        _ database: SQLiteDatabase, _ app: String, _ environment: String, _ original: String, _ appTransactionId: String?
    ) throws {
        guard let appTransactionId else { return }
        try database.statement(
            """
            INSERT INTO app_transactions (app_id, environment, original_transaction_id, app_transaction_id)
            VALUES (?, ?, ?, ?) ON CONFLICT (app_id, environment, original_transaction_id)
            DO UPDATE SET app_transaction_id = excluded.app_transaction_id
            """
        ).bind([.text(app), .text(environment), .text(original), .text(appTransactionId)]).run()
    }

    static func token(_ database: SQLiteDatabase, _ app: String, _ environment: String, _ original: String) throws -> String? {
        let query = try database.statement(
            """
            SELECT app_account_token FROM subscriber_links WHERE app_id = ? AND environment = ? AND original_transaction_id = ?
            """
        ).bind([.text(app), .text(environment), .text(original)])
        return try query.step() ? query.text(0) : nil
    }

    static func link(_ database: SQLiteDatabase, _ app: String, _ environment: String, _ original: String, _ token: String) throws {
        try database.statement(
            """
            INSERT INTO subscriber_links (app_id, environment, original_transaction_id, app_account_token)
            VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING
            """
        ).bind([.text(app), .text(environment), .text(original), .text(token)]).run()
    }

    // MARK: - Reading

    /// At most this many reader connections exist; more concurrent readers wait for one.
    private static let readerLimit = 16
    private let readerSlots = DispatchSemaphore(value: SQLiteFactStore.readerLimit)

    func read<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        readerSlots.wait()
        defer { readerSlots.signal() }
        let box = try readers.withLock { $0.popLast() } ?? DatabaseBox(database: try SQLiteDatabase(path: path))
        defer {
            box.database.resetAll()
            readers.withLock { $0.append(box) }
        }
        return try body(box.database)
    }

    /// One reader connection for the whole answer: the links, then each subscription's facts.
    public func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        try read { try Self.facts($0, appId: appId, environment: environment, appAccountToken: appAccountToken) }
    }

    static func facts(_ database: SQLiteDatabase, appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts]
    {
        let query = try database.statement(
            """
            SELECT original_transaction_id FROM subscriber_links
            WHERE app_id = ? AND environment = ? AND app_account_token = ? ORDER BY original_transaction_id
            """
        ).bind([.text(appId), .text(environment), .text(appAccountToken)])
        var originals: [String] = []
        while try query.step() { if let original = query.text(0) { originals.append(original) } }
        return try originals.compactMap {
            try Self.facts(database, appId: appId, environment: environment, originalTransactionId: $0, token: appAccountToken)
        }
    }

    public func dueTokenCalls(appId: String, now: Int64, limit: Int) throws -> [PendingTokenCall] {
        try read { database in
            let query = try database.statement(
                """
                SELECT environment, original_transaction_id, app_account_token, attempts FROM token_calls
                WHERE app_id = ? AND next_at <= ? ORDER BY next_at LIMIT ?
                """
            ).bind([.text(appId), .integer(now), .integer(Int64(limit))])
            var due: [PendingTokenCall] = []
            while try query.step() {
                due.append(
                    PendingTokenCall(
                        appId: appId, environment: query.text(0) ?? "", originalTransactionId: query.text(1) ?? "",
                        appAccountToken: query.text(2) ?? "", attempts: Int(query.int64(3) ?? 0)))
            }
            return due
        }
    }

    public func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        try read { try Self.linkTransfers($0, appId: appId, environment: environment, appAccountToken: appAccountToken) }
    }

    static func linkTransfers(
        _ database: SQLiteDatabase, appId: String, environment: String, appAccountToken: String
    ) throws -> [LinkTransfer] {
        let query = try database.statement(
            """
            SELECT original_transaction_id, from_token, to_token, at FROM link_transfers
            WHERE app_id = ? AND environment = ? AND (from_token = ? OR to_token = ?) ORDER BY rowid
            """
        ).bind([.text(appId), .text(environment), .text(appAccountToken), .text(appAccountToken)])
        var found: [LinkTransfer] = []
        while try query.step() {
            found.append(
                LinkTransfer(
                    originalTransactionId: query.text(0) ?? "", from: query.text(1) ?? "", to: query.text(2) ?? "",
                    at: query.int64(3) ?? 0))
        }
        return found
    }

    public func originalTransactionIds(appId: String, environment: String, appTransactionId: String) throws -> [String] {
        try read { database in
            let query = try database.statement(
                """
                SELECT original_transaction_id FROM app_transactions
                WHERE app_id = ? AND environment = ? AND app_transaction_id = ? ORDER BY original_transaction_id
                """
            ).bind([.text(appId), .text(environment), .text(appTransactionId)])
            var found: [String] = []
            while try query.step() { if let id = query.text(0) { found.append(id) } }
            return found
        }
    }

    public func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts? {
        try read { database in
            try Self.facts(database, appId: appId, environment: environment, originalTransactionId: originalTransactionId)
        }
    }

    /// `token`, when the caller already knows it (`tokenKnown`: even that there is none), saves
    /// the link lookup.
    static func facts(
        _ database: SQLiteDatabase, appId: String, environment: String, originalTransactionId: String,
        token knownToken: String? = nil, tokenKnown: Bool = false
    ) throws -> SubscriptionFacts? {
        do {
            let bindings: [SQLiteValue] = [.text(appId), .text(environment), .text(originalTransactionId)]
            let transactions = try database.statement(
                """
                SELECT \(Self.transactionColumns)
                FROM transactions WHERE app_id = ? AND environment = ? AND original_transaction_id = ? ORDER BY purchase_date
                """
            ).bind(bindings)
            var records: [TransactionRecord] = []
            while try transactions.step() {
                records.append(Self.transaction(transactions, from: 0, original: originalTransactionId, environment: environment))
            }
            guard !records.isEmpty else { return nil }
            let renewalQuery = try database.statement(
                """
                SELECT \(Self.renewalColumns)
                FROM renewal_infos WHERE app_id = ? AND environment = ? AND original_transaction_id = ?
                """
            ).bind(bindings)
            var renewal: RenewalRecord?
            if try renewalQuery.step() {
                renewal = Self.renewal(renewalQuery, from: 0, original: originalTransactionId, environment: environment)
            }
            let signalQuery = try database.statement(
                """
                SELECT kind, at FROM signals WHERE app_id = ? AND environment = ? AND original_transaction_id = ? ORDER BY at
                """
            ).bind(bindings)
            var signals: [SubscriptionSignal] = []
            while try signalQuery.step() {
                if let kind = signalQuery.text(0).flatMap(SubscriptionSignal.Kind.init(storedName:)) {
                    signals.append(SubscriptionSignal(kind, at: signalQuery.int64(1) ?? 0))
                }
            }
            var token = knownToken
            if token == nil && !tokenKnown {
                let tokenQuery = try database.statement(
                    """
                    SELECT app_account_token FROM subscriber_links WHERE app_id = ? AND environment = ? AND original_transaction_id = ?
                    """
                ).bind(bindings)
                token = try tokenQuery.step() ? tokenQuery.text(0) : nil
            }
            return SubscriptionFacts(
                originalTransactionId: originalTransactionId, environment: environment,
                appAccountToken: token, transactions: records, renewal: renewal, signals: signals)
        }
    }

    static let transactionColumns = """
        transaction_id, product_id, subscription_group, type, purchase_date, original_purchase_date, expires_date,
        revocation_date, revocation_reason, revocation_type, is_upgraded, offer_type, offer_discount_type,
        offer_identifier, ownership_type, signed_date, app_account_token, price, currency
        """

    static let renewalColumns = """
        product_id, auto_renew_product_id, auto_renew_status, is_in_billing_retry, grace_period_expires_date,
        expiration_intent, eligible_win_back_offer_ids, signed_date
        """

    /// A transaction from `transactionColumns`, starting at column `first`.
    static func transaction(_ row: SQLiteStatement, from first: Int32, original: String, environment: String) -> TransactionRecord {
        TransactionRecord(
            transactionId: row.text(first) ?? "", originalTransactionId: original, productId: row.text(first + 1) ?? "",
            subscriptionGroupIdentifier: row.text(first + 2), type: row.text(first + 3) ?? "", purchaseDate: row.int64(first + 4) ?? 0,
            originalPurchaseDate: row.int64(first + 5), expiresDate: row.int64(first + 6), revocationDate: row.int64(first + 7),
            revocationReason: row.int64(first + 8), revocationType: row.text(first + 9), isUpgraded: row.int64(first + 10) == 1,
            offerType: row.int64(first + 11), offerDiscountType: row.text(first + 12), offerIdentifier: row.text(first + 13),
            ownershipType: row.text(first + 14), environment: environment, signedDate: row.int64(first + 15) ?? 0,
            appAccountToken: row.text(first + 16), price: row.int64(first + 17), currency: row.text(first + 18))
    }

    /// A renewal info from `renewalColumns`, starting at column `first`.
    static func renewal(_ row: SQLiteStatement, from first: Int32, original: String, environment: String) -> RenewalRecord {
        let offers = row.text(first + 6) ?? ""
        return RenewalRecord(
            originalTransactionId: original, productId: row.text(first), autoRenewProductId: row.text(first + 1),
            autoRenewStatus: row.int64(first + 2), isInBillingRetryPeriod: row.int64(first + 3) == 1,
            gracePeriodExpiresDate: row.int64(first + 4), expirationIntent: row.int64(first + 5),
            eligibleWinBackOfferIds: offers.isEmpty ? [] : offers.components(separatedBy: "\n"), environment: environment,
            signedDate: row.int64(first + 7) ?? 0)
    }

    public func syncRevision(appId: String, environment: String, originalTransactionId: String) throws -> String? {
        try read { database in
            let query = try database.statement(
                "SELECT revision FROM sync_revisions WHERE app_id = ? AND environment = ? AND original_transaction_id = ?"
            ).bind([.text(appId), .text(environment), .text(originalTransactionId)])
            return try query.step() ? query.text(0) : nil
        }
    }

    public func originalTransactionId(appId: String, environment: String, transactionId: String) throws -> String? {
        try read { database in
            let query = try database.statement(
                "SELECT original_transaction_id FROM transactions WHERE app_id = ? AND environment = ? AND transaction_id = ?"
            ).bind([.text(appId), .text(environment), .text(transactionId)])
            return try query.step() ? query.text(0) : nil
        }
    }

    public func notifications(appId: String, limit: Int, before: Int64?) throws -> [StoredNotification] {
        try read { database in
            let query = try database.statement(
                """
                SELECT \(Self.notificationColumns)
                FROM notifications WHERE app_id = ? AND sequence < ? ORDER BY sequence DESC LIMIT ?
                """
            ).bind([.text(appId), .integer(before ?? Int64.max), .integer(Int64(limit))])
            var found: [StoredNotification] = []
            while try query.step() { found.append(Self.notification(query, appId: appId)) }
            return found
        }
    }

    static let notificationColumns = """
        sequence, notification_uuid, environment, notification_type, subtype, signed_date, received_at, original_transaction_id, jws
        """

    /// A notification from `notificationColumns`.
    static func notification(_ query: SQLiteStatement, appId: String) -> StoredNotification {
        var notification = StoredNotification(
            notificationUUID: query.text(1) ?? "", appId: appId, environment: query.text(2) ?? "", notificationType: query.text(3) ?? "",
            subtype: query.text(4), signedDate: query.int64(5) ?? 0, receivedAt: query.int64(6) ?? 0,
            originalTransactionId: query.text(7), jws: query.text(8) ?? "")
        notification.sequence = query.int64(0) ?? 0
        return notification
    }

    public func checkHealth() throws {
        try read { database in _ = try database.statement("SELECT 1").step() }
    }

    /// `PRAGMA integrity_check` (the durability test and operators use it).
    public func integrityCheck() throws -> String {
        try read { database in
            let query = try database.statement("PRAGMA integrity_check")
            return try query.step() ? query.text(0) ?? "" : ""
        }
    }
}

extension SubscriptionSignal.Kind {
    var storedName: String {
        switch self {
        case .billingIssue: "billing_issue"
        case .renewed: "renewed"
        case .autoRenewDisabled: "auto_renew_disabled"
        case .autoRenewEnabled: "auto_renew_enabled"
        }
    }

    init?(storedName: String) {
        switch storedName {
        case "billing_issue": self = .billingIssue
        case "renewed": self = .renewed
        case "auto_renew_disabled": self = .autoRenewDisabled
        case "auto_renew_enabled": self = .autoRenewEnabled
        default: return nil
        }
    }
}
