package import Entitlements

/// SQLiteFactStore+Support's statements in PostgreSQL's dialect: promotional grants, a
/// customer's history, the overview's counts.
extension PostgreSQLFactStore {
    static let grantColumns = StoredTable.list(GrantCodec.read)

    static func grant(_ row: [String?]) -> PromotionalGrant { GrantCodec.record(PostgreSQLRow(row: row)) }

    static func grants(
        _ db: PostgreSQLConnection, appId: String, environment: String, appAccountToken: String
    ) throws
        -> [PromotionalGrant]
    {
        try db.execute(
            """
            SELECT \(grantColumns) FROM grants WHERE app_id = $1 AND environment = $2 AND app_account_token = $3
            ORDER BY starts_at, id
            """, [.text(appId), .text(environment), .text(appAccountToken)]
        ).rows.map(grant)
    }

    static func grant(_ db: PostgreSQLConnection, appId: String, id: String) throws -> PromotionalGrant? {
        try db.execute("SELECT \(grantColumns) FROM grants WHERE app_id = $1 AND id = $2", [.text(appId), .text(id)]).rows.first
            .map(grant)
    }

    package func grants(appId: String, environment: String, appAccountToken: String) throws -> [PromotionalGrant] {
        try pool.with { try Self.grants($0, appId: appId, environment: environment, appAccountToken: appAccountToken) }
    }

    package func grant(appId: String, id: String) throws -> PromotionalGrant? {
        try pool.with { try Self.grant($0, appId: appId, id: id) }
    }

    package func grants(appId: String, unexpiredAt now: Int64) throws -> [PromotionalGrant] {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.grantColumns) FROM grants WHERE app_id = $1 AND expires_date > $2 ORDER BY expires_date, id",
                [.text(appId), .integer(now)]
            ).rows.map(Self.grant)
        }
    }

    package func signedFacts(appId: String, environment: String, originalTransactionId: String) throws -> [SignedFact] {
        try pool.with { db in
            try db.execute(
                """
                SELECT 'transaction', transaction_id, signed_date, jws FROM transactions
                WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3
                UNION ALL
                SELECT 'renewalInfo', original_transaction_id, signed_date, jws FROM renewal_infos
                WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3
                ORDER BY 3
                """, [.text(appId), .text(environment), .text(originalTransactionId)]
            ).rows.map { row in
                SignedFact(
                    kind: SignedFact.Kind(rawValue: row[0] ?? "") ?? .transaction, originalTransactionId: originalTransactionId,
                    id: row[1] ?? "", signedDate: Int64(row[2] ?? "0") ?? 0, jws: row[3] ?? "")
            }
        }
    }

    package func notifications(appId: String, environment: String, originalTransactionId: String) throws -> [StoredNotification] {
        try pool.with { db in
            try db.execute(
                """
                SELECT \(Self.notificationColumns)
                FROM notifications WHERE app_id = $1 AND environment = $2 AND original_transaction_id = $3 ORDER BY sequence
                """, [.text(appId), .text(environment), .text(originalTransactionId)]
            ).rows.map { Self.notification($0, appId: appId) }
        }
    }

    package func events(appId: String, originalTransactionId: String) throws -> [OutboxEvent] {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.eventColumns) FROM events WHERE app_id = $1 AND original_transaction_id = $2 ORDER BY sequence",
                [.text(appId), .text(originalTransactionId)]
            ).rows.map(Self.event)
        }
    }

    package func events(appId: String, appAccountToken: String) throws -> [OutboxEvent] {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.eventColumns) FROM events WHERE app_id = $1 AND app_account_token = $2 ORDER BY sequence",
                [.text(appId), .text(appAccountToken)]
            ).rows.map(Self.event)
        }
    }

    package func deliveries(appId: String, eventId: String) throws -> [WebhookDelivery] {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.deliveryColumns) FROM deliveries d WHERE d.app_id = $1 AND d.event_id = $2 ORDER BY d.id",
                [.text(appId), .text(eventId)]
            ).rows.map { Self.delivery($0) }
        }
    }

    /// A page in five statements, as on SQLite: the ids, then the facts of the id range they span.
    package func subscriptions(appId: String, environment: String, after: String?, limit: Int) throws -> [SubscriptionFacts] {
        try pool.with { db in
            let ids = try db.execute(
                """
                SELECT DISTINCT original_transaction_id FROM transactions
                WHERE app_id = $1 AND environment = $2 AND original_transaction_id > $3 ORDER BY original_transaction_id LIMIT $4
                """, [.text(appId), .text(environment), .text(after ?? ""), .integer(Int64(limit))]
            ).rows.compactMap { $0[0] }
            guard let first = ids.first, let last = ids.last else { return [] }
            let range: [PGValue] = [.text(appId), .text(environment), .text(first), .text(last)]
            let inRange = "WHERE x.app_id = $1 AND x.environment = $2 AND x.original_transaction_id BETWEEN $3 AND $4"
            var facts: [String: SubscriptionFacts] = [:]
            for id in ids {
                facts[id] = SubscriptionFacts(
                    originalTransactionId: id, environment: environment, appAccountToken: nil, transactions: [], renewal: nil, signals: [])
            }
            for row in try db.execute(
                "SELECT x.original_transaction_id, \(Self.transactionColumns) FROM transactions x \(inRange) ORDER BY 1, x.purchase_date, 2",
                range
            ).rows {
                let id = row[0] ?? ""
                facts[id]?.transactions.append(Self.transaction(row, from: 1, original: id, environment: environment))
            }
            for row in try db.execute("SELECT x.original_transaction_id, \(Self.renewalColumns) FROM renewal_infos x \(inRange)", range)
                .rows
            {
                let id = row[0] ?? ""
                facts[id]?.renewal = Self.renewal(row, from: 1, original: id, environment: environment)
            }
            for row in try db.execute("SELECT x.original_transaction_id, x.kind, x.at FROM signals x \(inRange) ORDER BY x.at, x.id", range)
                .rows
            {
                guard let kind = row[1].flatMap(SubscriptionSignal.Kind.init(storedName:)) else { continue }
                facts[row[0] ?? ""]?.signals.append(SubscriptionSignal(kind, at: Int64(row[2] ?? "0") ?? 0))
            }
            for row in try db.execute("SELECT x.original_transaction_id, x.app_account_token FROM subscriber_links x \(inRange)", range)
                .rows
            {
                facts[row[0] ?? ""]?.appAccountToken = row[1]
            }
            return ids.compactMap { facts[$0] }
        }
    }

    package func notificationCounts(appId: String, since: Int64, width: Int64) throws -> [NotificationCount] {
        try pool.with { db in
            try db.execute(
                """
                SELECT received_at / $3 * $3 AS hour, environment, notification_type, COUNT(*) FROM notifications
                WHERE app_id = $1 AND received_at >= $2 GROUP BY 1, 2, 3 ORDER BY 1, 3, 2
                """, [.text(appId), .integer(since), .integer(max(1, width))]
            ).rows.map { row in
                NotificationCount(
                    hourStart: Int64(row[0] ?? "0") ?? 0, environment: row[1] ?? "", notificationType: row[2] ?? "",
                    count: Int(row[3] ?? "0") ?? 0)
            }
        }
    }
}
