import Application
import Foundation
import HTTP
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
            application.answerRetention(signedPayload: signedPayload, now: Date()) { result in
                context.reply(result.map(JSONValue.object), app: nil)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
