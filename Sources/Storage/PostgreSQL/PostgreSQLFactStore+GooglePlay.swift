package import Entitlements

/// SQLiteFactStore+GooglePlay's statements in PostgreSQL's dialect.
extension PostgreSQLFactStore {
    static let playColumns = """
        purchase_token, kind, product_id, base_plan_id, offer_id, environment, google_state, start_time, expiry_time,
        auto_renewing, linked_purchase_token, acknowledged, app_account_token, order_id, voided_at, read_at, details
        """

    static func playPurchase(_ row: [String?]) -> PlayPurchase {
        func number(_ index: Int) -> Int64? { row[index].flatMap { Int64($0) } }
        return PlayPurchase(
            purchaseToken: row[0] ?? "", kind: PlayPurchase.Kind(rawValue: row[1] ?? "") ?? .subscription, productId: row[2] ?? "",
            basePlanId: row[3], offerId: row[4], environment: row[5] ?? "", googleState: row[6] ?? "", startTime: number(7) ?? 0,
            expiryTime: number(8), autoRenewing: number(9) == 1, linkedPurchaseToken: row[10], acknowledged: number(11) == 1,
            appAccountToken: row[12], orderId: row[13], voidedAt: number(14), readAt: number(15) ?? 0,
            details: PlayPurchaseDetails(storedText: row[16]))
    }

    static func playPurchases(_ db: PostgreSQLConnection, appId: String, appAccountToken: String) throws -> [PlayPurchase] {
        try db.execute(
            "SELECT \(playColumns) FROM play_purchases WHERE app_id = $1 AND app_account_token = $2 ORDER BY start_time, purchase_token",
            [.text(appId), .text(appAccountToken)]
        ).rows.map(playPurchase)
    }

    static func playPurchase(_ db: PostgreSQLConnection, appId: String, purchaseToken: String) throws -> PlayPurchase? {
        try db.execute(
            "SELECT \(playColumns) FROM play_purchases WHERE app_id = $1 AND purchase_token = $2", [.text(appId), .text(purchaseToken)]
        )
        .rows.first.map(playPurchase)
    }

    package func playPurchases(appId: String, appAccountToken: String) throws -> [PlayPurchase] {
        try pool.with { try Self.playPurchases($0, appId: appId, appAccountToken: appAccountToken) }
    }

    package func playPurchase(appId: String, purchaseToken: String) throws -> PlayPurchase? {
        try pool.with { try Self.playPurchase($0, appId: appId, purchaseToken: purchaseToken) }
    }

    package func hasPubSubMessage(appId: String, messageId: String) throws -> Bool {
        try pool.with { db in
            !(try db.execute(
                "SELECT 1 FROM pubsub_messages WHERE app_id = $1 AND message_id = $2", [.text(appId), .text(messageId)]
            ).isEmpty)
        }
    }

    package func playPurchase(appId: String, orderId: String) throws -> PlayPurchase? {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.playColumns) FROM play_purchases WHERE app_id = $1 AND order_id = $2 LIMIT 1",
                [.text(appId), .text(orderId)]
            ).rows.first.map(Self.playPurchase)
        }
    }

    package func playPurchaseAnswer(appId: String, purchaseToken: String) throws -> String? {
        try pool.with { db in
            try db.execute(
                "SELECT json FROM play_purchases WHERE app_id = $1 AND purchase_token = $2", [.text(appId), .text(purchaseToken)]
            ).rows.first?[0]
        }
    }

    package func playPurchases(appId: String, after: String?, limit: Int) throws -> [PlayPurchase] {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.playColumns) FROM play_purchases WHERE app_id = $1 AND purchase_token > $2 ORDER BY purchase_token LIMIT $3",
                [.text(appId), .text(after ?? ""), .integer(Int64(limit))]
            ).rows.map(Self.playPurchase)
        }
    }

    package func dueAcknowledgements(appId: String, now: Int64, limit: Int) throws -> [PendingAcknowledgement] {
        try pool.with { db in
            try db.execute(
                """
                SELECT purchase_token, kind, product_id, attempts, queued_at, next_at FROM play_acknowledgements
                WHERE app_id = $1 AND next_at <= $2 ORDER BY next_at, purchase_token LIMIT $3
                """, [.text(appId), .integer(now), .integer(Int64(limit))]
            ).rows.map { row in
                PendingAcknowledgement(
                    appId: appId, purchaseToken: row[0] ?? "", kind: PlayPurchase.Kind(rawValue: row[1] ?? "") ?? .subscription,
                    productId: row[2] ?? "", attempts: Int(row[3] ?? "0") ?? 0, queuedAt: Int64(row[4] ?? "0") ?? 0,
                    nextAt: Int64(row[5] ?? "0") ?? 0)
            }
        }
    }

    package func pendingAcknowledgements(appId: String, queuedBefore: Int64) throws -> Int {
        try pool.with { db in
            Int(
                try db.execute(
                    "SELECT COUNT(*) FROM play_acknowledgements WHERE app_id = $1 AND queued_at < $2",
                    [.text(appId), .integer(queuedBefore)]
                ).int64(0, 0) ?? 0)
        }
    }
}
