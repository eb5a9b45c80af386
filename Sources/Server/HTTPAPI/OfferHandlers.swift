import Dispatch
import Entitlements
import Foundation
import HTTP
import JSON

/// `POST /v1/promotional-offers/sign` and `POST /v1/introductory-offers/eligibility`. Signing is
/// CPU-bound and short, so an offer anyone may have is signed on the event loop; when the answer
/// needs the customer's stored history the work moves to the storage queue.
struct OfferHandlers: Sendable {
    let authenticator: APIKeyAuthenticator
    let services: [String: OfferService]
    let subscribers: [String: SubscriberService]
    let metrics: Metrics
    let storageQueue: DispatchQueue

    func signPromotionalOffer(_ context: HTTPRequestContext) {
        let parsed: (OfferService, PromotionalOfferRequest)
        do { parsed = try parseSign(context.request) } catch {
            context.respond(.error(error))
            return
        }
        let (service, request) = parsed
        guard service.needsHistory(offerId: request.offerId), let subscribers = subscribers[service.app.id] else {
            context.respond(respondSign(service, request, subscriptions: []))
            return
        }
        storageQueue.async {
            do {
                let history = try subscribers.subscriptions(appAccountToken: request.appAccountToken,
                                                            transactionId: request.transactionId, now: Date())
                context.respond(respondSign(service, request, subscriptions: history))
            } catch {
                context.respond(.error(ServiceError(status: 503, code: "STORAGE_UNAVAILABLE", message: "stored history cannot be read")))
            }
        }
    }

    private func parseSign(_ request: HTTPRequest) throws(ServiceError) -> (OfferService, PromotionalOfferRequest) {
        let caller = try authenticator.authenticate(request)
        let body = try RequestBody(request)
        let offerRequest = PromotionalOfferRequest(productId: try body.requiredString("productId"),
                                                   offerId: try body.requiredString("offerId"),
                                                   appAccountToken: try body.optionalString("appAccountToken"),
                                                   transactionId: try body.optionalString("transactionId"))
        return (try service(for: caller), offerRequest)
    }

    private func respondSign(_ service: OfferService, _ request: PromotionalOfferRequest,
                             subscriptions: [SubscriptionState]) -> HTTPResponse {
        do {
            let answer = try service.signPromotionalOffer(request, subscriptions: subscriptions)
            metrics.count("entitle_offers_signed_total", label: "kind", "v1")
            if answer["jws"] != nil { metrics.count("entitle_offers_signed_total", label: "kind", "promotional-jws") }
            return .json(200, .object(answer))
        } catch {
            return .error(error)
        }
    }

    func introductoryOfferEligibility(_ context: HTTPRequestContext) {
        let parsed: (OfferService, IntroductoryOfferRequest)
        do {
            let caller = try authenticator.authenticate(context.request)
            let body = try RequestBody(context.request)
            if body.object["eligible"] != nil {
                throw ServiceError.badRequest("\"eligible\" is decided from stored history and cannot be sent")
            }
            parsed = (try service(for: caller),
                      IntroductoryOfferRequest(productId: try body.requiredString("productId"),
                                               appAccountToken: try body.optionalString("appAccountToken"),
                                               transactionId: try body.optionalString("transactionId")))
        } catch {
            context.respond(.error(error as? ServiceError ?? .badRequest("invalid request")))
            return
        }
        let (service, request) = parsed
        storageQueue.async {
            do {
                let history = try subscribers[service.app.id]?.transactions(appAccountToken: request.appAccountToken,
                                                                            transactionId: request.transactionId) ?? []
                let answer = try service.introductoryOfferEligibility(request, transactions: history)
                if answer["jws"] != nil { metrics.count("entitle_offers_signed_total", label: "kind", "intro-eligibility-jws") }
                context.respond(.json(200, .object(answer)))
            } catch let error as ServiceError {
                context.respond(.error(error))
            } catch {
                context.respond(.error(ServiceError(status: 503, code: "STORAGE_UNAVAILABLE", message: "stored history cannot be read")))
            }
        }
    }

    private func service(for caller: Caller) throws(ServiceError) -> OfferService {
        guard let service = services[caller.app.id] else {
            throw ServiceError(status: 500, code: "INTERNAL", message: "no signer for this app")
        }
        return service
    }
}
