import AppStore
import Application
import Entitlements
import HTTP
import Instants
import JSON

/// The test store's routes (docs/TEST_STORE.md; admin key): the clock and the App Store's
/// purchases and actions. Decode, await the test store, encode. A deployment without a test store
/// answers 404 `TEST_STORE_DISABLED`.
struct TestStoreHandlers: Sendable {
    let application: EntitleApplication
    let testStore: TestStoreService?

    /// The test store and the admin caller, or why not.
    private func admitted(_ context: HTTPRequestContext) throws(ServiceError) -> (TestStoreService, Caller) {
        let caller = try application.caller(context)
        try caller.requireAdminKey("the test store")
        guard let testStore else {
            throw ServiceError(
                status: 404, code: "TEST_STORE_DISABLED", message: "this deployment has no test store (\"testStore\" in the configuration)")
        }
        return (testStore, caller)
    }

    /// `GET /v1/test-store/clock`.
    func clock(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            context.reply(app: caller.app.id) { .object(await testStore.clockState()) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/clock`: `{"advance": "P1M"}`, `{"to": "<RFC 3339>"}` or `{"speed": 288}`.
    func moveClock(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            let body = try RequestBody(context.request)
            guard body.object.members.count == 1 else {
                throw ServiceError.badRequest("give one of \"advance\" (an ISO 8601 duration), \"to\" (an instant) or \"speed\"")
            }
            let now = application.clock.milliseconds
            if let text = try body.optionalString("advance") {
                guard let advance = ClockAdvance(text), let target = advance.end(from: now) else {
                    throw ServiceError.badRequest("\"advance\" must be an ISO 8601 duration such as P1M, P3D or PT13H")
                }
                context.reply(app: caller.app.id) { .object(try await testStore.move(to: target)) }
            } else if let target = try body.optionalInstant("to") {
                guard target >= now else { throw ServiceError.badRequest("the clock only moves forward: \"to\" is before now") }
                context.reply(app: caller.app.id) { .object(try await testStore.move(to: target)) }
            } else if let speed = body.object["speed"] {
                guard let value = speed.number(in: 0...100_000) else {
                    throw ServiceError.badRequest("\"speed\" must be a number from 0 (stopped) to 100000 (times real time)")
                }
                context.reply(app: caller.app.id) { .object(try await testStore.run(speed: value)) }
            } else {
                throw ServiceError.badRequest("give one of \"advance\", \"to\" or \"speed\"")
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/apple/purchases`.
    func applePurchase(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            let body = try RequestBody(context.request)
            let app = try body.optionalString("app") ?? caller.app.id
            guard app == caller.app.id else { throw ServiceError.forbidden("the admin key is app \(caller.app.id)'s, not \(app)'s") }
            let token = try AppAccountToken.validated(try body.optionalString("appAccountToken"))
            let environment = AppStoreEnvironment(rawValue: try body.optionalString("environment") ?? "Sandbox")
            guard let price = body.object["price"].map({ $0.integer(in: Milliunits.priceRange) }) ?? 9990 else {
                throw ServiceError.badRequest("\"price\" must be whole milliunits from 0 to \(Milliunits.priceRange.upperBound)")
            }
            let purchase = TestStoreService.Purchase(
                app: app, appAccountToken: token, productId: try body.requiredString("productId"), environment: environment,
                price: price, currency: try body.optionalString("currency") ?? "USD", offer: try Self.offer(body.object["offer"]),
                deliver: body.object["deliver"]?.boolValue ?? true)
            context.reply(app: app) { .object(try await testStore.purchase(purchase)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/apple/subscriptions/{originalTransactionId}/{action}`.
    func appleSubscriptionAction(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            let name = context.pathParameters["action"] ?? ""
            guard let action = TestStoreService.Action(rawValue: name) else {
                throw ServiceError.notFound(
                    "no action \"\(name)\"; the test store takes \(TestStoreService.Action.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            let body = context.request.body.isEmpty ? nil : try RequestBody(context.request)
            let original = context.pathParameters["originalTransactionId"] ?? ""
            let gracePeriod = body?.object["gracePeriod"]?.boolValue ?? false
            let deliver = body?.object["deliver"]?.boolValue ?? true
            context.reply(app: caller.app.id) {
                .object(try await testStore.act(action, originalTransactionId: original, gracePeriod: gracePeriod, deliver: deliver))
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `"offer"`: an introductory offer: `discountType` `FREE_TRIAL` or `PAY_UP_FRONT` (one
    /// `period` of its own, `P1W` say; the subscription's period when absent) or `PAY_AS_YOU_GO`
    /// (`periods` of the subscription's), `price` in milliunits, `id` its identifier.
    private static func offer(_ value: JSONValue?) throws(ServiceError) -> SimulatedAppleSubscription.Offer? {
        guard let value, value != .null else { return nil }
        guard let object = value.objectValue else { throw .badRequest("\"offer\" must be an object") }
        guard object["type"]?.stringValue == "introductory" else {
            throw ServiceError(
                status: 422, code: "OFFER_NOT_SUPPORTED",
                message: "the test store sells introductory offers so far (\"type\": \"introductory\")")
        }
        let discount = object["discountType"]?.stringValue ?? "FREE_TRIAL"
        guard ["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT"].contains(discount) else {
            throw .badRequest("\"discountType\" must be FREE_TRIAL, PAY_AS_YOU_GO or PAY_UP_FRONT")
        }
        guard let periods = object["periods"].map({ $0.integer(in: 1...120) }) ?? 1,
            let price = object["price"].map({ $0.integer(in: Milliunits.priceRange) }) ?? 0
        else { throw .badRequest("an offer's \"periods\" must be 1 to 120 and its \"price\" whole milliunits") }
        guard discount != "FREE_TRIAL" || price == 0 else { throw .badRequest("a free trial's price is 0") }
        var period: ISO8601Duration?
        if let text = object["period"]?.stringValue {
            guard discount != "PAY_AS_YOU_GO", let parsed = ISO8601Duration(text) else {
                throw .badRequest("\"period\" is an ISO 8601 duration (P1W, P1M) of a free trial or pay up front")
            }
            period = parsed
        }
        return SimulatedAppleSubscription.Offer(
            type: 1, identifier: object["id"]?.stringValue, discountType: discount, price: price,
            periods: discount == "PAY_AS_YOU_GO" ? Int(periods) : 1, period: period)
    }
}
