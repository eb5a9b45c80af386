import AppStore
import Application
import HTTP
import JSON

/// `POST /v1/verify` (server key): verify and decode one signed item without storing it.
struct VerifyHandler: Sendable {
    let application: EntitleApplication

    /// The body member that names the kind: the API never guesses (P-08).
    static let members: [(String, SignedPayloadKind)] = [
        ("signedTransaction", .transaction), ("signedRenewalInfo", .renewalInfo),
        ("signedPayload", .notification), ("signedAppTransaction", .appTransaction),
    ]

    func handle(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireServerKey("verification")
            let body = try RequestBody(context.request)
            let present = Self.members.filter { body.object[$0.0] != nil }
            guard present.count == 1, let (member, kind) = present.first else {
                throw ServiceError.badRequest("send exactly one of \(Self.members.map(\.0).joined(separator: ", "))")
            }
            let jws = try body.requiredString(member)
            let app = caller.app.id
            application.services(for: caller).verify(jws, kind: kind) { outcome in
                switch outcome.result {
                case .valid:
                    var answer = outcome.summary
                    answer["status"] = nil
                    context.reply(.success(.object(answer)), app: app)
                case .invalid(let failure):
                    context.reply(error: failure, app: app)
                }
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
