import AppStore
import Application
import Foundation
import HTTP
import Instants
import JSON

/// `POST /v1/retention/apple` `{"signedPayload"}`: Apple's realtime Retention Messaging request.
/// No API key: the App Store's signature is the authentication. 200 with the answer; a request
/// that does not verify is refused (no offer); anything else fails at once, so Apple shows its
/// default message instead of waiting.
struct RetentionHandler: Sendable {
    let application: EntitleApplication

    func handle(_ context: HTTPRequestContext) {
        do {
            let signedPayload = try RequestBody(context.request).requiredString("signedPayload")
            application.answerRetention(signedPayload: signedPayload, now: application.clock.now()) { result in
                context.reply(result.map(JSONValue.object), app: nil)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// The admin API over the Retention Messaging API (`?environment=`, default Sandbox):
    /// `GET /v1/retention/messages`, `PUT|DELETE /v1/retention/messages/{id}` (the message's JSON),
    /// `GET /v1/retention/images`, `PUT|DELETE /v1/retention/images/{id}?imageSize=` (the PNG),
    /// `GET|PUT|DELETE /v1/retention/defaults/{productId}/{locale}` (`{"messageIdentifier"}`),
    /// `GET|PUT|DELETE /v1/retention/realtime-url` (`{"realtimeURL"}`),
    /// `POST /v1/retention/performance-test` (`{"originalTransactionId"}`) and
    /// `GET /v1/retention/performance-test/{requestId}`.
    func manage(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireAdminKey("managing retention messages")
            let query = try Query(context.request)
            let environment = AppStoreEnvironment(rawValue: query["environment"] ?? "Sandbox")
            let operation = try Self.operation(context)
            let app = caller.app.id
            let messaging = application.services(for: caller).retentionMessaging
            context.reply(app: app) { [application] in
                let answer = try await messaging.perform(operation, environment: environment)
                if context.request.method != "GET" {
                    application.instrumentation.record(
                        .supportAction(
                            app: app, key: caller.keyName, action: "retention \(context.request.method)",
                            target: String(context.request.path)))
                }
                return .object(answer)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    private static func operation(_ context: HTTPRequestContext) throws -> RetentionMessaging.Operation {
        let request = context.request
        let parameters = context.pathParameters
        let parts = request.path.split(separator: "/").map(String.init)  // v1, retention, area, …
        let area = parts.count > 2 ? parts[2] : ""
        func body() throws -> RequestBody { try RequestBody(request) }
        switch (area, request.method, parts.count) {
        case ("messages", "GET", 3): return .listMessages
        case ("messages", "PUT", 4): return .uploadMessage(id: parameters["id"] ?? "", message: try body().object)
        case ("messages", "DELETE", 4): return .deleteMessage(id: parameters["id"] ?? "")
        case ("images", "GET", 3): return .listImages
        case ("images", "PUT", 4):
            return .uploadImage(id: parameters["id"] ?? "", png: request.body, size: try Query(request)["imageSize"] ?? "FULL_SIZE")
        case ("images", "DELETE", 4): return .deleteImage(id: parameters["id"] ?? "")
        case ("defaults", "GET", 5): return .getDefault(productId: parameters["productId"] ?? "", locale: parameters["locale"] ?? "")
        case ("defaults", "PUT", 5):
            return .setDefault(
                productId: parameters["productId"] ?? "", locale: parameters["locale"] ?? "",
                messageIdentifier: try body().requiredString("messageIdentifier"))
        case ("defaults", "DELETE", 5): return .deleteDefault(productId: parameters["productId"] ?? "", locale: parameters["locale"] ?? "")
        case ("realtime-url", "GET", 3): return .getRealtimeURL
        case ("realtime-url", "PUT", 3): return .setRealtimeURL(try body().requiredString("realtimeURL"))
        case ("realtime-url", "DELETE", 3): return .deleteRealtimeURL
        case ("performance-test", "POST", 3):
            return .startPerformanceTest(originalTransactionId: try body().requiredString("originalTransactionId"))
        case ("performance-test", "GET", 4): return .performanceTestResult(requestId: parameters["requestId"] ?? "")
        default: throw ServiceError.notFound("no such retention endpoint")
        }
    }
}
