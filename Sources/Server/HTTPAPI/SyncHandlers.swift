import Application
import Foundation
import HTTP
import Instants
import JSON

/// `POST /v1/subscribers/{appAccountToken}/sync`, `POST /v1/transactions/{transactionId}/sync` and
/// `POST /v1/notifications/apple/backfill` (server key): decode, await the sync use case (the
/// client going away cancels its calls to Apple), encode.
struct SyncHandlers: Sendable {
    let application: EntitleApplication

    private func services(_ context: HTTPRequestContext) throws(ServiceError) -> (AppServices, SyncService) {
        let caller = try application.caller(context)
        try caller.requireServerKey("sync")
        let services = application.services(for: caller)
        let target = context.pathParameters["appAccountToken"] ?? context.pathParameters["transactionId"] ?? "backfill"
        application.instrumentation.record(.supportAction(app: caller.app.id, key: caller.keyName, action: "sync", target: target))
        return (services, try services.requireSync())
    }

    func syncSubscriber(_ context: HTTPRequestContext) {
        do {
            let (services, sync) = try services(context)
            let token = context.pathParameters["appAccountToken"] ?? ""
            context.reply(app: services.app.id) {
                let synced = try await sync.syncSubscriberAndRead(appAccountToken: token)
                guard let subscriber = synced.subscriber else {
                    throw ServiceError.notFound("no stored subscription is linked to this appAccountToken")
                }
                return .object(["sync": .object(synced.report.json), "subscriber": .object(subscriber)])
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func syncTransaction(_ context: HTTPRequestContext) {
        do {
            let (services, sync) = try services(context)
            let transactionId = context.pathParameters["transactionId"] ?? ""
            context.reply(app: services.app.id) {
                let synced = try await sync.syncTransactionAndRead(transactionId)
                var answer: JSONObject = ["sync": .object(synced.report.json)]
                if let subscriber = synced.subscriber { answer["subscriber"] = .object(subscriber) }
                return .object(answer)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func backfill(_ context: HTTPRequestContext) {
        do {
            let (services, sync) = try services(context)
            let body = try RequestBody(context.request)
            guard let start = try body.optionalInstant("startDate") else { throw ServiceError.badRequest("missing field \"startDate\"") }
            let end = try body.optionalInstant("endDate") ?? Milliseconds.since1970(application.clock.now())
            guard start < end else { throw ServiceError.badRequest("startDate must be before endDate") }
            context.reply(app: services.app.id) { .object(["backfill": .object(try await sync.backfill(start: start, end: end).json)]) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
