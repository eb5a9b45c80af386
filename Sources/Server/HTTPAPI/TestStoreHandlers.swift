import Application
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
    func admitted(_ context: HTTPRequestContext) throws(ServiceError) -> (TestStoreService, Caller) {
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
            let purchase = try TestStoreService.Purchase(body.object, app: app, appAccountToken: token)
            context.reply(app: app) { .object(try await testStore.purchase(purchase)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/apple/app-transactions`: what `AppTransaction.shared` gives a test
    /// customer's app.
    func appleAppTransaction(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            let body = try RequestBody(context.request)
            let app = try body.optionalString("app") ?? caller.app.id
            guard app == caller.app.id else { throw ServiceError.forbidden("the admin key is app \(caller.app.id)'s, not \(app)'s") }
            let token = try AppAccountToken.validated(try body.requiredString("appAccountToken"))
            let request = try TestStoreService.AppTransactionRequest(body.object, app: app, appAccountToken: token)
            context.reply(app: app) { .object(try await testStore.appTransaction(request)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// An action's options: its body's, the defaults without one.
    private static func actionOptions(_ request: HTTPRequest) throws(ServiceError) -> TestStoreService.ActionOptions {
        guard !request.body.isEmpty else { return TestStoreService.ActionOptions() }
        return try TestStoreService.ActionOptions(try RequestBody(request).object)
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
            let original = context.pathParameters["originalTransactionId"] ?? ""
            let options = try Self.actionOptions(context.request)
            context.reply(app: caller.app.id) {
                .object(try await testStore.act(action, originalTransactionId: original, options: options, calledBy: caller.app.id))
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/apple/transactions/{transactionId}/{action}`: a one-time purchase's
    /// `refund` or `request-refund`.
    func appleTransactionAction(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            let name = context.pathParameters["action"] ?? ""
            guard let action = TestStoreService.Action(rawValue: name), action == .refund || action == .requestRefund else {
                throw ServiceError.notFound("no action \"\(name)\" on a one-time purchase; the test store takes refund, request-refund")
            }
            let transactionId = context.pathParameters["transactionId"] ?? ""
            let options = try Self.actionOptions(context.request)
            context.reply(app: caller.app.id) {
                .object(try await testStore.actOnPurchase(action, transactionId: transactionId, options: options, calledBy: caller.app.id))
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/apple/ask-to-buy/{requestId}/{decision}`: `approve` or `decline`.
    func appleAskToBuy(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            let decision = context.pathParameters["decision"] ?? ""
            guard decision == "approve" || decision == "decline" else {
                throw ServiceError.notFound("no decision \"\(decision)\"; an Ask to Buy request takes approve or decline")
            }
            let requestId = context.pathParameters["requestId"] ?? ""
            context.reply(app: caller.app.id) { .object(try await testStore.decideAskToBuy(requestId, approve: decision == "approve")) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/scenarios`: runs a scenario; 200 when every expectation holds, else
    /// 422 `SCENARIO_FAILED` naming the step and expectation, with what was expected and found.
    func runScenario(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admitted(context)
            let body = try RequestBody(context.request)
            let runner = ScenarioRunner(testStore: testStore, services: application.services(for: caller), clock: application.clock)
            context.reply(app: caller.app.id) {
                let outcome = try await runner.run(body.object)
                guard outcome.passed else {
                    let step = outcome.json["failedStep"]?.integer(in: 0...1000) ?? 0
                    let expectation = outcome.json["expectation"]?.stringValue ?? "an expectation"
                    throw ServiceError(
                        status: 422, code: "SCENARIO_FAILED", message: "step \(step): \(expectation) does not hold", details: outcome.json)
                }
                return .object(outcome.json)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
