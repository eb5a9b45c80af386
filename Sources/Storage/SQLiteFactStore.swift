internal import CSQLite
import Dispatch
package import Entitlements
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
package final class SQLiteFactStore: FactStore {
    package let path: String
    let writerLoop: WriterLoop
    /// Deliveries claimed by this process, until when (see `claimDeliveries`).
    let leases = Mutex<[String: Int64]>([:])
    /// What the writer thread remembers between batches (used by it only).
    let memory = WriterMemory()
    package let unreadableRows = UnreadableRows()
    private let readers = Mutex<[DatabaseBox]>([])

    /// Lets a connection live in a `Mutex` (see `SQLiteDatabase`'s invariant).
    struct DatabaseBox: @unchecked Sendable { let database: SQLiteDatabase }

    /// What the writer connection runs with, read back from SQLite after setting it (docs/ENTITLEMENTS.md,
    /// "Storage", promises WAL and FULL; a test pins them).
    package let journalMode: String
    package let synchronousLevel: Int

    package init(path: String) throws {
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
        try SchemaVersion.requireKnown(found: Int64(current), known: Migrations.all.count)
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
    package func write(_ batch: FactBatch, completion: @escaping @Sendable (Result<AppliedBatch, any Error>) -> Void) {
        writerLoop.enqueue(
            { [memory, unreadableRows] in try Self.writeOrRollBack(batch, into: $0, memory: memory, unreadable: unreadableRows) },
            completion: completion)
    }

    /// Blocks until the batch is durable (tests, the CLI, handlers already off the event loops).
    package func write(_ batch: FactBatch) throws -> AppliedBatch {
        try writerLoop.perform { [memory, unreadableRows] in
            try Self.writeOrRollBack(batch, into: $0, memory: memory, unreadable: unreadableRows)
        }
    }

    deinit { writerLoop.stop() }

    /// A batch through the one writer; what it must undo is rolled back, its answer kept.
    static func writeOrRollBack(
        _ batch: FactBatch, into database: SQLiteDatabase, memory: WriterMemory, unreadable: UnreadableRows
    ) throws -> AppliedBatch {
        let written = try FactWriter.write(
            batch, into: SQLiteWriteTransaction(database: database, appId: batch.appId, memory: memory, unreadable: unreadable))
        if written.undo { throw WriterLoop.RolledBack(value: written.applied) }
        return written.applied
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
    package func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
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

    package func dueAppleCalls(appId: String, now: Int64, limit: Int) throws -> [PendingAppleCall] {
        try read { database in
            let query = try database.statement(
                """
                SELECT environment, kind, transaction_id, app_account_token, attempts FROM apple_calls
                WHERE app_id = ? AND next_at <= ? ORDER BY next_at, environment, kind, transaction_id LIMIT ?
                """
            ).bind([.text(appId), .integer(now), .integer(Int64(limit))])
            var due: [PendingAppleCall] = []
            while try query.step() {
                // A kind this version does not make (written by a newer one) stays queued for it.
                guard let kind = query.text(1).flatMap(PendingAppleCall.Kind.init(rawValue:)) else { continue }
                due.append(
                    PendingAppleCall(
                        appId: appId, environment: query.text(0) ?? "", kind: kind, transactionId: query.text(2) ?? "",
                        appAccountToken: query.text(3), attempts: Int(query.int64(4) ?? 0)))
            }
            return due
        }
    }

    package func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer] {
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

    package func originalTransactionIds(appId: String, environment: String, appTransactionId: String) throws -> [String] {
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

    package func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts? {
        try read { database in
            try Self.facts(database, appId: appId, environment: environment, originalTransactionId: originalTransactionId)
        }
    }

    /// `token`, when the caller already knows it (`tokenKnown`: even that there is none), saves
    /// the link lookup.
    static func facts(
        _ database: SQLiteDatabase, appId: String, environment: String, originalTransactionId: String,
        token knownToken: String? = nil, tokenKnown: Bool = false, evenWithoutTransactions: Bool = false
    ) throws -> SubscriptionFacts? {
        do {
            let bindings: [SQLiteValue] = [.text(appId), .text(environment), .text(originalTransactionId)]
            let transactions = try database.statement(
                """
                SELECT \(Self.transactionColumns)
                FROM transactions WHERE app_id = ? AND environment = ? AND original_transaction_id = ? ORDER BY purchase_date, transaction_id
                """
            ).bind(bindings)
            var records: [TransactionRecord] = []
            while try transactions.step() {
                records.append(Self.transaction(transactions, from: 0, original: originalTransactionId, environment: environment))
            }
            guard !records.isEmpty || evenWithoutTransactions else { return nil }
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
            if records.isEmpty && renewal == nil && signals.isEmpty && token == nil { return nil }
            return SubscriptionFacts(
                originalTransactionId: originalTransactionId, environment: environment,
                appAccountToken: token, transactions: records, renewal: renewal, signals: signals)
        }
    }

    static let transactionColumns = StoredTable.list(TransactionCodec.read)
    static let renewalColumns = StoredTable.list(RenewalCodec.read)

    /// A transaction from `transactionColumns`, starting at column `first`.
    static func transaction(_ row: SQLiteStatement, from first: Int32, original: String, environment: String) -> TransactionRecord {
        TransactionCodec.record(SQLiteRow(statement: row, first: first), original: original, environment: environment)
    }

    /// A renewal info from `renewalColumns`, starting at column `first`.
    static func renewal(_ row: SQLiteStatement, from first: Int32, original: String, environment: String) -> RenewalRecord {
        RenewalCodec.record(SQLiteRow(statement: row, first: first), original: original, environment: environment)
    }

    package func syncRevision(appId: String, environment: String, originalTransactionId: String) throws -> String? {
        try read { database in
            let query = try database.statement(
                "SELECT revision FROM sync_revisions WHERE app_id = ? AND environment = ? AND original_transaction_id = ?"
            ).bind([.text(appId), .text(environment), .text(originalTransactionId)])
            return try query.step() ? query.text(0) : nil
        }
    }

    package func originalTransactionId(appId: String, environment: String, transactionId: String) throws -> String? {
        try read { database in
            let query = try database.statement(
                "SELECT original_transaction_id FROM transactions WHERE app_id = ? AND environment = ? AND transaction_id = ?"
            ).bind([.text(appId), .text(environment), .text(transactionId)])
            return try query.step() ? query.text(0) : nil
        }
    }

    package func notifications(appId: String, limit: Int, before: Int64?) throws -> [StoredNotification] {
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
        sequence, notification_uuid, environment, notification_type, subtype, signed_date, received_at, original_transaction_id, jws,
        store
        """

    /// A notification from `notificationColumns`.
    static func notification(_ query: SQLiteStatement, appId: String) -> StoredNotification {
        var notification = StoredNotification(
            notificationUUID: query.text(1) ?? "", appId: appId, environment: query.text(2) ?? "", notificationType: query.text(3) ?? "",
            subtype: query.text(4), signedDate: query.int64(5) ?? 0, receivedAt: query.int64(6) ?? 0,
            originalTransactionId: query.text(7), jws: query.text(8) ?? "")
        notification.store = query.text(9) ?? "app_store"
        notification.sequence = query.int64(0) ?? 0
        return notification
    }

    package func checkHealth() throws {
        try read { database in _ = try database.statement("SELECT 1").step() }
    }

    /// `PRAGMA integrity_check` (the durability test and operators use it).
    package func integrityCheck() throws -> String {
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
