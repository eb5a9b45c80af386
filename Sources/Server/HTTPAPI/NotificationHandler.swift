import Application
import Foundation
import HTTP
import Instants
import JSON

/// `POST /v1/notifications/apple`. No API key: the signature is the authentication. 200 only
/// once stored; 422 when the payload is invalid (Apple stops retrying); 503 when verification or
/// storage may succeed later (Apple retries).
struct NotificationHandler: Sendable {
    let application: EntitleApplication

    func handle(_ context: HTTPRequestContext) {
        do {
            let signedPayload = try RequestBody(context.request).requiredString("signedPayload")
            let body = String(decoding: context.request.body, as: UTF8.self)
            application.ingestNotification(signedPayload: signedPayload, body: body, receivedAt: application.clock.now()) { result in
                context.reply(result.map { .object(["status": .string($0.rawValue)]) }, app: nil)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
