import Application
import Entitlements
import Foundation
import HTTP
import Instants
import JSON

/// `GET /v1/events`, `GET /v1/events/{id}`, `GET /v1/webhooks/deliveries`,
/// `POST /v1/webhooks/deliveries/{id}/retry` and `POST /v1/webhooks/test` (server key): decode,
/// call the app's event feed, encode.
struct EventHandlers: Sendable {
    let application: EntitleApplication

    private func feed(_ context: HTTPRequestContext, _ what: String) throws(ServiceError) -> (EventFeed, String) {
        let (feed, caller) = try feedAndCaller(context, what)
        return (feed, caller.app.id)
    }

    private func feedAndCaller(_ context: HTTPRequestContext, _ what: String) throws(ServiceError) -> (EventFeed, Caller) {
        let caller = try application.caller(context)
        try caller.requireServerKey(what)
        return (application.services(for: caller).events, caller)
    }

    func listEvents(_ context: HTTPRequestContext) {
        do {
            let (feed, app) = try feed(context, "the event feed")
            let query = try Query(context.request)
            let limit = try query.integer("limit", default: 100, range: 1...EventFeed.maxLimit)
            let after = query["after"].map { Int64($0) } ?? 0
            guard let after, after >= 0 else { throw ServiceError.badRequest("after must be a sequence number (0 or more)") }
            feed.events(after: after, limit: limit) { context.reply($0.map(JSONValue.object), app: app) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func getEvent(_ context: HTTPRequestContext) {
        do {
            let (feed, app) = try feed(context, "the event feed")
            feed.event(id: context.pathParameters["id"] ?? "") { result in
                context.reply(
                    result.flatMap { event in
                        event.map { .success(.object($0)) } ?? .failure(ServiceError.notFound("no event with this id"))
                    }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func listDeliveries(_ context: HTTPRequestContext) {
        do {
            let (feed, app) = try feed(context, "webhook deliveries")
            let query = try Query(context.request)
            let limit = try query.integer("limit", default: 100, range: 1...EventFeed.maxLimit)
            var status: WebhookDelivery.Status?
            if let name = query["status"] {
                guard let known = WebhookDelivery.Status(rawValue: name) else {
                    throw ServiceError.badRequest("status must be pending, failed or delivered")
                }
                status = known
            }
            feed.deliveries(status: status, limit: limit) { context.reply($0.map(JSONValue.object), app: app) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func retryDelivery(_ context: HTTPRequestContext) {
        do {
            let (feed, caller) = try feedAndCaller(context, "webhook deliveries")
            let app = caller.app.id
            let id = context.pathParameters["id"] ?? ""
            application.instrumentation.record(.supportAction(app: app, key: caller.keyName, action: "redeliver", target: id))
            feed.retry(deliveryId: id, now: application.clock.now()) { result in
                context.reply(
                    result.flatMap { delivery in
                        delivery.map { .success(.object(["delivery": .object($0)])) }
                            ?? .failure(ServiceError.notFound("no delivery with this id"))
                    }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func sendTest(_ context: HTTPRequestContext) {
        do {
            let (feed, app) = try feed(context, "webhook tests")
            feed.sendTest(now: application.clock.now()) { context.reply($0.map(JSONValue.object), app: app) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
