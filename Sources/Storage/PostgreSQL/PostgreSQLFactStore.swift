package import Entitlements
import Foundation
import Synchronization

/// `FactStore` on PostgreSQL, for several stateless Entitle instances on one database.
///
/// What gives each guarantee (docs/OPERATIONS.md, "Several instances on PostgreSQL"), with `FactWriter` deciding what is written:
/// - A notification is stored and applied once: `INSERT … ON CONFLICT (notification_uuid) DO
///   NOTHING RETURNING`; a concurrent duplicate waits on the unique index, then finds the row.
/// - Facts of one subscription are applied one transaction at a time: each batch first takes
///   `pg_advisory_xact_lock` on every subscription, grant and Play purchase it touches (in a
///   fixed order), so the state the writer merges into, and derives events from, is the one the
///   previous writer committed; the writer's puts are then never lost to a concurrent one.
/// - Event sequences follow commit order: the app's `event_sequences` row is locked
///   (`FOR UPDATE`) by each transaction that writes events, until its commit.
/// - A delivery is made by one instance at a time: claims take rows `FOR UPDATE SKIP LOCKED` and
///   push `next_at` past the lease.
/// Every call blocks on the network: writes run on the store's own threads, reads on the caller's
/// (the blocking pool), never an event loop.
package final class PostgreSQLFactStore: FactStore {
    let pool: PostgreSQLPool
    private let workers: PostgreSQLWorkers
    /// Batches waiting for a worker; a worker commits all it finds (up to `groupLimit`) in one
    /// transaction, each in its own savepoint: one WAL flush and one hold of the sequence row
    /// for the group, as SQLite's writer does.
    private let queued = Mutex<[(FactBatch, @Sendable (Result<AppliedBatch, any Error>) -> Void)]>([])
    private static let groupLimit = 256
    /// Writer threads: few, so that batches queue up while a group commits and the next group is
    /// large. Every group holds the app's event counter from its events to its commit (its WAL
    /// flush included): throughput comes from batches per commit, not from commits at once.
    private static let writerThreads = 2
    /// When a writer last folded the appended metric changes into the day sums (epoch ms).
    private let lastMetricsRollUp = Mutex<Int64>(0)
    private static let metricsRollUpMilliseconds: Int64 = 1000
    /// Batches this process has written, and the count at which it next refreshes the planner's
    /// statistics (`analyzeWhenDue`).
    private let statistics = Mutex<(written: Int, nextAnalyze: Int)>((0, PostgreSQLFactStore.firstAnalyze))
    private static let firstAnalyze = 512
    private static let lastAnalyze = 2_000_000
    /// Told of a failure of the store's own background work (`metrics_rollup`), which no caller
    /// waits for: the server logs and counts it.
    private let reportBackgroundFailure: @Sendable (_ task: String, _ error: any Error) -> Void
    package let unreadableRows = UnreadableRows()

    /// `url` is a libpq connection string (`postgresql://user:pass@host:5432/db`); `poolSize`
    /// bounds the connections (and concurrent transactions) of this process. Failures of the
    /// store's background work go to `reportBackgroundFailure` (by default, standard error).
    package init(
        url: String, poolSize: Int = 8,
        reportBackgroundFailure: @escaping @Sendable (_ task: String, _ error: any Error) -> Void = PostgreSQLFactStore
            .printBackgroundFailure
    ) throws {
        self.reportBackgroundFailure = reportBackgroundFailure
        pool = PostgreSQLPool(conninfo: url, size: poolSize)
        workers = PostgreSQLWorkers(threads: min(poolSize, Self.writerThreads))
        try PostgreSQLMigrations.migrate(pool)
    }

    deinit { workers.stop(threads: min(pool.size, Self.writerThreads)) }

    /// Connects once to `url` and asks for `SELECT 1`, without migrating (`entitle check-config`:
    /// what `serve` would hit first). Throws libpq's reason, which never holds the password.
    package static func checkConnection(url: String) throws {
        let connection = try PostgreSQLConnection(conninfo: url)
        try connection.execute("SELECT 1")
    }

    // MARK: - Writing

    package func write(_ batch: FactBatch, completion: @escaping @Sendable (Result<AppliedBatch, any Error>) -> Void) {
        queued.withLock { $0.append((batch, completion)) }
        workers.submit { [self] in commitQueued() }
    }

    /// Takes what is queued and commits it as one group. Should the group fail as a whole (a
    /// deadlock between two groups' locks, a failed commit), each batch is applied on its own.
    private func commitQueued() {
        let group = queued.withLock { queue in
            let taken = Array(queue.prefix(Self.groupLimit))
            queue.removeFirst(taken.count)
            return taken
        }
        guard !group.isEmpty else { return }
        let results: [Result<AppliedBatch, any Error>]
        do {
            results = try pool.transaction { db in
                // Every lock of the group first, in one sorted order: two groups never wait on
                // each other's locks in opposite orders (a deadlock PostgreSQL would take a
                // second to detect), and a batch rolled back to its savepoint keeps them.
                let held = Set(group.flatMap { FactWriter.lockKeys($0.0) })
                try PostgreSQLWriteTransaction.lock(held.sorted(), on: db)
                var written = try group.enumerated().map { index, item -> Result<FactWriter.Written, any Error> in
                    // Deferred, as the batch's puts are: they go with its first read.
                    try db.executeLater("SAVEPOINT b\(index)")
                    do {
                        let facts = try FactWriter.writeFacts(
                            item.0,
                            into: PostgreSQLWriteTransaction(db: db, appId: item.0.appId, unreadable: unreadableRows, heldLocks: held))
                        if facts.undo {
                            db.discardDeferred()
                            try db.execute("ROLLBACK TO SAVEPOINT b\(index)")
                        } else {
                            try db.executeLater("RELEASE SAVEPOINT b\(index)")
                        }
                        return .success(facts)
                    } catch let error as StorageError where db.isHealthy && error.sqlState?.hasPrefix("40") != true {
                        db.discardDeferred()
                        try db.execute("ROLLBACK TO SAVEPOINT b\(index)")
                        return .failure(error)
                    }
                }
                // The events last, all of the group's at once: the app's counter row is taken
                // here and held until the commit that follows.
                var sequences: [String: Int64] = [:]
                for index in written.indices {
                    guard case .success(var facts) = written[index] else { continue }
                    try FactWriter.writeEvents(
                        &facts,
                        into: PostgreSQLWriteTransaction(db: db, appId: group[index].0.appId, unreadable: unreadableRows, heldLocks: held),
                        sequences: &sequences)
                    written[index] = .success(facts)
                }
                for (app, next) in sequences {
                    try PostgreSQLWriteTransaction(db: db, appId: app, unreadable: unreadableRows, heldLocks: held).eventsWritten(
                        through: next - 1)
                }
                return written.map { $0.map(\.applied) }
            }
        } catch {
            for (batch, completion) in group { completion(Result { try write(batch) }) }
            return
        }
        for ((_, completion), result) in zip(group, results) { completion(result) }
        rollUpMetricsWhenDue()
        analyzeWhenDue(written: group.count)
    }

    /// The planner's statistics, taken again by this process as a young database fills: at 512
    /// batches written, then at eight times as many each time, up to two million. Autovacuum
    /// takes them only after a minute's nap, and until then PostgreSQL plans for the tables as
    /// they were (nearly empty): it then reads a subscription by walking a prefix of another
    /// index, and a launch or an import on a fresh database ran at a tenth of its speed. Past
    /// two million, autovacuum's own thresholds (a tenth of a table changed) keep up.
    private func analyzeWhenDue(written: Int) {
        let due = statistics.withLock { state in
            state.written += written
            guard state.written >= state.nextAnalyze, state.nextAnalyze <= Self.lastAnalyze else { return false }
            state.nextAnalyze *= 8
            return true
        }
        guard due else { return }
        do {
            _ = try pool.with { try $0.execute("ANALYZE " + StoredTables.all.map(\.name).joined(separator: ", ")) }
        } catch {
            reportBackgroundFailure("analyze", error)
        }
    }

    /// About once a second while writes come, after a group has answered: the appended metric
    /// changes are folded into the day sums, so that a reader's deltas stay few.
    private func rollUpMetricsWhenDue() {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let due = lastMetricsRollUp.withLock { last in
            guard now - last >= Self.metricsRollUpMilliseconds else { return false }
            last = now
            return true
        }
        guard due else { return }
        do {
            try pool.with { try Self.rollUpMetrics($0) }
        } catch {
            // Nothing is lost: the changes stay appended, readers count them, the next roll-up
            // folds them. But a roll-up that keeps failing lets the deltas grow: it is reported.
            reportBackgroundFailure("metrics_rollup", error)
        }
    }

    /// Where background failures go when nobody asked for them (tools, tests): standard error.
    package static func printBackgroundFailure(task: String, error: any Error) {
        FileHandle.standardError.write(Data("entitle: PostgreSQL \(task) failed: \(error)\n".utf8))
    }

    /// Folds the appended metric changes now (tests; writers do it about once a second).
    package func rollUpMetrics() throws { try pool.with { try Self.rollUpMetrics($0) } }

    package func write(_ batch: FactBatch) throws -> AppliedBatch {
        try pool.transaction { [unreadableRows] in try Self.write(batch, $0, unreadable: unreadableRows) }
    }

    /// A batch through `FactWriter` on the transaction's connection; what it must undo is rolled
    /// back (to the batch's savepoint), its answer kept.
    static func write(_ batch: FactBatch, _ db: PostgreSQLConnection, unreadable: UnreadableRows) throws -> AppliedBatch {
        let written = try FactWriter.write(batch, into: PostgreSQLWriteTransaction(db: db, appId: batch.appId, unreadable: unreadable))
        if written.undo { throw PostgreSQLPool.RolledBackAnswer(value: written.applied) }
        return written.applied
    }

    // MARK: - Reading

    package func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        try pool.with { try Self.facts($0, appId: appId, environment: environment, appAccountToken: appAccountToken) }
    }

    /// A subscriber's subscriptions (those with a transaction) in one statement.
    static func facts(
        _ db: PostgreSQLConnection, appId: String, environment: String, appAccountToken: String
    ) throws
        -> [SubscriptionFacts]
    {
        // A subscription with renewal info or signals but no transaction is not a subscription yet.
        try subscriptions(
            db, byTokenStatement, [.text(appId), .text(environment), .text(appAccountToken)], environment: environment
        )
        .filter { !$0.transactions.isEmpty }
    }

    package func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts? {
        try pool.with { try Self.facts($0, appId: appId, environment: environment, originalTransactionId: originalTransactionId) }
    }

    /// One subscription, link included, in one statement; `evenWithoutTransactions`: also when
    /// only its renewal info, signals or link are stored.
    static func facts(
        _ db: PostgreSQLConnection, appId: String, environment: String, originalTransactionId: String,
        evenWithoutTransactions: Bool = false
    ) throws -> SubscriptionFacts? {
        let found = try subscriptions(
            db, byOriginalStatement, [.text(appId), .text(environment), .text(originalTransactionId)], environment: environment
        ).first
        return evenWithoutTransactions || found?.transactions.isEmpty == false ? found : nil
    }

    /// The statement and parameters of `facts(…originalTransactionId…)`, for a caller that sends it
    /// together with another (`subscription(from:)` reads its rows).
    static func subscriptionRead(appId: String, environment: String, originalTransactionId: String) -> (String, [PGValue]) {
        (byOriginalStatement, [.text(appId), .text(environment), .text(originalTransactionId)])
    }

    /// The one subscription in rows of `subscriptionRead`, even without transactions.
    static func subscription(from rows: PGRows, environment: String) -> SubscriptionFacts? {
        subscriptions(rows, environment: environment).first
    }

    /// The subscriptions a subscriber is linked to.
    private static let byTokenStatement = subscriptionsStatement {
        linked($0, environments: "l.environment = $2")
    }

    /// One subscription.
    private static let byOriginalStatement = subscriptionsStatement {
        "FROM \($0) x WHERE x.app_id = $1 AND x.environment = $2 AND x.original_transaction_id = $3"
    }

    /// `FROM … WHERE …` giving `x`, the rows of `table` of the subscriptions the subscriber `$3`
    /// of app `$1` is linked to (in the environments `environments` names), found from the
    /// links: each subscription's rows are then one index range. The `OFFSET 0` keeps PostgreSQL
    /// from flattening the lateral part into a join it may reorder: on a database whose
    /// statistics were taken while it was nearly empty, the planner walked every transaction of
    /// the app for each read of a new customer (a launch's first purchases ran at 77/s).
    static func linked(_ table: String, environments: String) -> String {
        """
        FROM subscriber_links l CROSS JOIN LATERAL (
            SELECT * FROM \(table) t WHERE t.app_id = l.app_id AND t.environment = l.environment
                AND t.original_transaction_id = l.original_transaction_id OFFSET 0) x
        WHERE l.app_id = $1 AND \(environments) AND l.app_account_token = $3
        """
    }

    /// The transactions, renewal infos, signals and links of the subscriptions `scope` picks (a
    /// `JOIN … WHERE` on `x`), in one statement whatever their number: every column as text (the
    /// parts' types differ), each part padded to the transactions' width, told apart by the first.
    /// Made once: the text is the prepared statement's key, and building it cost more than a read.
    private static func subscriptionsStatement(scope: (String) -> String) -> String {
        let text = PostgreSQLText.self
        return """
            SELECT * FROM (
                SELECT 't' AS kind, x.original_transaction_id, x.purchase_date AS ordering, \(text.columns(transactionColumns))
                \(scope("transactions"))
                UNION ALL
                SELECT 'r', x.original_transaction_id, 0, \(text.columns(renewalColumns)), \(text.padding(after: renewalColumns))
                \(scope("renewal_infos"))
                UNION ALL
                SELECT 's', x.original_transaction_id, x.at, x.kind, x.at::text, \(text.padding(2)) \(scope("signals"))
                UNION ALL
                SELECT 'l', x.original_transaction_id, 0, x.app_account_token, \(text.padding(1)) \(scope("subscriber_links"))
            ) facts ORDER BY original_transaction_id, kind, ordering, 4
            """
    }

    private static func subscriptions(
        _ db: PostgreSQLConnection, _ statement: String, _ parameters: [PGValue], environment: String
    ) throws -> [SubscriptionFacts] {
        subscriptions(try db.execute(statement, parameters), environment: environment)
    }

    private static func subscriptions(_ rows: PGRows, environment: String) -> [SubscriptionFacts] {
        var byOriginal: [String: SubscriptionFacts] = [:]
        var order: [String] = []
        for row in rows.rows {
            let original = row[1] ?? ""
            if byOriginal[original] == nil {
                order.append(original)
                byOriginal[original] = SubscriptionFacts(
                    originalTransactionId: original, environment: environment, appAccountToken: nil, transactions: [], renewal: nil,
                    signals: [])
            }
            switch row[0] {
            case "t": byOriginal[original]?.transactions.append(transaction(row, from: 3, original: original, environment: environment))
            case "r": byOriginal[original]?.renewal = renewal(row, from: 3, original: original, environment: environment)
            case "l": byOriginal[original]?.appAccountToken = row[3]
            default:
                guard let kind = row[3].flatMap(SubscriptionSignal.Kind.init(storedName:)) else { continue }
                byOriginal[original]?.signals.append(SubscriptionSignal(kind, at: row[4].flatMap { Int64($0) } ?? 0))
            }
        }
        return order.compactMap { byOriginal[$0] }
    }

    static let transactionColumns = StoredTable.list(TransactionCodec.read, "x")
    static let renewalColumns = StoredTable.list(RenewalCodec.read, "x")

    /// A transaction from `transactionColumns`, starting at column `first`.
    static func transaction(_ row: [String?], from first: Int, original: String, environment: String) -> TransactionRecord {
        TransactionCodec.record(PostgreSQLRow(row: row, first: first), original: original, environment: environment)
    }

    /// A renewal info from `renewalColumns`, starting at column `first`.
    static func renewal(_ row: [String?], from first: Int, original: String, environment: String) -> RenewalRecord {
        RenewalCodec.record(PostgreSQLRow(row: row, first: first), original: original, environment: environment)
    }

    package func syncRevision(appId: String, environment: String, originalTransactionId: String) throws -> String? {
        try pool.with { db in
            let rows = try db.execute(
                "SELECT revision FROM sync_revisions WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3",
                [.text(appId), .text(environment), .text(originalTransactionId)])
            return rows.isEmpty ? nil : rows.text(0, 0)
        }
    }

    package func originalTransactionId(appId: String, environment: String, transactionId: String) throws -> String? {
        try pool.with { db in
            let rows = try db.execute(
                "SELECT original_transaction_id FROM transactions WHERE app_id = $1 AND environment = $2 AND transaction_id = $3",
                [.text(appId), .text(environment), .text(transactionId)])
            return rows.isEmpty ? nil : rows.text(0, 0)
        }
    }

    package func dueAppleCalls(appId: String, now: Int64, limit: Int) throws -> [PendingAppleCall] {
        try pool.with { db in
            try db.execute(
                """
                SELECT environment, kind, transaction_id, app_account_token, attempts FROM apple_calls
                WHERE app_id = $1 AND next_at <= $2 ORDER BY next_at, environment, kind, transaction_id LIMIT $3
                """, [.text(appId), .integer(now), .integer(Int64(limit))]
            ).rows.compactMap { row in
                // A kind this version does not make (written by a newer one) stays queued for it.
                guard let kind = row[1].flatMap(PendingAppleCall.Kind.init(rawValue:)) else { return nil }
                return PendingAppleCall(
                    appId: appId, environment: row[0] ?? "", kind: kind, transactionId: row[2] ?? "", appAccountToken: row[3],
                    attempts: Int(row[4] ?? "0") ?? 0)
            }
        }
    }

    package func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        try pool.with { try Self.linkTransfers($0, appId: appId, environment: environment, appAccountToken: appAccountToken) }
    }

    static func linkTransfers(
        _ db: PostgreSQLConnection, appId: String, environment: String, appAccountToken: String
    ) throws
        -> [LinkTransfer]
    {
        try db.execute(
            """
            SELECT original_transaction_id, from_token, to_token, at FROM link_transfers
            WHERE app_id = $1 AND environment = $2 AND (from_token = $3 OR to_token = $3) ORDER BY id
            """, [.text(appId), .text(environment), .text(appAccountToken)]
        ).rows.map { LinkTransfer(originalTransactionId: $0[0] ?? "", from: $0[1] ?? "", to: $0[2] ?? "", at: Int64($0[3] ?? "0") ?? 0) }
    }

    package func originalTransactionIds(appId: String, environment: String, appTransactionId: String) throws -> [String] {
        try pool.with { db in
            try db.execute(
                """
                SELECT original_transaction_id FROM app_transactions
                WHERE app_id = $1 AND environment = $2 AND app_transaction_id = $3 ORDER BY original_transaction_id
                """, [.text(appId), .text(environment), .text(appTransactionId)]
            ).rows.compactMap { $0[0] }
        }
    }

    package func notifications(appId: String, limit: Int, before: Int64?) throws -> [StoredNotification] {
        try pool.with { db in
            try db.execute(
                """
                SELECT \(Self.notificationColumns)
                FROM notifications WHERE app_id = $1 AND sequence < $2 ORDER BY sequence DESC LIMIT $3
                """, [.text(appId), .integer(before ?? Int64.max), .integer(Int64(limit))]
            ).rows.map { Self.notification($0, appId: appId) }
        }
    }

    static let notificationColumns = """
        sequence, notification_uuid, environment, notification_type, subtype, signed_date, received_at, original_transaction_id, jws,
        store
        """

    /// A notification from `notificationColumns`.
    static func notification(_ row: [String?], appId: String) -> StoredNotification {
        var notification = StoredNotification(
            notificationUUID: row[1] ?? "", appId: appId, environment: row[2] ?? "", notificationType: row[3] ?? "", subtype: row[4],
            signedDate: Int64(row[5] ?? "0") ?? 0, receivedAt: Int64(row[6] ?? "0") ?? 0, originalTransactionId: row[7],
            jws: row[8] ?? "")
        notification.store = row[9] ?? "app_store"
        notification.sequence = Int64(row[0] ?? "0") ?? 0
        return notification
    }

    package func checkHealth() throws {
        try pool.with { _ = try $0.execute("SELECT 1") }
    }
}
