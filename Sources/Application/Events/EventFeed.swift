import AppStore
package import Entitlements
package import Foundation
import Instants
package import JSON

/// The pull feed (`GET /v1/events`) and delivery control (`/v1/webhooks/…`) of one app. Reads
/// and writes run on the blocking pool; answers are the API's JSON.
package struct EventFeed: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let eventWriter: AppEventWriter

    init(_ context: AppContext, eventWriter: AppEventWriter) {
        app = context.app
        store = context.store
        pool = context.pool
        self.eventWriter = eventWriter
    }

    package static let maxLimit = 1000

    /// Events after `sequence`, oldest first, and where the next page starts.
    package func events(after sequence: Int64, limit: Int, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        pool.run(
            {
                let events = try store.events(appId: app.id, after: sequence, limit: limit)
                return [
                    "events": .array(try events.map { .object(try Self.json($0)) }),
                    "nextAfter": .int(events.last?.sequence ?? sequence),
                ]
            }, completion: completion)
    }

    package func event(id: String, completion: @escaping @Sendable (Result<JSONObject?, any Error>) -> Void) {
        pool.run({ try store.event(appId: app.id, id: id).map(Self.json) }, completion: completion)
    }

    /// The stored body, as delivered.
    static func json(_ event: OutboxEvent) throws -> JSONObject {
        guard case .object(let body) = try JSONParser.parse(Array(event.body.utf8)) else { return [:] }
        return body
    }

    package func deliveries(
        status: WebhookDelivery.Status?, limit: Int, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        pool.run(
            { ["deliveries": .array(try store.deliveries(appId: app.id, status: status, limit: limit).map { .object(Self.json($0)) })] },
            completion: completion)
    }

    /// A delivery made pending again, due now, with a fresh retry window.
    package func retry(deliveryId: String, now: Date, completion: @escaping @Sendable (Result<JSONObject?, any Error>) -> Void) {
        pool.run(
            {
                let delivery = try store.retryDelivery(
                    appId: app.id, id: deliveryId, WebhookDelivery.rearmed(at: Milliseconds.since1970(now)))
                if delivery != nil { eventWriter.deliveries?.wake() }
                return delivery.map(Self.json)
            }, completion: completion)
    }

    /// A `TEST` event for every endpoint, through the outbox like any other event.
    package func sendTest(now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        guard !app.webhooks.isEmpty else {
            completion(.failure(ServiceError(status: 422, code: "NO_WEBHOOKS", message: "this app has no webhooks configured")))
            return
        }
        var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
        let id = eventWriter.composer.newId()
        batch.webhookTestId = id
        batch.source = "webhookTest"
        batch.requestedAt = Milliseconds.since1970(now)
        let test = batch
        pool.run(
            {
                _ = try store.record(test, outbox: eventWriter)
                return ["eventId": .string(id), "endpoints": .int(Int64(app.webhooks.count))]
            }, completion: completion)
    }

    static func json(_ delivery: WebhookDelivery) -> JSONObject {
        var object: JSONObject = [
            "id": .string(delivery.id), "kind": .string(delivery.kind.rawValue),
            "endpoint": .string(WebhookEndpoint.label(of: delivery.endpoint)), "status": .string(delivery.status.rawValue),
            "attempts": .int(Int64(delivery.attempts)),
        ]
        if let id = delivery.eventId { object["eventId"] = .string(id) }
        if let type = delivery.eventType { object["eventType"] = .string(type) }
        Timestamps.set(&object, "createdAt", delivery.createdAt)
        if delivery.status == .pending { Timestamps.set(&object, "nextAttemptAt", delivery.nextAt) }
        Timestamps.set(&object, "deliveredAt", delivery.deliveredAt)
        if let status = delivery.lastStatus { object["lastStatus"] = .int(Int64(status)) }
        if let error = delivery.lastError { object["lastError"] = .string(error) }
        return object
    }
}
