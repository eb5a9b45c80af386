import AppStore
import Application
import Entitlements
import Foundation
import HTTP
import Instants
import JSON

/// Transactions posted by apps, subscribers, and the notification audit trail: decode, call one
/// use case, encode. Where the work runs is the use case's decision.
struct SubscriberHandlers: Sendable {
    let application: EntitleApplication

    private func caller(_ context: HTTPRequestContext) throws(ServiceError) -> Caller {
        try application.caller(context)
    }

    // MARK: - POST /v1/transactions

    func postTransaction(_ context: HTTPRequestContext) {
        do {
            let caller = try caller(context)
            let body = try RequestBody(context.request)
            let app = caller.app.id
            application.services(for: caller).transactions.post(
                signedTransaction: try body.requiredString("signedTransaction"),
                signedRenewalInfo: try body.optionalString("signedRenewalInfo"),
                appAccountToken: try body.optionalString("appAccountToken"), now: application.clock.now()
            ) { result in
                context.reply(
                    result.map {
                        .object([
                            "transaction": .object($0.transaction.knownJSON),
                            "subscriber": .object($0.subscriber),
                        ])
                    }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - POST /v1/app-transactions

    func postAppTransaction(_ context: HTTPRequestContext) {
        do {
            let caller = try caller(context)
            let body = try RequestBody(context.request)
            let app = caller.app.id
            application.services(for: caller).downloads.post(
                signedAppTransaction: try body.requiredString("signedAppTransaction"),
                appAccountToken: try body.requiredString("appAccountToken"), now: application.clock.now()
            ) { result in
                context.reply(
                    result.map {
                        .object([
                            "appTransaction": .object($0.appTransaction.knownJSON),
                            "subscriber": .object($0.subscriber),
                        ])
                    }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - GET /v1/subscribers/…

    func getSubscriber(_ context: HTTPRequestContext) {
        do {
            let caller = try caller(context)
            let query = try Query(context.request)
            let app = caller.app.id
            application.services(for: caller).subscribers.serializedSubscriber(
                appAccountToken: context.pathParameters["appAccountToken"] ?? "", environment: query.environment,
                at: try query.instant(for: caller, now: application.clock.now())
            ) { result in
                context.reply(serialized: Self.subscriber(result, missing: "no subscriber with this appAccountToken"), app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// Server keys only: original transaction ids are nearly sequential, so a client key (public,
    /// inside the app) could walk them; an app proves possession by posting its signed transaction.
    func getSubscriberByTransaction(_ context: HTTPRequestContext) {
        do {
            let caller = try caller(context)
            try caller.requireServerKey("looking a subscriber up by originalTransactionId")
            let query = try Query(context.request)
            let app = caller.app.id
            application.services(for: caller).subscribers.subscriber(
                originalTransactionId: context.pathParameters["originalTransactionId"] ?? "", environment: query.environment,
                at: try query.instant(for: caller, now: application.clock.now())
            ) { result in
                context.reply(serialized: Self.subscriber(result, missing: "no subscription with this originalTransactionId"), app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// Server keys only, like the lookup by original transaction id.
    func getSubscriberByAppTransaction(_ context: HTTPRequestContext) {
        do {
            let caller = try caller(context)
            try caller.requireServerKey("looking a subscriber up by appTransactionId")
            let query = try Query(context.request)
            let app = caller.app.id
            application.services(for: caller).subscribers.subscriber(
                appTransactionId: context.pathParameters["appTransactionId"] ?? "", environment: query.environment,
                at: try query.instant(for: caller, now: application.clock.now())
            ) { result in
                context.reply(serialized: Self.subscriber(result, missing: "no subscription with this appTransactionId"), app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `{"subscriber": …}` around an answer already serialized (the lookup by token, the hot path).
    static func subscriber(_ result: Result<[UInt8]?, any Error>, missing: String) -> Result<[UInt8], any Error> {
        result.flatMap { found in
            guard let found else { return .failure(ServiceError.notFound(missing)) }
            var answer = JSONObjectWriter(capacity: found.count + 16)
            answer.set("subscriber", serialized: found)
            return .success(answer.finish())
        }
    }

    static func subscriber(_ result: Result<JSONObject?, any Error>, missing: String) -> Result<[UInt8], any Error> {
        subscriber(result.map { $0.map { JSONValue.object($0).serializedBytes } }, missing: missing)
    }

    // MARK: - GET /v1/notifications

    func listNotifications(_ context: HTTPRequestContext) {
        do {
            let caller = try caller(context)
            try caller.requireServerKey("the notification audit trail")
            let query = try Query(context.request)
            let limit = try query.integer("limit", default: 50, range: 1...500)
            let after = query["after"].flatMap { Int64($0) }
            if query["after"] != nil && after == nil { throw ServiceError.badRequest("after must be a cursor from a previous page") }
            let app = caller.app.id
            application.services(for: caller).subscribers.notifications(limit: limit, before: after) { result in
                context.reply(result.map { Self.page($0, limit: limit) }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `GET /v1/notifications/refused`: what was refused lately (refused notifications are not stored).
    func listRefusedNotifications(_ context: HTTPRequestContext) {
        do {
            let caller = try caller(context)
            try caller.requireServerKey("the notification audit trail")
            context.reply(.success(.object(application.services(for: caller).notifications.recentlyRefused())), app: caller.app.id)
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    private static func page(_ stored: [StoredNotification], limit: Int) -> JSONValue {
        let items: [JSONValue] = stored.map { notification in
            var item: JSONObject = [
                "notificationUUID": .string(notification.notificationUUID),
                "notificationType": .string(notification.notificationType),
                "environment": .string(notification.environment), "store": .string(notification.store),
            ]
            if let subtype = notification.subtype { item["subtype"] = .string(subtype) }
            Timestamps.set(&item, "signedDate", notification.signedDate)
            Timestamps.set(&item, "receivedAt", notification.receivedAt)
            // Apple's name a subscription; Google's the purchase token.
            if let original = notification.originalTransactionId {
                item[notification.store == "play_store" ? "purchaseToken" : "originalTransactionId"] = .string(original)
            }
            item["result"] = "applied"
            item["cursor"] = .string(String(notification.sequence))
            return .object(item)
        }
        var answer: JSONObject = ["notifications": .array(items)]
        if stored.count == limit, let last = stored.last { answer["next"] = .string(String(last.sequence)) }
        return .object(answer)
    }
}
