import AppStore
import Application
import Foundation
import HTTP
import Instants
import JSON

/// `POST /v1/promotional-offers/sign` and `POST /v1/introductory-offers/eligibility` (client or
/// server key): decode, call the offer use case, encode.
struct OfferHandlers: Sendable {
    let application: EntitleApplication

    func signPromotionalOffer(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            let body = try RequestBody(context.request)
            let request = PromotionalOfferRequest(
                productId: try body.requiredString("productId"),
                offerId: try body.requiredString("offerId"),
                appAccountToken: try body.optionalString("appAccountToken"),
                transactionId: try body.optionalString("transactionId"),
                environment: try body.optionalString("environment").map(AppStoreEnvironment.init(rawValue:)),
                signedTransaction: try body.optionalString("signedTransaction"), trustedCaller: caller.role.isServer)
            let app = caller.app.id
            application.services(for: caller).offers.signPromotionalOffer(request, now: application.clock.now()) { result in
                context.reply(result.map { .object($0) }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func introductoryOfferEligibility(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            let body = try RequestBody(context.request)
            if body.object["eligible"] != nil {
                throw ServiceError.badRequest("\"eligible\" is decided from stored history and cannot be sent")
            }
            let request = IntroductoryOfferRequest(
                productId: try body.requiredString("productId"),
                appAccountToken: try body.optionalString("appAccountToken"),
                transactionId: try body.optionalString("transactionId"),
                environment: try body.optionalString("environment").map(AppStoreEnvironment.init(rawValue:)),
                signedTransaction: try body.optionalString("signedTransaction"), trustedCaller: caller.role.isServer)
            let app = caller.app.id
            application.services(for: caller).offers.introductoryOfferEligibility(request, now: application.clock.now()) { result in
                context.reply(result.map { .object($0) }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
