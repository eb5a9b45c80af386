import AppStore
import Dispatch
import Entitlements
import Foundation
import HTTP
import JSON

/// Transactions, App Store Server Notifications, subscribers and the notification audit trail.
/// Writes wait for a disk sync, so they never run on an event loop (the storage queue, or the
/// store's writer thread). Subscriber reads are a few indexed lookups answered from SQLite's and
/// the system's page cache: they run on the event loop, sparing two thread hops per request.
struct SubscriberHandlers: Sendable {
    let authenticator: APIKeyAuthenticator
    let subscribers: [String: SubscriberService]
    let appsByBundle: [String: String]
    let metrics: Metrics
    let storageQueue: DispatchQueue

    private func offload(_ context: HTTPRequestContext, _ work: @escaping @Sendable () throws -> HTTPResponse) {
        storageQueue.async {
            do {
                context.respond(try work())
            } catch let error as ServiceError {
                context.respond(.error(error))
            } catch let error as SubscriberService.IngestError {
                context.respond(.error(Self.serviceError(error)))
            } catch {
                // A storage failure: nothing was acknowledged, the sender may retry.
                context.respond(.error(ServiceError(status: 503, code: "STORAGE_UNAVAILABLE", message: "storage failed; try again")))
            }
        }
    }

    /// Runs `work` here (on the event loop) and answers.
    private func answerNow(_ context: HTTPRequestContext, _ work: () throws -> HTTPResponse) {
        do {
            context.respond(try work())
        } catch let error as ServiceError {
            context.respond(.error(error))
        } catch {
            context.respond(.error(ServiceError(status: 503, code: "STORAGE_UNAVAILABLE", message: "storage failed; try again")))
        }
    }

    static func serviceError(_ error: SubscriberService.IngestError) -> ServiceError {
        switch error {
        case .verification(let failure): VerifyHandler.error(for: failure)
        case .conflict: ServiceError(status: 409, code: "CONFLICT",
                                     message: "this subscription is linked to another appAccountToken; nothing changed")
        case .malformed(let message): ServiceError(status: 422, code: "VERIFICATION_FAILED", message: message,
                                                   details: ["status": "INVALID_JWT_FORMAT"])
        }
    }

    private func service(for caller: Caller) throws(ServiceError) -> SubscriberService {
        guard let service = subscribers[caller.app.id] else {
            throw ServiceError(status: 500, code: "INTERNAL", message: "no store for this app")
        }
        return service
    }

    // MARK: - POST /v1/transactions

    func postTransaction(_ context: HTTPRequestContext) {
        offload(context) {
            let caller = try authenticator.authenticate(context.request)
            let body = try RequestBody(context.request)
            let token = try body.optionalString("appAccountToken")
            if let token, !UUID.isCanonicalText(token) { throw ServiceError.badRequest("appAccountToken must be a UUID") }
            let (transaction, subscriber) = try service(for: caller).ingestTransaction(
                signedTransaction: try body.requiredString("signedTransaction"),
                signedRenewalInfo: try body.optionalString("signedRenewalInfo"), appAccountToken: token)
            return .json(200, .object(["transaction": .object(transaction.knownJSON), "subscriber": .object(subscriber)]))
        }
    }

    // MARK: - POST /v1/notifications/apple

    /// No API key: the signature is the authentication. 200 only once stored; 422 when the payload
    /// is invalid (Apple stops retrying); 503 when verification or storage may succeed later.
    ///
    /// Verification is CPU work and runs on the event loop (on the storage queue when online checks
    /// make it wait on OCSP); the write goes to the store's writer thread, which answers after the
    /// commit. No thread sits blocked per notification.
    func postNotification(_ context: HTTPRequestContext) {
        let service: SubscriberService, signedPayload: String, claimedEnvironment: String?
        do { (service, signedPayload, claimedEnvironment) = try notificationTarget(context.request) } catch {
            context.respond(.error(error))
            return
        }
        let metrics = self.metrics
        let store: @Sendable () -> Void = {
            do {
                let (batch, type) = try service.prepareNotification(signedPayload, claimedEnvironment: claimedEnvironment)
                service.store.apply(batch) { result in
                    switch result {
                    case .success(let outcome):
                        metrics.count("entitle_notifications_total", label: "type", type)
                        metrics.count("entitle_notifications_total", label: "result", outcome == .applied ? "applied" : "duplicate")
                        context.respond(.json(200, .object(["status": .string(outcome == .applied ? "applied" : "duplicate")])))
                    case .failure:
                        context.respond(.error(ServiceError(status: 503, code: "STORAGE_UNAVAILABLE", message: "storage failed; try again")))
                    }
                }
            } catch let error as SubscriberService.IngestError {
                if case .verification(let failure) = error {
                    metrics.count("entitle_notifications_total", label: "result", failure.status.rawValue)
                }
                context.respond(.error(Self.serviceError(error)))
            } catch {
                context.respond(.error(ServiceError(status: 503, code: "STORAGE_UNAVAILABLE", message: "try again")))
            }
        }
        if service.app.verification.onlineChecks { storageQueue.async(execute: store) } else { store() }
    }

    /// The app a notification is for, chosen by the bundle ID its payload claims (then verified).
    private func notificationTarget(_ request: HTTPRequest) throws(ServiceError) -> (SubscriberService, String, String?) {
        let body = try RequestBody(request)
        let signedPayload = try body.requiredString("signedPayload")
        let claimed = SignedPayloadInspection.unverifiedPayload(signedPayload).flatMap { try? ResponseBodyV2DecodedPayload(decoding: $0) }
        guard let claimed else {
            metrics.count("entitle_notifications_total", label: "result", "INVALID_JWT_FORMAT")
            throw VerifyHandler.error(for: VerificationFailure(.invalidJWTFormat,
                                                               SignedPayloadInspection.formatProblem(signedPayload) ?? "not a notification"))
        }
        guard let bundleId = claimed.identity.bundleId, let appId = appsByBundle[bundleId], let service = subscribers[appId] else {
            metrics.count("entitle_notifications_total", label: "result", "INVALID_APP_IDENTIFIER")
            throw VerifyHandler.error(for: VerificationFailure(.invalidAppIdentifier,
                                                               "no configured app has bundle ID \(claimed.identity.bundleId ?? "(absent)")"))
        }
        return (service, signedPayload, claimed.identity.environment)
    }

    // MARK: - GET /v1/subscribers/…

    func getSubscriber(_ context: HTTPRequestContext) {
        answerNow(context) {
            let caller = try authenticator.authenticate(context.request)
            let token = context.pathParameters["appAccountToken"] ?? ""
            guard UUID.isCanonicalText(token) else { throw ServiceError.badRequest("appAccountToken must be a UUID") }
            let service = try service(for: caller)
            let environment = try Self.environment(context.request, app: service.app)
            let at = try Self.asOf(context.request, caller: caller)
            guard let subscriber = try service.subscriber(appAccountToken: token, environment: environment, now: at) else {
                throw ServiceError(status: 404, code: "NOT_FOUND", message: "no subscriber with this appAccountToken")
            }
            return .json(200, .object(["subscriber": .object(subscriber)]))
        }
    }

    func getSubscriberByTransaction(_ context: HTTPRequestContext) {
        answerNow(context) {
            let caller = try authenticator.authenticate(context.request)
            let service = try service(for: caller)
            let environment = try Self.environment(context.request, app: service.app)
            let at = try Self.asOf(context.request, caller: caller)
            guard let subscriber = try service.subscriber(originalTransactionId: context.pathParameters["originalTransactionId"] ?? "",
                                                          environment: environment, now: at) else {
                throw ServiceError(status: 404, code: "NOT_FOUND", message: "no subscription with this originalTransactionId")
            }
            return .json(200, .object(["subscriber": .object(subscriber)]))
        }
    }

    /// `?environment=Sandbox` chooses another enabled environment than the default.
    static func environment(_ request: HTTPRequest, app: AppConfiguration) throws(ServiceError) -> String? {
        guard let value = QueryParameters(request.query)["environment"] else { return nil }
        guard app.environments.contains(value) else {
            throw .badRequest("environment must be one of \(app.environments.joined(separator: ", "))")
        }
        return value
    }

    /// `?at=` (server keys only): the state as it was or will be at that instant, epoch
    /// milliseconds or ISO 8601 (support questions such as "what did they have on the 3rd?").
    static func asOf(_ request: HTTPRequest, caller: Caller) throws(ServiceError) -> Date {
        guard let value = QueryParameters(request.query)["at"] else { return Date() }
        guard caller.role == .server else { throw ServiceError(status: 403, code: "FORBIDDEN", message: "at needs a server key") }
        if let milliseconds = Int64(value) { return Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: value) ?? ISO8601DateFormatter().date(from: value) { return date }
        throw .badRequest("at must be epoch milliseconds or an ISO 8601 time")
    }

    // MARK: - GET /v1/notifications

    func listNotifications(_ context: HTTPRequestContext) {
        offload(context) {
            let caller = try authenticator.authenticate(context.request)
            guard caller.role == .server else { throw ServiceError(status: 403, code: "FORBIDDEN", message: "needs a server key") }
            let query = QueryParameters(context.request.query)
            let limit = try query.integer("limit", default: 50, range: 1...500)
            let after = query["after"].flatMap { Int64($0) }
            if query["after"] != nil && after == nil { throw ServiceError.badRequest("after must be a cursor from a previous page") }
            let stored = try service(for: caller).store.notifications(appId: caller.app.id, limit: limit, before: after)
            let items: [JSONValue] = stored.map { notification in
                var item: JSONObject = ["notificationUUID": .string(notification.notificationUUID),
                                        "notificationType": .string(notification.notificationType),
                                        "environment": .string(notification.environment)]
                if let subtype = notification.subtype { item["subtype"] = .string(subtype) }
                Timestamps.set(&item, "signedDate", notification.signedDate)
                Timestamps.set(&item, "receivedAt", notification.receivedAt)
                if let original = notification.originalTransactionId { item["originalTransactionId"] = .string(original) }
                item["cursor"] = .string(String(notification.sequence))
                return .object(item)
            }
            var answer: JSONObject = ["notifications": .array(items)]
            if stored.count == limit, let last = stored.last { answer["next"] = .string(String(last.sequence)) }
            return .json(200, .object(answer))
        }
    }
}

/// `a=1&b=2` → values (percent-decoded).
struct QueryParameters {
    private var values: [String: String] = [:]

    init(_ query: Substring?) {
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard let key = parts.first else { continue }
            values[String(key)] = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : ""
        }
    }

    subscript(key: String) -> String? { values[key] }

    func integer(_ key: String, default value: Int, range: ClosedRange<Int>) throws(ServiceError) -> Int {
        guard let text = values[key] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .badRequest("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
