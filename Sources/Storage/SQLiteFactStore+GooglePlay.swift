package import Entitlements

/// Google Play purchases on SQLite: each stored as last read from Google (a later read replaces
/// an earlier one, a void is never forgotten), and the Pub/Sub messages already applied.
extension SQLiteFactStore {
    /// The purchase's columns from `purchase_token` through `details`, in `playColumns`' order.
    static func playValues(_ purchase: PlayPurchase) -> [SQLiteValue] {
        [
            .text(purchase.purchaseToken), .text(purchase.kind.rawValue), .text(purchase.productId), .from(purchase.basePlanId),
            .from(purchase.offerId), .text(purchase.environment), .text(purchase.googleState), .integer(purchase.startTime),
            .from(purchase.expiryTime), .from(purchase.autoRenewing), .from(purchase.linkedPurchaseToken),
            .from(purchase.acknowledged), .from(purchase.appAccountToken), .from(purchase.orderId), .from(purchase.voidedAt),
            .integer(purchase.readAt), .from(purchase.details.storedText),
        ]
    }

    static let playColumns = """
        purchase_token, kind, product_id, base_plan_id, offer_id, environment, google_state, start_time, expiry_time,
        auto_renewing, linked_purchase_token, acknowledged, app_account_token, order_id, voided_at, read_at, details
        """

    static func playPurchase(_ query: SQLiteStatement) -> PlayPurchase {
        PlayPurchase(
            purchaseToken: query.text(0) ?? "", kind: PlayPurchase.Kind(rawValue: query.text(1) ?? "") ?? .subscription,
            productId: query.text(2) ?? "", basePlanId: query.text(3), offerId: query.text(4), environment: query.text(5) ?? "",
            googleState: query.text(6) ?? "", startTime: query.int64(7) ?? 0, expiryTime: query.int64(8),
            autoRenewing: query.int64(9) == 1, linkedPurchaseToken: query.text(10), acknowledged: query.int64(11) == 1,
            appAccountToken: query.text(12), orderId: query.text(13), voidedAt: query.int64(14), readAt: query.int64(15) ?? 0,
            details: PlayPurchaseDetails(storedText: query.text(16)))
    }

    static func playPurchases(_ database: SQLiteDatabase, appId: String, appAccountToken: String) throws -> [PlayPurchase] {
        let query = try database.statement(
            "SELECT \(playColumns) FROM play_purchases WHERE app_id = ? AND app_account_token = ? ORDER BY start_time, purchase_token"
        ).bind([.text(appId), .text(appAccountToken)])
        var found: [PlayPurchase] = []
        while try query.step() { found.append(playPurchase(query)) }
        return found
    }

    static func playPurchase(_ database: SQLiteDatabase, appId: String, purchaseToken: String) throws -> PlayPurchase? {
        let query = try database.statement("SELECT \(playColumns) FROM play_purchases WHERE app_id = ? AND purchase_token = ?")
            .bind([.text(appId), .text(purchaseToken)])
        return try query.step() ? playPurchase(query) : nil
    }

    package func playPurchases(appId: String, appAccountToken: String) throws -> [PlayPurchase] {
        try read { try Self.playPurchases($0, appId: appId, appAccountToken: appAccountToken) }
    }

    package func playPurchase(appId: String, purchaseToken: String) throws -> PlayPurchase? {
        try read { try Self.playPurchase($0, appId: appId, purchaseToken: purchaseToken) }
    }

    package func hasPubSubMessage(appId: String, messageId: String) throws -> Bool {
        try read { database in
            try database.statement("SELECT 1 FROM pubsub_messages WHERE app_id = ? AND message_id = ?")
                .bind([.text(appId), .text(messageId)]).step()
        }
    }

    package func playPurchase(appId: String, orderId: String) throws -> PlayPurchase? {
        try read { database in
            let query = try database.statement("SELECT \(Self.playColumns) FROM play_purchases WHERE app_id = ? AND order_id = ? LIMIT 1")
                .bind([.text(appId), .text(orderId)])
            return try query.step() ? Self.playPurchase(query) : nil
        }
    }

    package func playPurchaseAnswer(appId: String, purchaseToken: String) throws -> String? {
        try read { database in
            let query = try database.statement("SELECT json FROM play_purchases WHERE app_id = ? AND purchase_token = ?")
                .bind([.text(appId), .text(purchaseToken)])
            return try query.step() ? query.text(0) : nil
        }
    }

    package func playPurchases(appId: String, after: String?, limit: Int) throws -> [PlayPurchase] {
        try read { database in
            let query = try database.statement(
                "SELECT \(Self.playColumns) FROM play_purchases WHERE app_id = ? AND purchase_token > ? ORDER BY purchase_token LIMIT ?"
            ).bind([.text(appId), .text(after ?? ""), .integer(Int64(limit))])
            var found: [PlayPurchase] = []
            while try query.step() { found.append(Self.playPurchase(query)) }
            return found
        }
    }

    package func dueAcknowledgements(appId: String, now: Int64, limit: Int) throws -> [PendingAcknowledgement] {
        try read { database in
            let query = try database.statement(
                """
                SELECT purchase_token, kind, product_id, attempts, queued_at, next_at FROM play_acknowledgements
                WHERE app_id = ? AND next_at <= ? ORDER BY next_at, purchase_token LIMIT ?
                """
            ).bind([.text(appId), .integer(now), .integer(Int64(limit))])
            var due: [PendingAcknowledgement] = []
            while try query.step() {
                due.append(
                    PendingAcknowledgement(
                        appId: appId, purchaseToken: query.text(0) ?? "",
                        kind: PlayPurchase.Kind(rawValue: query.text(1) ?? "") ?? .subscription,
                        productId: query.text(2) ?? "", attempts: Int(query.int64(3) ?? 0), queuedAt: query.int64(4) ?? 0,
                        nextAt: query.int64(5) ?? 0))
            }
            return due
        }
    }

    package func pendingAcknowledgements(appId: String, queuedBefore: Int64) throws -> Int {
        try read { database in
            let query = try database.statement("SELECT COUNT(*) FROM play_acknowledgements WHERE app_id = ? AND queued_at < ?")
                .bind([.text(appId), .integer(queuedBefore)])
            return try query.step() ? Int(query.int64(0) ?? 0) : 0
        }
    }
}
