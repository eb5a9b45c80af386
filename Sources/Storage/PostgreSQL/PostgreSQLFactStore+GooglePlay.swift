import Entitlements

/// SQLiteFactStore+GooglePlay's statements in PostgreSQL's dialect.
extension PostgreSQLFactStore {
    static func recordMessage(_ id: String, app: String, at receivedAt: Int64, _ db: PostgreSQLConnection) throws -> Bool {
        !(try db.execute(
            "INSERT INTO pubsub_messages (app_id, message_id, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1",
            [.text(app), .text(id), .integer(receivedAt)]
        ).isEmpty)
    }

    static func upsert(_ purchase: PlayPurchase, json: String, app: String, _ db: PostgreSQLConnection) throws {
        try db.execute(
            """
            INSERT INTO play_purchases AS p (app_id, purchase_token, kind, product_id, base_plan_id, offer_id, environment,
                google_state, start_time, expiry_time, auto_renewing, linked_purchase_token, acknowledged, app_account_token,
                order_id, voided_at, read_at, json)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
            ON CONFLICT (app_id, purchase_token) DO UPDATE SET
                kind = excluded.kind, product_id = excluded.product_id, base_plan_id = excluded.base_plan_id,
                offer_id = excluded.offer_id, environment = excluded.environment, google_state = excluded.google_state,
                start_time = excluded.start_time, expiry_time = excluded.expiry_time, auto_renewing = excluded.auto_renewing,
                linked_purchase_token = excluded.linked_purchase_token, acknowledged = excluded.acknowledged,
                app_account_token = COALESCE(excluded.app_account_token, p.app_account_token),
                order_id = excluded.order_id, voided_at = COALESCE(p.voided_at, excluded.voided_at),
                read_at = excluded.read_at, json = excluded.json
            WHERE excluded.read_at >= p.read_at
            """,
            [
                .text(app), .text(purchase.purchaseToken), .text(purchase.kind.rawValue), .text(purchase.productId),
                .from(purchase.basePlanId), .from(purchase.offerId), .text(purchase.environment), .text(purchase.googleState),
                .integer(purchase.startTime), .from(purchase.expiryTime), .from(purchase.autoRenewing),
                .from(purchase.linkedPurchaseToken), .from(purchase.acknowledged), .from(purchase.appAccountToken),
                .from(purchase.orderId), .from(purchase.voidedAt), .integer(purchase.readAt), .text(json),
            ])
    }

    static let playColumns = """
        purchase_token, kind, product_id, base_plan_id, offer_id, environment, google_state, start_time, expiry_time,
        auto_renewing, linked_purchase_token, acknowledged, app_account_token, order_id, voided_at, read_at
        """

    static func playPurchase(_ row: [String?]) -> PlayPurchase {
        func number(_ index: Int) -> Int64? { row[index].flatMap { Int64($0) } }
        return PlayPurchase(
            purchaseToken: row[0] ?? "", kind: PlayPurchase.Kind(rawValue: row[1] ?? "") ?? .subscription, productId: row[2] ?? "",
            basePlanId: row[3], offerId: row[4], environment: row[5] ?? "", googleState: row[6] ?? "", startTime: number(7) ?? 0,
            expiryTime: number(8), autoRenewing: number(9) == 1, linkedPurchaseToken: row[10], acknowledged: number(11) == 1,
            appAccountToken: row[12], orderId: row[13], voidedAt: number(14), readAt: number(15) ?? 0)
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

    public func playPurchases(appId: String, appAccountToken: String) throws -> [PlayPurchase] {
        try pool.with { try Self.playPurchases($0, appId: appId, appAccountToken: appAccountToken) }
    }

    public func playPurchase(appId: String, purchaseToken: String) throws -> PlayPurchase? {
        try pool.with { try Self.playPurchase($0, appId: appId, purchaseToken: purchaseToken) }
    }

    public func playPurchase(appId: String, orderId: String) throws -> PlayPurchase? {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.playColumns) FROM play_purchases WHERE app_id = $1 AND order_id = $2 LIMIT 1",
                [.text(appId), .text(orderId)]
            ).rows.first.map(Self.playPurchase)
        }
    }

    public func playPurchaseAnswer(appId: String, purchaseToken: String) throws -> String? {
        try pool.with { db in
            try db.execute(
                "SELECT json FROM play_purchases WHERE app_id = $1 AND purchase_token = $2", [.text(appId), .text(purchaseToken)]
            ).rows.first?[0]
        }
    }

    public func playPurchases(appId: String, after: String?, limit: Int) throws -> [PlayPurchase] {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.playColumns) FROM play_purchases WHERE app_id = $1 AND purchase_token > $2 ORDER BY purchase_token LIMIT $3",
                [.text(appId), .text(after ?? ""), .integer(Int64(limit))]
            ).rows.map(Self.playPurchase)
        }
    }
}
