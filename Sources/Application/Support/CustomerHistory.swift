package import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON

/// A customer's history (`GET /v1/subscribers/{appAccountToken}/history`): every stored fact in
/// time order — signed transactions and renewal info, notifications, promotional grants and their
/// revocations, links moved between tokens, events and each delivery of them — with its source
/// and, for signed data, the payload decoded (it was verified when it was stored).
package struct CustomerHistory: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool

    init(_ context: AppContext) {
        app = context.app
        store = context.store
        pool = context.pool
    }

    /// One entry, before it is sorted and encoded.
    struct Entry {
        var at: Int64
        /// Breaks ties so entries of one instant keep a stable, meaningful order.
        var order: Int
        var object: JSONObject
    }

    package func history(
        appAccountToken: String, environment: AppStoreEnvironment?, now: Date,
        completion: @escaping @Sendable (Result<JSONObject?, any Error>) -> Void
    ) {
        pool.run({ try history(appAccountToken: appAccountToken, environment: environment, now: now) }, completion: completion)
    }

    /// Nil when nothing at all is stored for the token. `grants` lists the customer's grants as
    /// they stand at `now` (the console offers to revoke the active ones).
    package func history(appAccountToken: String, environment: AppStoreEnvironment?, now: Date) throws -> JSONObject? {
        let token = try AppAccountToken.validated(appAccountToken)
        let environments = try environment.map { [try app.enabled($0)] } ?? AppStoreEnvironment.all.filter(app.environments.contains)
        var entries: [Entry] = []
        var grants: [PromotionalGrant] = []
        var originals: [(AppStoreEnvironment, String)] = []
        for environment in environments {
            let name = environment.rawValue
            let subscriptions = try store.facts(appId: app.id, environment: name, appAccountToken: token).map(\.originalTransactionId)
            // A subscription that moved to another token shows as the move; its facts are now that
            // customer's.
            for original in subscriptions { originals.append((environment, original)) }
            entries += try store.linkTransfers(appId: app.id, environment: name, appAccountToken: token).map { transfer(name, $0) }
            for grant in try store.grants(appId: app.id, environment: name, appAccountToken: token) {
                grants.append(grant)
                entries += Self.entries(grant)
            }
        }
        if app.googlePlay != nil {
            for purchase in try store.playPurchases(appId: app.id, appAccountToken: token)
            where environments.map(\.rawValue).contains(purchase.environment) {
                entries += Self.entries(
                    purchase, answer: try store.playPurchaseAnswer(appId: app.id, purchaseToken: purchase.purchaseToken))
                // Google's notifications name the purchase token where Apple's name a subscription.
                entries += try store.notifications(
                    appId: app.id, environment: purchase.environment, originalTransactionId: purchase.purchaseToken
                ).filter { $0.store == "play_store" }.map(notificationEntry)
            }
        }
        entries += try store.usage(appId: app.id, appAccountToken: token).map(Self.entry)
        var events: [String: OutboxEvent] = [:]
        for event in try store.events(appId: app.id, appAccountToken: token) { events[event.id] = event }
        for (environment, original) in originals {
            entries += try subscriptionEntries(original, environment: environment)
            for event in try store.events(appId: app.id, originalTransactionId: original) { events[event.id] = event }
        }
        for event in events.values.sorted(by: { $0.sequence < $1.sequence })
        where environments.map(\.rawValue).contains(event.environment) {
            entries.append(Self.entry(event))
            entries += try store.deliveries(appId: app.id, eventId: event.id).map(Self.entry)
        }
        guard !entries.isEmpty else { return nil }
        // By instant, then kind, then the order read (events by sequence): the same answer every time.
        entries = entries.enumerated().sorted {
            ($0.element.at, $0.element.order, $0.offset) < ($1.element.at, $1.element.order, $1.offset)
        }
        .map(\.element)
        return [
            "appAccountToken": .string(token), "environments": .array(environments.map { .string($0.rawValue) }),
            "grants": .array(grants.map { .object(SubscriberView.json($0, now: Milliseconds.since1970(now))) }),
            "history": .array(entries.map { .object($0.object) }),
        ]
    }

    private func subscriptionEntries(_ original: String, environment: AppStoreEnvironment) throws -> [Entry] {
        let name = environment.rawValue
        var entries: [Entry] = []
        for fact in try store.signedFacts(appId: app.id, environment: name, originalTransactionId: original) {
            let decoded = (try? SignedPayload(fact.jws))?.payload
            let payload = decoded ?? [:]
            var object = Self.base(fact.kind.rawValue, name, source: "App Store (signed by Apple)")
            object["originalTransactionId"] = .string(original)
            if fact.kind == .transaction { object["transactionId"] = .string(fact.id) }
            Timestamps.set(&object, "signedDate", fact.signedDate)
            if decoded == nil {
                Self.markCorrupt(&object)
                store.unreadableRows.record(
                    UnreadableRow(table: fact.kind == .transaction ? "transactions" : "renewal_infos", key: fact.id))
            } else {
                object["payload"] = .object(payload)
                object["summary"] = .string(Self.summary(fact.kind, payload))
            }
            // A transaction happened when it was bought; renewal info is news when Apple signed it.
            let at = fact.kind == .transaction ? Milliseconds.truncating(payload["purchaseDate"]) ?? fact.signedDate : fact.signedDate
            entries.append(Self.at(at, order: fact.kind == .transaction ? 1 : 2, object))
        }
        for notification in try store.notifications(appId: app.id, environment: name, originalTransactionId: original)
        where notification.store == "app_store" {
            entries.append(notificationEntry(notification))
        }
        for record in try store.retentionRecords(appId: app.id, environment: name, originalTransactionId: original) {
            entries += Self.entries(record)
        }
        return entries
    }

    private static func summary(_ kind: SignedFact.Kind, _ payload: JSONObject) -> String {
        let product = payload["productId"]?.stringValue ?? "?"
        switch kind {
        case .transaction:
            var text = "\(payload["type"]?.stringValue ?? "Transaction") \(product)"
            if payload["revocationDate"] != nil { text += " (revoked)" }
            return text
        case .renewalInfo:
            let renews = payload["autoRenewStatus"] == .int(1) ? "renews" : "does not renew"
            let next = payload["autoRenewProductId"]?.stringValue.map { " to \($0)" } ?? ""
            return "Renewal info: \(renews)\(next)"
        }
    }

    /// A stored item whose signed data no longer decodes: shown as corrupt, never as an empty one.
    private static func markCorrupt(_ object: inout JSONObject) {
        object["corrupt"] = .bool(true)
        object["summary"] = .string("Corrupt: the stored signed data cannot be decoded (restore it from a backup)")
    }

    private func notificationEntry(_ notification: StoredNotification) -> Entry {
        let fromGoogle = notification.store == "play_store"
        var object = Self.base(
            "notification", notification.environment,
            source: fromGoogle ? "Google Play real-time developer notification" : "App Store Server Notification")
        object["store"] = .string(notification.store)
        object["notificationUUID"] = .string(notification.notificationUUID)
        object["notificationType"] = .string(notification.notificationType)
        if let subtype = notification.subtype { object["subtype"] = .string(subtype) }
        Timestamps.set(&object, "signedDate", notification.signedDate)
        Timestamps.set(&object, "receivedAt", notification.receivedAt)
        if let original = notification.originalTransactionId {
            object[fromGoogle ? "purchaseToken" : "originalTransactionId"] = .string(original)
        }
        object["summary"] = .string([notification.notificationType, notification.subtype].compactMap { $0 }.joined(separator: " · "))
        if let payload = fromGoogle ? JSONParser.storedObject(notification.jws) : Self.decodedNotification(notification.jws) {
            object["payload"] = .object(payload)
        } else {
            Self.markCorrupt(&object)
            store.unreadableRows.record(UnreadableRow(table: "notifications", key: notification.notificationUUID))
        }
        return Self.at(notification.signedDate, order: 0, object)
    }

    /// The notification's payload with the signed items inside it decoded as well.
    private static func decodedNotification(_ jws: String) -> JSONObject? {
        guard var payload = (try? SignedPayload(jws))?.payload else { return nil }
        if var data = payload["data"]?.objectValue {
            for (signed, decoded) in [("signedTransactionInfo", "transactionInfo"), ("signedRenewalInfo", "renewalInfo")] {
                if let inner = data[signed]?.stringValue, let decodedPayload = (try? SignedPayload(inner))?.payload {
                    data[decoded] = .object(decodedPayload)
                    data[signed] = nil
                }
            }
            payload["data"] = .object(data)
        }
        return payload
    }

    static func entries(_ grant: PromotionalGrant) -> [Entry] {
        var given = base("grant", grant.environment, source: "support: \(grant.grantedBy)")
        given["grant"] = .object(SubscriberView.json(grant, now: grant.startsAt))
        given["summary"] = .string(
            "Granted \(grant.entitlement) until \(Timestamps.iso(grant.expiresDate))\(grant.reason.map { ": \($0)" } ?? "")")
        var entries = [at(grant.startsAt, order: 3, given)]
        if let revokedAt = grant.revokedAt {
            var revoked = base("grantRevoked", grant.environment, source: "support: \(grant.revokedBy ?? grant.grantedBy)")
            revoked["grant"] = .object(SubscriberView.json(grant, now: revokedAt))
            revoked["summary"] = .string("Revoked the grant of \(grant.entitlement)")
            entries.append(at(revokedAt, order: 3, revoked))
        }
        return entries
    }

    /// A Google Play purchase as last read (placed at its start), and its void.
    static func entries(_ purchase: PlayPurchase, answer: String?) -> [Entry] {
        var object = base("playPurchase", purchase.environment, source: "Google Play (read from the Developer API)")
        object["purchaseToken"] = .string(purchase.purchaseToken)
        object["googleProductId"] = .string(purchase.productId)
        if let plan = purchase.basePlanId { object["basePlanId"] = .string(plan) }
        if let order = purchase.orderId { object["orderId"] = .string(order) }
        Timestamps.set(&object, "readAt", purchase.readAt)
        object["summary"] = .string(
            "Google Play \(purchase.productId)\(purchase.basePlanId.map { " (\($0))" } ?? ""): \(purchase.googleState)")
        if let answer, let payload = (try? JSONParser.parse(Array(answer.utf8)))?.objectValue { object["payload"] = .object(payload) }
        var entries = [at(purchase.startTime, order: 1, object)]
        if let voided = purchase.voidedAt {
            var void = base("playVoided", purchase.environment, source: "Google Play (voided purchase)")
            void["purchaseToken"] = .string(purchase.purchaseToken)
            void["summary"] = .string("Google Play voided the purchase (refund or chargeback)")
            entries.append(at(voided, order: 2, void))
        }
        return entries
    }

    /// An answer to Apple's realtime retention request, and the save it brought.
    static func entries(_ record: RetentionRecord) -> [Entry] {
        var object = base("retention", record.environment, source: "Retention Messaging (Apple's realtime request)")
        object["retention"] = .object(record.json)
        object["summary"] = .string(
            "Cancellation page: answered \(record.answer.kind) \(record.answer.messageIdentifier) (rule \(record.rule))")
        var entries = [at(record.answeredAt, order: 0, object)]
        if let saved = record.savedAt {
            var save = base("retentionSaved", record.environment, source: "Entitle (attributed from later facts)")
            save["retention"] = .object(record.json)
            save["summary"] = .string("Saved by the \(record.answer.kind) of rule \(record.rule): \(record.savedBy ?? "?")")
            entries.append(at(saved, order: 5, save))
        }
        return entries
    }

    /// What the app said the customer did with a purchase (refund reviews are answered from it).
    private static func entry(_ usage: UsageRecord) -> Entry {
        var object: JSONObject = ["kind": "usage", "source": .string("app server (\(usage.recordedBy))")]
        object["usage"] = .object(usage.json)
        var summary = "Usage of \(usage.transactionId ?? usage.purchaseToken ?? "?")"
        if let consumed = usage.consumedPercent { summary += ": \(String(format: "%g", consumed)) % consumed" }
        if usage.delivered == false { summary += ", not delivered (\(usage.undeliveredReason ?? "OTHER"))" }
        if !usage.events.isEmpty { summary += ", \(usage.events.count) events" }
        object["summary"] = .string(summary)
        return at(usage.recordedAt, order: 4, object)
    }

    private func transfer(_ environment: String, _ transfer: LinkTransfer) -> Entry {
        var object = Self.base("linkTransfer", environment, source: "client post (transferPolicy transfer)")
        object["originalTransactionId"] = .string(transfer.originalTransactionId)
        object["from"] = .string(transfer.from)
        object["to"] = .string(transfer.to)
        object["summary"] = .string("Subscription \(transfer.originalTransactionId) moved from \(transfer.from) to \(transfer.to)")
        return Self.at(transfer.at, order: 4, object)
    }

    private static func entry(_ event: OutboxEvent) -> Entry {
        var object = base("event", event.environment, source: "Entitle")
        object["eventId"] = .string(event.id)
        object["type"] = .string(event.type)
        object["sequence"] = .int(event.sequence)
        Timestamps.set(&object, "createdAt", event.createdAt)
        if let body = try? JSONParser.parse(Array(event.body.utf8)), let body = body.objectValue {
            if let source = body["source"]?.stringValue { object["source"] = .string(source) }
            object["payload"] = .object(body)
        }
        object["summary"] = .string("Event: " + event.type.replacingOccurrences(of: "_", with: " ").lowercased())
        return at(event.occurredAt, order: 5, object)
    }

    private static func entry(_ delivery: WebhookDelivery) -> Entry {
        var object: JSONObject = ["kind": "delivery", "source": "webhook"]
        for member in EventFeed.json(delivery).members where member.key != "kind" { object[member.key] = member.value }
        object["deliveryId"] = object["id"]
        object["id"] = nil
        object["summary"] = .string("Delivery to \(WebhookEndpoint.label(of: delivery.endpoint)): \(delivery.status.rawValue)")
        return at(delivery.deliveredAt ?? delivery.createdAt, order: 6, object)
    }

    private static func base(_ kind: String, _ environment: String, source: String) -> JSONObject {
        ["kind": .string(kind), "environment": .string(environment), "source": .string(source)]
    }

    private static func at(_ instant: Int64, order: Int, _ object: JSONObject) -> Entry {
        var object = object
        var ordered: JSONObject = [:]
        Timestamps.set(&ordered, "at", instant)
        for member in object.members { ordered[member.key] = member.value }
        object = ordered
        return Entry(at: instant, order: order, object: object)
    }
}
