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
            play.post(
                productId: try body.requiredString("productId"), purchaseToken: try body.requiredString("purchaseToken"),
                appAccountToken: try body.optionalString("appAccountToken"), now: application.clock.now()
            ) { context.reply($0.map(JSONValue.object), app: app) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// 200 once stored (or for a duplicate, a test, an unknown purchase); 401 for a push that is
    /// not Google's; 503 when Google or the database may answer later (Pub/Sub redelivers).
    func push(_ context: HTTPRequestContext) {
        application.ingestGooglePush(
            authorization: context.request.header("authorization"), body: context.request.body, receivedAt: application.clock.now()
        ) { result in
            context.reply(result.map { .object(["status": .string($0.rawValue)]) }, app: nil)
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
            play.syncVoided(since: since, now: now) {
                context.reply($0.map { .object(["voidedPurchases": .object($0)]) }, app: caller.app.id)
            }
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
            play.selectOffer(
                productId: try body.requiredString("productId"), basePlanId: try body.requiredString("basePlanId"), listed: listed,
                offerId: try body.optionalString("offerId"), appAccountToken: try body.optionalString("appAccountToken"),
                now: application.clock.now()
            ) { context.reply($0.map(JSONValue.object), app: app) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
