import Application
import Foundation
import HTTP
import Instants
import JSON

/// Refund reviews: the app's usage evidence (server key), support's per-customer override (admin
/// key) and the requests with what was answered (server key). Decode, call one use case, encode.
struct RefundHandlers: Sendable {
    let application: EntitleApplication

    /// `POST /v1/subscribers/{appAccountToken}/usage`: one item, or `{"usage": [item, …]}`.
    func recordUsage(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireServerKey("recording usage")
            let body = try RequestBody(context.request)
            application.services(for: caller).refunds.recordUsage(
                appAccountToken: context.pathParameters["appAccountToken"] ?? "", body: body.object, by: caller,
                now: application.clock.now()
            ) { result in
                switch result {
                case .success(let answer): context.respond(.json(201, JSONValue.object(answer).serializedBytes, app: caller.app.id))
                case .failure(let error): context.reply(error: error, app: caller.app.id)
                }
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `GET`, `PUT` `{"override", "reason"?}` and `DELETE` `/v1/subscribers/{appAccountToken}/refund-override`.
    func override(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireAdminKey("a customer's refund override")
            let token = context.pathParameters["appAccountToken"] ?? ""
            let refunds = application.services(for: caller).refunds
            let reply: @Sendable (Result<JSONObject, any Error>) -> Void = { result in
                if case .success = result, context.request.method != "GET" {
                    application.instrumentation.record(
                        .supportAction(
                            app: caller.app.id, key: caller.keyName, action: "refund override \(context.request.method)", target: token))
                }
                context.reply(result.map(JSONValue.object), app: caller.app.id)
            }
            switch context.request.method {
            case "GET": refunds.override(appAccountToken: token, completion: reply)
            case "DELETE":
                refunds.setOverride(
                    appAccountToken: token, override: nil, reason: nil, by: caller, now: application.clock.now(), completion: reply)
            default:
                let body = try RequestBody(context.request)
                refunds.setOverride(
                    appAccountToken: token, override: try body.requiredString("override"), reason: try body.optionalString("reason"),
                    by: caller, now: application.clock.now(), completion: reply)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `GET /v1/refund-requests?limit=`: newest first.
    func list(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireServerKey("refund requests")
            let limit = try Query(context.request).integer("limit", default: 50, range: 1...500)
            application.services(for: caller).refunds.requests(limit: limit, now: application.clock.now()) {
                context.reply($0.map(JSONValue.object), app: caller.app.id)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
