import Application
import Entitlements
import Foundation
import HTTP
import Instants
import JSON

/// Google Play: `POST /v1/purchases/google` and `POST /v1/offers/google/select` (client or
/// server key), and `POST /v1/notifications/google` (Pub/Sub push; its OIDC token is the
/// authentication). Decode, call the app's Google Play use case, encode.
struct GooglePlayHandlers: Sendable {
    let application: EntitleApplication

    private func play(_ context: HTTPRequestContext) throws(ServiceError) -> (GooglePlayService, String) {
        let caller = try application.caller(context)
        return (try application.services(for: caller).requireGooglePlay(), caller.app.id)
    }

    func postPurchase(_ context: HTTPRequestContext) {
        do {
            let (play, app) = try play(context)
            let body = try RequestBody(context.request)
            let (productId, purchaseToken) = (try body.requiredString("productId"), try body.requiredString("purchaseToken"))
            let appAccountToken = try body.optionalString("appAccountToken")
            let now = application.clock.now()
            context.reply(app: app) {
                .object(try await play.post(productId: productId, purchaseToken: purchaseToken, appAccountToken: appAccountToken, now: now))
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// 200 once stored (or for a duplicate, a test, an unknown purchase); 401 for a push that is
    /// not Google's; 503 when Google or the database may answer later (Pub/Sub redelivers).
    func push(_ context: HTTPRequestContext) {
        let (application, receivedAt) = (application, application.clock.now())
        context.reply(app: nil) {
            let outcome = try await application.ingestGooglePush(
                authorization: context.request.header("authorization"), body: context.request.body, receivedAt: receivedAt)
            return .object(["status": .string(outcome.rawValue)])
        }
    }

    /// `POST /v1/purchases/google/voided` `{"startTime"?}` (server key; default: 30 days ago).
    func syncVoided(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireServerKey("listing voided purchases")
            let play = try application.services(for: caller).requireGooglePlay()
            let body = context.request.body.isEmpty ? nil : try RequestBody(context.request)
            let now = application.clock.now()
            let since = try body?.optionalInstant("startTime") ?? Milliseconds.since1970(now) - 30 * 86_400_000
            context.reply(app: caller.app.id) { .object(["voidedPurchases": .object(try await play.syncVoided(since: since, now: now))]) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func selectOffer(_ context: HTTPRequestContext) {
        do {
            let (play, app) = try play(context)
            let body = try RequestBody(context.request)
            guard let items = body.object["offers"]?.arrayValue else {
                throw ServiceError.badRequest("missing field \"offers\" (an array)")
            }
            let listed = try items.map { item throws(ServiceError) -> PlayOfferSelection.ListedOffer in
                guard let offer = item.objectValue, let id = offer["offerId"]?.stringValue else {
                    throw ServiceError.badRequest("each of \"offers\" needs an \"offerId\"")
                }
                let phases = try (offer["phases"]?.arrayValue ?? []).map { value throws(ServiceError) -> PlayOfferSelection.Phase in
                    guard let phase = value.objectValue, let period = phase["billingPeriod"]?.stringValue.flatMap(ISO8601Duration.init)
                    else { throw ServiceError.badRequest("each phase needs a \"billingPeriod\" such as P1W") }
                    // Google sends the micros as a string; either form is checked against the prices Entitle accepts.
                    let micros = phase["priceAmountMicros"].map { value in
                        value.stringValue.flatMap { Int64($0) }.map(JSONValue.int) ?? value
                    }
                    guard let cycles = phase["billingCycleCount"].map({ $0.integer(in: 0...10_000) }) ?? 1,
                        let priceMicros = micros.map({ $0.integer(in: 0...Milliunits.priceRange.upperBound * 1000) }) ?? 0
                    else {
                        throw ServiceError.badRequest(
                            "a phase's \"billingCycleCount\" must be 0 (recurring) to 10000 and its \"priceAmountMicros\" 0 to \(Milliunits.priceRange.upperBound * 1000)"
                        )
                    }
                    return PlayOfferSelection.Phase(billingPeriod: period, cycles: Int(cycles), priceMicros: priceMicros)
                }
                return PlayOfferSelection.ListedOffer(
                    offerId: id, tags: offer["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [], phases: phases)
            }
            let (productId, basePlanId) = (try body.requiredString("productId"), try body.requiredString("basePlanId"))
            let (offerId, appAccountToken) = (try body.optionalString("offerId"), try body.optionalString("appAccountToken"))
            let now = application.clock.now()
            context.reply(app: app) {
                .object(
                    try await play.selectOffer(
                        productId: productId, basePlanId: basePlanId, listed: listed, offerId: offerId, appAccountToken: appAccountToken,
                        now: now))
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
