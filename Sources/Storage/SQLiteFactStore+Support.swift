package import Entitlements

/// What support reads and writes besides the facts: promotional grants, a customer's history,
/// and the overview's counts.
extension SQLiteFactStore {
    /// The customers of each app who have a promotional grant, kept by the writer thread (the only
    /// writer): read once per app, then added to as grants are written. Most customers have none,
    /// so the grants read that events need is skipped for them on the one thread every ingest
    /// goes through. A batch rolled back after adding leaves a token too many: one read more.
    final class GrantedTokens: @unchecked Sendable {
        private var tokens: [String: Set<String>] = [:]

        func mayHave(_ app: String, _ token: String, _ database: SQLiteDatabase) throws -> Bool {
            if tokens[app] == nil {
                let query = try database.statement("SELECT DISTINCT app_account_token FROM grants WHERE app_id = ?").bind([.text(app)])
                var found = Set<String>()
                while try query.step() { if let token = query.text(0) { found.insert(token) } }
                tokens[app] = found
            }
            return tokens[app]!.contains(token)
        }

        func add(_ app: String, _ token: String) { tokens[app]?.insert(token) }
    }

    static let grantColumns = StoredTable.list(GrantCodec.read)

    static func grant(_ query: SQLiteStatement) -> PromotionalGrant { GrantCodec.record(SQLiteRow(statement: query)) }

    static func grants(
        _ database: SQLiteDatabase, appId: String, environment: String, appAccountToken: String
    ) throws
        -> [PromotionalGrant]
    {
        let query = try database.statement(
            """
            SELECT \(grantColumns) FROM grants WHERE app_id = ? AND environment = ? AND app_account_token = ?
            ORDER BY starts_at, id
            """
        ).bind([.text(appId), .text(environment), .text(appAccountToken)])
        var found: [PromotionalGrant] = []
        while try query.step() { found.append(grant(query)) }
        return found
    }

    static func grant(_ database: SQLiteDatabase, appId: String, id: String) throws -> PromotionalGrant? {
        let query = try database.statement("SELECT \(grantColumns) FROM grants WHERE app_id = ? AND id = ?")
            .bind([.text(appId), .text(id)])
        return try query.step() ? grant(query) : nil
    }

    package func grants(appId: String, environment: String, appAccountToken: String) throws -> [PromotionalGrant] {
        try read { try Self.grants($0, appId: appId, environment: environment, appAccountToken: appAccountToken) }
    }

    package func grant(appId: String, id: String) throws -> PromotionalGrant? {
        try read { try Self.grant($0, appId: appId, id: id) }
    }

    package func grants(appId: String, unexpiredAt now: Int64) throws -> [PromotionalGrant] {
        try read { database in
            let query = try database.statement(
                "SELECT \(Self.grantColumns) FROM grants WHERE app_id = ? AND expires_date > ? ORDER BY expires_date, id"
            ).bind([.text(appId), .integer(now)])
            var found: [PromotionalGrant] = []
            while try query.step() { found.append(Self.grant(query)) }
            return found
        }
    }

    package func signedFacts(appId: String, environment: String, originalTransactionId: String) throws -> [SignedFact] {
        try read { database in
            let query = try database.statement(
                """
                SELECT 'transaction', transaction_id, signed_date, jws FROM transactions
                WHERE app_id = ?1 AND environment = ?2 AND original_transaction_id = ?3
                UNION ALL
                SELECT 'renewalInfo', original_transaction_id, signed_date, jws FROM renewal_infos
                WHERE app_id = ?1 AND environment = ?2 AND original_transaction_id = ?3
                ORDER BY 3
                """
            ).bind([.text(appId), .text(environment), .text(originalTransactionId)])
            var found: [SignedFact] = []
            while try query.step() {
                found.append(
                    SignedFact(
                        kind: SignedFact.Kind(rawValue: query.text(0) ?? "") ?? .transaction, originalTransactionId: originalTransactionId,
                        id: query.text(1) ?? "", signedDate: query.int64(2) ?? 0, jws: query.text(3) ?? ""))
            }
            return found
        }
    }

    package func notifications(appId: String, environment: String, originalTransactionId: String) throws -> [StoredNotification] {
        try read { database in
            let query = try database.statement(
                """
                SELECT \(Self.notificationColumns)
                FROM notifications WHERE app_id = ? AND environment = ? AND original_transaction_id = ? ORDER BY sequence
                """
            ).bind([.text(appId), .text(environment), .text(originalTransactionId)])
            var found: [StoredNotification] = []
            while try query.step() { found.append(Self.notification(query, appId: appId)) }
            return found
        }
    }

    package func events(appId: String, originalTransactionId: String) throws -> [OutboxEvent] {
        try events("original_transaction_id", appId: appId, value: originalTransactionId)
    }

    package func events(appId: String, appAccountToken: String) throws -> [OutboxEvent] {
        try events("app_account_token", appId: appId, value: appAccountToken)
    }

    private func events(_ column: String, appId: String, value: String) throws -> [OutboxEvent] {
        try read { database in
            let query = try database.statement(
                "SELECT \(Self.eventColumns) FROM events WHERE app_id = ? AND \(column) = ? ORDER BY sequence"
            ).bind([.text(appId), .text(value)])
            var found: [OutboxEvent] = []
            while try query.step() { found.append(Self.event(query)) }
            return found
        }
    }

    package func deliveries(appId: String, eventId: String) throws -> [WebhookDelivery] {
        try read { database in
            let query = try database.statement(
                "SELECT \(Self.deliveryColumns) FROM deliveries d WHERE d.app_id = ? AND d.event_id = ? ORDER BY d.id"
            ).bind([.text(appId), .text(eventId)])
            var found: [WebhookDelivery] = []
            while try query.step() { found.append(Self.delivery(query)) }
            return found
        }
    }

    /// A page is read in five statements whatever its size: its ids, then the transactions,
    /// renewal infos, signals and links of the id range they span (the ids are consecutive in the
    /// index, so the range holds exactly them).
    package func subscriptions(appId: String, environment: String, after: String?, limit: Int) throws -> [SubscriptionFacts] {
        try read { database in
            let idQuery = try database.statement(
                """
                SELECT DISTINCT original_transaction_id FROM transactions
                WHERE app_id = ? AND environment = ? AND original_transaction_id > ? ORDER BY original_transaction_id LIMIT ?
                """
            ).bind([.text(appId), .text(environment), .text(after ?? ""), .integer(Int64(limit))])
            var ids: [String] = []
            while try idQuery.step() { if let id = idQuery.text(0) { ids.append(id) } }
            guard let first = ids.first, let last = ids.last else { return [] }
            let range: [SQLiteValue] = [.text(appId), .text(environment), .text(first), .text(last)]
            let inRange = "WHERE app_id = ? AND environment = ? AND original_transaction_id BETWEEN ? AND ?"
            var facts: [String: SubscriptionFacts] = [:]
            for id in ids {
                facts[id] = SubscriptionFacts(
                    originalTransactionId: id, environment: environment, appAccountToken: nil, transactions: [], renewal: nil, signals: [])
            }
            let transactions = try database.statement(
                "SELECT original_transaction_id, \(Self.transactionColumns) FROM transactions \(inRange) ORDER BY original_transaction_id, purchase_date"
            ).bind(range)
            while try transactions.step() {
                let id = transactions.text(0) ?? ""
                facts[id]?.transactions.append(Self.transaction(transactions, from: 1, original: id, environment: environment))
            }
            let renewals = try database.statement("SELECT original_transaction_id, \(Self.renewalColumns) FROM renewal_infos \(inRange)")
                .bind(range)
            while try renewals.step() {
                let id = renewals.text(0) ?? ""
                facts[id]?.renewal = Self.renewal(renewals, from: 1, original: id, environment: environment)
            }
            let signals = try database.statement("SELECT original_transaction_id, kind, at FROM signals \(inRange) ORDER BY at").bind(range)
            while try signals.step() {
                guard let kind = signals.text(1).flatMap(SubscriptionSignal.Kind.init(storedName:)) else { continue }
                facts[signals.text(0) ?? ""]?.signals.append(SubscriptionSignal(kind, at: signals.int64(2) ?? 0))
            }
            let links = try database.statement("SELECT original_transaction_id, app_account_token FROM subscriber_links \(inRange)")
                .bind(range)
            while try links.step() { facts[links.text(0) ?? ""]?.appAccountToken = links.text(1) }
            return ids.compactMap { facts[$0] }
        }
    }

    package func notificationCounts(appId: String, since: Int64, width: Int64) throws -> [NotificationCount] {
        try read { database in
            let query = try database.statement(
                """
                SELECT received_at / ?1 * ?1 AS hour, environment, notification_type, COUNT(*) FROM notifications
                WHERE app_id = ?2 AND received_at >= ?3 GROUP BY hour, environment, notification_type
                ORDER BY hour, notification_type, environment
                """
            ).bind([.integer(max(1, width)), .text(appId), .integer(since)])
            var found: [NotificationCount] = []
            while try query.step() {
                found.append(
                    NotificationCount(
                        hourStart: query.int64(0) ?? 0, environment: query.text(1) ?? "", notificationType: query.text(2) ?? "",
                        count: Int(query.int64(3) ?? 0)))
            }
            return found
        }
    }
}
