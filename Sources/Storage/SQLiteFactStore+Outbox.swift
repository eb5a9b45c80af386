package import Entitlements
import Foundation
import Synchronization

/// The outbox on SQLite: events written with the facts that cause them, deliveries claimed with
/// a lease and settled by outcome. Every write goes through the writer thread.
extension SQLiteFactStore {
    /// What the writer thread keeps between batches; used by that thread only.
    final class WriterMemory: Sendable {
        let sequences = EventSequences()
        let grantedTokens = GrantedTokens()
    }

    /// The highest sequence of each app's events, kept by the writer thread (the only writer):
    /// read from the table once per app, then counted on. A rolled-back batch leaves a gap, never
    /// a repeat, so sequences stay strictly increasing in commit order.
    final class EventSequences: @unchecked Sendable {
        private var last: [String: Int64] = [:]

        func next(_ app: String, _ database: SQLiteDatabase) throws -> Int64 {
            if let known = last[app] { return known + 1 }
            let query = try database.statement("SELECT MAX(sequence) FROM events WHERE app_id = ?").bind([.text(app)])
            let stored = try query.step() ? query.int64(0) ?? 0 : 0
            last[app] = stored
            return stored + 1
        }

        func used(_ app: String, through sequence: Int64) { last[app] = max(last[app] ?? 0, sequence) }
    }

    package func events(appId: String, after sequence: Int64, limit: Int) throws -> [OutboxEvent] {
        try read { database in
            let query = try database.statement(
                "SELECT \(Self.eventColumns) FROM events WHERE app_id = ? AND sequence > ? ORDER BY sequence LIMIT ?"
            ).bind([.text(appId), .integer(sequence), .integer(Int64(limit))])
            var found: [OutboxEvent] = []
            while try query.step() { found.append(Self.event(query)) }
            return found
        }
    }

    package func event(appId: String, id: String) throws -> OutboxEvent? {
        try read { database in
            let query = try database.statement("SELECT \(Self.eventColumns) FROM events WHERE app_id = ? AND id = ?")
                .bind([.text(appId), .text(id)])
            return try query.step() ? Self.event(query) : nil
        }
    }

    static let eventColumns =
        "app_id, sequence, id, type, environment, original_transaction_id, app_account_token, occurred_at, created_at, body"

    static func event(_ query: SQLiteStatement) -> OutboxEvent {
        OutboxEvent(
            id: query.text(2) ?? "", appId: query.text(0) ?? "", sequence: query.int64(1) ?? 0, type: query.text(3) ?? "",
            environment: query.text(4) ?? "", originalTransactionId: query.text(5), appAccountToken: query.text(6),
            occurredAt: query.int64(7) ?? 0, createdAt: query.int64(8) ?? 0, body: query.text(9) ?? "")
    }

    static let deliveryColumns = """
        d.id, d.app_id, d.kind, d.event_id, d.event_type, d.endpoint, d.status, d.attempts, d.next_at, d.created_at,
        d.window_start, d.last_status, d.last_error, d.delivered_at
        """

    static func delivery(_ query: SQLiteStatement, body: String = "") -> WebhookDelivery {
        WebhookDelivery(
            id: String(query.int64(0) ?? 0), appId: query.text(1) ?? "",
            kind: WebhookDelivery.Kind(rawValue: query.text(2) ?? "") ?? .event,
            eventId: query.text(3), eventType: query.text(4), endpoint: query.text(5) ?? "",
            status: WebhookDelivery.Status(rawValue: query.text(6) ?? "") ?? .pending, attempts: Int(query.int64(7) ?? 0),
            nextAt: query.int64(8) ?? 0, createdAt: query.int64(9) ?? 0, windowStart: query.int64(10) ?? 0,
            lastStatus: query.int64(11).map(Int.init), lastError: query.text(12), deliveredAt: query.int64(13), body: body)
    }

    /// One process owns a SQLite file, so a claim is a read plus a lease held in memory: claiming
    /// costs the single writer nothing, and after a crash every pending delivery is due at once
    /// (delivery is at least once; receivers deduplicate on the event id).
    package func claimDeliveries(appId: String, endpoint: String, now: Int64, leaseUntil: Int64, limit: Int) throws -> [WebhookDelivery] {
        let held = leases.withLock { $0.count }
        let due = try read { database in
            let query = try database.statement(
                """
                SELECT \(Self.deliveryColumns), COALESCE(d.body, e.body) FROM deliveries d LEFT JOIN events e ON e.id = d.event_id
                WHERE d.app_id = ? AND d.endpoint = ? AND d.status = 'pending' AND d.next_at <= ? ORDER BY d.next_at LIMIT ?
                """
            ).bind([.text(appId), .text(endpoint), .integer(now), .integer(Int64(limit + held))])
            var found: [WebhookDelivery] = []
            while try query.step() { found.append(Self.delivery(query, body: query.text(14) ?? "")) }
            return found
        }
        return leases.withLock { leases in
            var claimed: [WebhookDelivery] = []
            // A lease past its end (its holder never reported) is free again.
            for delivery in due where claimed.count < limit && (leases[delivery.id].map { $0 <= now } ?? true) {
                leases[delivery.id] = leaseUntil
                claimed.append(delivery)
            }
            return claimed
        }
    }

    package func record(_ outcomes: [DeliveryOutcome]) throws {
        guard !outcomes.isEmpty else { return }
        defer { leases.withLock { leases in for outcome in outcomes { leases[outcome.id] = nil } } }
        try writerLoop.perform { database in
            // Deliveries settled alike (nearly all of a round: delivered at one instant with one
            // status) are written by one statement, each settlement as the domain gives it.
            var alike: [DeliveryOutcome.Settlement: [Int64]] = [:]
            for outcome in outcomes {
                guard let id = Int64(outcome.id) else { continue }
                alike[outcome.settlement, default: []].append(id)
            }
            for (settled, ids) in alike {
                for chunk in stride(from: 0, to: ids.count, by: 64).map({ Array(ids[$0..<min($0 + 64, ids.count)]) }) {
                    let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                    try database.statement(
                        """
                        UPDATE deliveries SET status = ?, attempts = attempts + 1, next_at = ?, last_status = ?, last_error = ?,
                            delivered_at = ? WHERE status = 'pending' AND id IN (\(marks))
                        """
                    ).bind(
                        [
                            .text(settled.status.rawValue), .integer(settled.nextAt), .from(settled.lastStatus.map(Int64.init)),
                            .from(settled.lastError), .from(settled.deliveredAt),
                        ] + chunk.map(SQLiteValue.integer)
                    ).run()
                }
            }
        }
    }

    package func deliveries(appId: String, status: WebhookDelivery.Status?, limit: Int) throws -> [WebhookDelivery] {
        try read { database in
            let query = try database.statement(
                """
                SELECT \(Self.deliveryColumns) FROM deliveries d WHERE d.app_id = ? AND (? IS NULL OR d.status = ?)
                ORDER BY d.created_at DESC, d.id DESC LIMIT ?
                """
            ).bind([.text(appId), .from(status?.rawValue), .from(status?.rawValue), .integer(Int64(limit))])
            var found: [WebhookDelivery] = []
            while try query.step() { found.append(Self.delivery(query)) }
            return found
        }
    }

    package func retryDelivery(appId: String, id: String, _ rearming: WebhookDelivery.Rearming) throws -> WebhookDelivery? {
        guard let number = Int64(id) else { return nil }
        return try writerLoop.perform { database in
            try database.statement(
                "UPDATE deliveries SET status = ?, next_at = ?, window_start = ? WHERE app_id = ? AND id = ?"
            ).bind([
                .text(rearming.status.rawValue), .integer(rearming.nextAt), .integer(rearming.windowStart), .text(appId),
                .integer(number),
            ]).run()
            guard database.changes > 0 else { return nil }
            let query = try database.statement("SELECT \(Self.deliveryColumns) FROM deliveries d WHERE d.id = ?").bind([.integer(number)])
            return try query.step() ? Self.delivery(query) : nil
        }
    }

    package func abandonDeliveries(
        appId: String, keeping endpoints: Set<String>, _ abandonment: WebhookDelivery.Abandonment
    ) throws -> Int {
        let kept = endpoints.sorted()
        return try writerLoop.perform { database in
            let marks = Array(repeating: "?", count: kept.count).joined(separator: ",")
            try database.statement(
                """
                UPDATE deliveries SET status = ?, next_at = ?, last_error = ?
                WHERE app_id = ? AND status = 'pending' AND endpoint NOT IN (\(marks))
                """
            ).bind(
                [.text(abandonment.status.rawValue), .integer(abandonment.nextAt), .text(abandonment.lastError), .text(appId)]
                    + kept.map(SQLiteValue.text)
            ).run()
            return database.changes
        }
    }

    package func deliveryBacklog(appId: String) throws -> DeliveryBacklog {
        try read { database in
            let query = try database.statement(
                """
                SELECT (SELECT COUNT(*) FROM deliveries WHERE app_id = ?1 AND status = 'pending'),
                    (SELECT COUNT(*) FROM deliveries WHERE app_id = ?1 AND status = 'failed'),
                    (SELECT MIN(created_at) FROM deliveries WHERE app_id = ?1 AND status = 'pending')
                """
            ).bind([.text(appId)])
            guard try query.step() else { return DeliveryBacklog(pending: 0, failed: 0, oldestPendingCreatedAt: nil) }
            return DeliveryBacklog(
                pending: Int(query.int64(0) ?? 0), failed: Int(query.int64(1) ?? 0), oldestPendingCreatedAt: query.int64(2))
        }
    }
}
