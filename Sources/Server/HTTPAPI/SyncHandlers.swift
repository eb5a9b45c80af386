import AppStoreAPI
import Dispatch
import Foundation
import HTTP
import JSON

/// `POST /v1/subscribers/{appAccountToken}/sync`, `POST /v1/transactions/{transactionId}/sync` and
/// `POST /v1/notifications/apple/backfill` (server key). They wait on Apple: always off the loops.
struct SyncHandlers: Sendable {
    let authenticator: APIKeyAuthenticator
    let syncs: [String: SyncService]
    let subscribers: [String: SubscriberService]
    let queue: DispatchQueue

    private func run(_ context: HTTPRequestContext, _ work: @escaping @Sendable (SyncService, SubscriberService) throws -> JSONObject) {
        queue.async {
            do {
                let caller = try authenticator.authenticate(context.request)
                guard caller.role == .server else { throw ServiceError(status: 403, code: "FORBIDDEN", message: "needs a server key") }
                guard let sync = syncs[caller.app.id], let subscribers = subscribers[caller.app.id] else {
                    throw ServiceError(status: 422, code: "SYNC_NOT_CONFIGURED",
                                       message: "the App Store Server API needs signingKey.issuerId for this app")
                }
                context.respond(.json(200, .object(try work(sync, subscribers))))
            } catch let error as ServiceError {
                context.respond(.error(error))
            } catch let error as AppStoreAPIError {
                context.respond(.error(Self.serviceError(error)))
            } catch {
                context.respond(.error(ServiceError(status: 503, code: "STORAGE_UNAVAILABLE", message: "storage failed; try again")))
            }
        }
    }

    /// Apple's trouble as our answer: retryable → 503 with Retry-After, otherwise 502 with Apple's details.
    static func serviceError(_ error: AppStoreAPIError) -> ServiceError {
        var details: JSONObject = [:]
        if case .api(let status, let code, _, _, let environment) = error {
            details["appStoreStatus"] = .int(Int64(status))
            if let code { details["appStoreErrorCode"] = .int(code.rawValue) }
            details["environment"] = .string(environment)
        }
        if error.isRetryable {
            return ServiceError(status: 503, code: "APP_STORE_UNAVAILABLE", message: error.description, details: details)
        }
        return ServiceError(status: 502, code: "APP_STORE_API_ERROR", message: error.description, details: details)
    }

    func syncSubscriber(_ context: HTTPRequestContext) {
        run(context) { sync, subscribers in
            let token = context.pathParameters["appAccountToken"] ?? ""
            guard UUID.isCanonicalText(token) else { throw ServiceError.badRequest("appAccountToken must be a UUID") }
            let report = try sync.syncSubscriber(appAccountToken: token)
            guard let subscriber = try subscribers.subscriber(appAccountToken: token, environment: report.environment) else {
                throw ServiceError(status: 404, code: "NOT_FOUND", message: "no stored subscription is linked to this appAccountToken")
            }
            return ["sync": .object(report.json), "subscriber": .object(subscriber)]
        }
    }

    func syncTransaction(_ context: HTTPRequestContext) {
        run(context) { sync, subscribers in
            let transactionId = context.pathParameters["transactionId"] ?? ""
            let report = try sync.syncTransaction(transactionId)
            var answer: JSONObject = ["sync": .object(report.json)]
            if let environment = report.environment, let original = try sync.subscription(of: transactionId, environment: environment),
               let subscriber = try subscribers.subscriber(originalTransactionId: original, environment: environment) {
                answer["subscriber"] = .object(subscriber)
            }
            return answer
        }
    }

    func backfill(_ context: HTTPRequestContext) {
        run(context) { sync, _ in
            let body = try RequestBody(context.request)
            let start = try Self.instant(body, "startDate")
            let end = try body.object["endDate"] == nil ? Int64(Date().timeIntervalSince1970 * 1000) : Self.instant(body, "endDate")
            guard start < end else { throw ServiceError.badRequest("startDate must be before endDate") }
            return ["backfill": .object(try sync.backfill(start: start, end: end).json)]
        }
    }

    /// Epoch milliseconds or an ISO 8601 string.
    static func instant(_ body: RequestBody, _ key: String) throws(ServiceError) -> Int64 {
        if let number = body.object[key]?.int64Value { return number }
        guard let text = try body.optionalString(key) else { throw ServiceError.badRequest("missing field \"\(key)\"") }
        guard let date = ISO8601DateFormatter().date(from: text) else {
            throw ServiceError.badRequest("\(key) must be epoch milliseconds or ISO 8601")
        }
        return Int64(date.timeIntervalSince1970 * 1000)
    }
}
