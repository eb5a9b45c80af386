import AppStore
import Dispatch
import HTTP
import JSON

/// `POST /v1/verify` (server key): verify and decode one signed item without storing it.
struct VerifyHandler: Sendable {
    let authenticator: APIKeyAuthenticator
    let services: [String: VerificationService]
    let metrics: Metrics

    /// The body member that names the kind: the API never guesses (P-08).
    static let members: [(String, SignedPayloadKind)] = [
        ("signedTransaction", .transaction), ("signedRenewalInfo", .renewalInfo),
        ("signedPayload", .notification), ("signedAppTransaction", .appTransaction),
    ]

    func handle(_ context: HTTPRequestContext) {
        let request: (VerificationService, String, SignedPayloadKind)
        do { request = try parse(context.request) } catch {
            context.respond(.error(error))
            return
        }
        let (service, jws, kind) = request
        // With online checks the verifier waits on OCSP: never on the event loop.
        if service.app.verification.onlineChecks {
            DispatchQueue.global().async { context.respond(answer(service.verify(jws, kind: kind))) }
        } else {
            context.respond(answer(service.verify(jws, kind: kind)))
        }
    }

    private func parse(_ request: HTTPRequest) throws(ServiceError) -> (VerificationService, String, SignedPayloadKind) {
        let caller = try authenticator.authenticate(request)
        guard caller.role == .server else {
            throw ServiceError(status: 403, code: "FORBIDDEN", message: "verification needs a server key")
        }
        let body = try RequestBody(request)
        let present = Self.members.filter { body.object[$0.0] != nil }
        guard present.count == 1, let (member, kind) = present.first else {
            throw .badRequest("send exactly one of \(Self.members.map(\.0).joined(separator: ", "))")
        }
        let jws = try body.requiredString(member)
        guard let service = services[caller.app.id] else {
            throw ServiceError(status: 500, code: "INTERNAL", message: "no verifier for this app")
        }
        return (service, jws, kind)
    }

    private func answer(_ outcome: VerificationOutcome) -> HTTPResponse {
        metrics.count("entitle_verifications_total", label: "result", outcome.result.statusName)
        switch outcome.result {
        case .valid(let payload):
            var body: JSONObject = ["kind": .string(outcome.kind.rawValue)]
            if let environment = outcome.environment { body["environment"] = .string(environment) }
            body["payload"] = .object(payload)
            for member in outcome.contents.members { body[member.key] = member.value }
            return .json(200, .object(body))
        case .invalid(let failure):
            return .error(Self.error(for: failure))
        }
    }

    /// 422 `VERIFICATION_FAILED` with the status, or 503 `RETRYABLE_VERIFICATION_FAILURE` (+ `Retry-After`).
    static func error(for failure: VerificationFailure) -> ServiceError {
        if failure.status == .retryableVerificationFailure {
            return ServiceError(status: 503, code: "RETRYABLE_VERIFICATION_FAILURE", message: failure.reason,
                                details: ["status": .string(failure.status.rawValue)])
        }
        return ServiceError(status: 422, code: "VERIFICATION_FAILED", message: failure.reason,
                            details: ["status": .string(failure.status.rawValue)])
    }
}
