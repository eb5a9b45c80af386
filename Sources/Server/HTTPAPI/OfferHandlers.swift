import HTTP
import JSON

/// `POST /v1/promotional-offers/sign` and `POST /v1/introductory-offers/eligibility`.
/// Both are CPU-bound and short (one or two ECDSA signatures), so they run on the event loop.
struct OfferHandlers: Sendable {
    let authenticator: APIKeyAuthenticator
    let services: [String: OfferService]
    let metrics: Metrics

    func signPromotionalOffer(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        let caller = try authenticator.authenticate(request)
        let body = try RequestBody(request)
        let offerRequest = PromotionalOfferRequest(productId: try body.requiredString("productId"),
                                                   offerId: try body.requiredString("offerId"),
                                                   appAccountToken: try body.optionalString("appAccountToken"),
                                                   transactionId: try body.optionalString("transactionId"))
        let answer = try service(for: caller).signPromotionalOffer(offerRequest)
        metrics.count("entitle_offers_signed_total", label: "kind", "v1")
        if answer["jws"] != nil { metrics.count("entitle_offers_signed_total", label: "kind", "promotional-jws") }
        return .json(200, .object(answer))
    }

    func introductoryOfferEligibility(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        let caller = try authenticator.authenticate(request)
        let body = try RequestBody(request)
        let eligible = try body.optionalBool("eligible")
        if eligible != nil && caller.role != .server {
            throw ServiceError(status: 403, code: "FORBIDDEN", message: "only a server key may set \"eligible\"")
        }
        let eligibilityRequest = IntroductoryOfferRequest(productId: try body.requiredString("productId"),
                                                          appAccountToken: try body.optionalString("appAccountToken"),
                                                          transactionId: try body.optionalString("transactionId"),
                                                          eligible: eligible)
        let answer = try service(for: caller).introductoryOfferEligibility(eligibilityRequest)
        if answer["jws"] != nil { metrics.count("entitle_offers_signed_total", label: "kind", "intro-eligibility-jws") }
        return .json(200, .object(answer))
    }

    private func service(for caller: Caller) throws(ServiceError) -> OfferService {
        guard let service = services[caller.app.id] else {
            throw ServiceError(status: 500, code: "INTERNAL", message: "no signer for this app")
        }
        return service
    }
}
