package import Entitlements
import Foundation

/// The outbox on PostgreSQL: claims are shared by every instance, so they take rows with
/// `FOR UPDATE SKIP LOCKED` and move `next_at` past the lease in the same statement.
extension PostgreSQLFactStore {
    static let eventColumns =
        "app_id, sequence, id, type, environment, original_transaction_id, app_account_token, occurred_at, created_at, body"

    static func event(_ row: [String?]) -> OutboxEvent {
        OutboxEvent(
            id: row[2] ?? "", appId: row[0] ?? "", sequence: Int64(row[1] ?? "0") ?? 0, type: row[3] ?? "", environment: row[4] ?? "",
            originalTransactionId: row[5], appAccountToken: row[6], occurredAt: Int64(row[7] ?? "0") ?? 0,
            createdAt: Int64(row[8] ?? "0") ?? 0, body: row[9] ?? "")
    }

    package func events(appId: String, after sequence: Int64, limit: Int) throws -> [OutboxEvent] {
        try pool.with { db in
            try db.execute(
                "SELECT \(Self.eventColumns) FROM events WHERE app_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3",
                [.text(appId), .integer(sequence), .integer(Int64(limit))]
            ).rows.map(Self.event)
        }
    }

    package func event(appId: String, id: String) throws -> OutboxEvent? {
        try pool.with { db in
            try db.execute("SELECT \(Self.eventColumns) FROM events WHERE app_id = $1 AND id = $2", [.text(appId), .text(id)])
                .rows.first.map(Self.event)
        }
    }

    static let deliveryColumns = """
        d.id, d.app_id, d.kind, d.event_id, d.event_type, d.endpoint, d.status, d.attempts, d.next_at, d.created_at,
        d.window_start, d.last_status, d.last_error, d.delivered_at
        """

    static func delivery(_ row: [String?], body: String = "") -> WebhookDelivery {
        func number(_ index: Int) -> Int64? { row[index].flatMap { Int64($0) } }
        return WebhookDelivery(
            id: row[0] ?? "", appId: row[1] ?? "", kind: WebhookDelivery.Kind(rawValue: row[2] ?? "") ?? .event, eventId: row[3],
            eventType: row[4], endpoint: row[5] ?? "", status: WebhookDelivery.Status(rawValue: row[6] ?? "") ?? .pending,
            attempts: Int(number(7) ?? 0), nextAt: number(8) ?? 0, createdAt: number(9) ?? 0, windowStart: number(10) ?? 0,
            lastStatus: number(11).map(Int.init), lastError: row[12], deliveredAt: number(13), body: body)
    }

    package func claimDeliveries(appId: String, endpoint: String, now: Int64, leaseUntil: Int64, limit: Int) throws -> [WebhookDelivery] {
        try pool.with { db in
            // The lease is written before the rows are handed out: another instance's claim skips
            // the locked rows now and finds them not due afterwards.
            try db.execute(
                """
                WITH due AS (
                    SELECT id FROM deliveries WHERE app_id = $1 AND endpoint = $2 AND status = 'pending' AND next_at <= $3
                    ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED),
                claimed AS (
                    UPDATE deliveries d SET next_at = $5 FROM due WHERE d.id = due.id RETURNING d.*)
                SELECT \(Self.deliveryColumns), COALESCE(d.body, e.body)
                FROM claimed d LEFT JOIN events e ON e.id = d.event_id ORDER BY d.id
                """, [.text(appId), .text(endpoint), .integer(now), .integer(Int64(limit)), .integer(leaseUntil)]
            ).rows.map { Self.delivery($0, body: $0[14] ?? "") }
        }
    }

    package func record(_ outcomes: [DeliveryOutcome]) throws {
        guard !outcomes.isEmpty else { return }
        try pool.transaction { db in
            for outcome in outcomes {
                guard let id = Int64(outcome.id) else { continue }
                let settled = outcome.settlement
                try db.execute(
                    """
                    UPDATE deliveries SET status = $1, attempts = attempts + 1, next_at = $2, last_status = $3, last_error = $4,
                        delivered_at = $5 WHERE id = $6 AND status = 'pending'
                    """,
                    [
                        .text(settled.status.rawValue), .integer(settled.nextAt), .from(settled.lastStatus.map(Int64.init)),
                        .from(settled.lastError), .from(settled.deliveredAt), .integer(id),
                    ])
            }
        }
    }

    package func deliveries(appId: String, status: WebhookDelivery.Status?, limit: Int) throws -> [WebhookDelivery] {
        try pool.with { db in
            try db.execute(
                """
                SELECT \(Self.deliveryColumns) FROM deliveries d WHERE d.app_id = $1 AND ($2::text IS NULL OR d.status = $2)
                ORDER BY d.created_at DESC, d.id DESC LIMIT $3
                """, [.text(appId), .from(status?.rawValue), .integer(Int64(limit))]
            ).rows.map { Self.delivery($0) }
        }
    }

    package func retryDelivery(appId: String, id: String, _ rearming: WebhookDelivery.Rearming) throws -> WebhookDelivery? {
        guard let number = Int64(id) else { return nil }
        return try pool.with { db in
            try db.execute(
                """
                UPDATE deliveries d SET status = $1, next_at = $2, window_start = $3 WHERE app_id = $4 AND id = $5
                RETURNING \(Self.deliveryColumns)
                """,
                [
                    .text(rearming.status.rawValue), .integer(rearming.nextAt), .integer(rearming.windowStart), .text(appId),
                    .integer(number),
                ]
            ).rows.first.map { Self.delivery($0) }
        }
    }

    package func deliveryBacklog(appId: String) throws -> DeliveryBacklog {
        try pool.with { db in
            let rows = try db.execute(
                """
                SELECT COUNT(*) FILTER (WHERE status = 'pending'), COUNT(*) FILTER (WHERE status = 'failed'),
                    MIN(created_at) FILTER (WHERE status = 'pending')
                FROM deliveries WHERE app_id = $1 AND status IN ('pending', 'failed')
                """, [.text(appId)])
            return DeliveryBacklog(
                pending: Int(rows.int64(0, 0) ?? 0), failed: Int(rows.int64(0, 1) ?? 0), oldestPendingCreatedAt: rows.int64(0, 2))
        }
    }

    package func abandonDeliveries(
        appId: String, keeping endpoints: Set<String>, _ abandonment: WebhookDelivery.Abandonment
    ) throws -> Int {
        try pool.with { db in
            try db.execute(
                """
                UPDATE deliveries SET status = $2, next_at = $3, last_error = $4
                WHERE app_id = $1 AND status = 'pending' AND NOT (endpoint = ANY ($5::text[]))
                """,
                [
                    .text(appId), .text(abandonment.status.rawValue), .integer(abandonment.nextAt), .text(abandonment.lastError),
                    .texts(endpoints.sorted()),
                ]
            ).affected
        }
    }
}
