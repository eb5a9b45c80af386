import Application
import Foundation
import HTTP
import JSON

/// `POST /v1/subscribers/{appAccountToken}/sync`, `POST /v1/transactions/{transactionId}/sync` and
/// `POST /v1/notifications/apple/backfill` (server key). The sync use cases wait on Apple on the
/// blocking pool.
struct SyncHandlers: Sendable {
    let application: EntitleApplication

    private func services(_ context: HTTPRequestContext) throws(ServiceError) -> (AppServices, SyncService) {
        let caller = try application.authenticator.authenticate(authorization: context.request.header("authorization"))
        try caller.requireServerKey("sync")
        let services = application.services(for: caller)
        return (services, try services.requireSync())
    }

    func syncSubscriber(_ context: HTTPRequestContext) {
        do {
            let (services, sync) = try services(context)
            let token = context.pathParameters["appAccountToken"] ?? ""
            sync.syncSubscriber(appAccountToken: token) { synced in
                guard case .success(let report) = synced else { return context.reply(synced.map { _ in .null }, app: services.app.id) }
                services.subscribers.subscriber(appAccountToken: token, environment: report.environment, at: Date()) { read in
                    context.reply(
                        read.flatMap { found in
                            guard let found else {
                                return .failure(ServiceError.notFound("no stored subscription is linked to this appAccountToken"))
                            }
                            return .success(.object(["sync": .object(report.json), "subscriber": .object(found)]))
                        }, app: services.app.id)
                }
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func syncTransaction(_ context: HTTPRequestContext) {
        do {
            let (services, sync) = try services(context)
            let transactionId = context.pathParameters["transactionId"] ?? ""
            sync.syncTransaction(transactionId) { synced in
                guard case .success(let report) = synced else { return context.reply(synced.map { _ in .null }, app: services.app.id) }
                services.subscribers.subscriber(transactionId: transactionId, syncedIn: report.environment) { read in
                    context.reply(
                        read.map { subscriber in
                            var answer: JSONObject = ["sync": .object(report.json)]
                            if let subscriber { answer["subscriber"] = .object(subscriber) }
                            return .object(answer)
                        }, app: services.app.id)
                }
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
            let end = try body.optionalInstant("endDate") ?? Milliseconds.since1970(Date())
            guard start < end else { throw ServiceError.badRequest("startDate must be before endDate") }
            sync.backfill(start: start, end: end) { result in
                context.reply(result.map { .object(["backfill": .object($0.json)]) }, app: services.app.id)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
