import AppStore
import Entitlements
import Foundation
package import Instants
package import JSON

/// Runs a test-store scenario (docs/TEST_STORE.md, "Scenarios"): steps that buy, act and move the
/// clock, and expectations checked against what Entitle then says — the customer's entitlement,
/// the notifications sent and events written since the last check, the figures, the webhooks.
/// Stops at the first expectation that fails, naming its step and why.
package struct ScenarioRunner: Sendable {
    let testStore: TestStoreService
    let services: AppServices
    let clock: any WallClock

    package init(testStore: TestStoreService, services: AppServices, clock: any WallClock) {
        self.testStore = testStore
        self.services = services
        self.clock = clock
    }

    /// What a run found: passed, or the step and expectation that failed.
    package struct Outcome: Sendable {
        package var passed: Bool
        package var json: JSONObject
    }

    package func run(_ scenario: JSONObject) async throws -> Outcome {
        guard let steps = scenario["steps"]?.arrayValue, !steps.isEmpty, steps.count <= 1000 else {
            throw ServiceError.badRequest("a scenario is {\"customer\"?, \"steps\": [1 to 1000 steps]} (docs/TEST_STORE.md)")
        }
        let customer = try AppAccountToken.validated(scenario["customer"]?.stringValue ?? services.events.eventWriter.composer.newId())
        let environment = AppStoreEnvironment(rawValue: scenario["environment"]?.stringValue ?? "Sandbox")
        guard let store = Store(rawValue: scenario["store"]?.stringValue ?? Store.appStore.rawValue) else {
            throw ServiceError.badRequest("\"store\" is appStore (the default) or googlePlay")
        }
        var state = State(customer: customer, environment: environment, store: store)
        state.eventCursor = try await lastEventSequence()
        for (index, value) in steps.enumerated() {
            guard let step = value.objectValue else { throw ServiceError.badRequest("steps[\(index)] must be an object") }
            if let failure = try await take(step, at: index, state: &state) {
                var answer: JSONObject = ["passed": false, "failedStep": .int(Int64(index)), "step": .object(step)]
                for (key, value) in failure.members { answer[key] = value }
                return Outcome(passed: false, json: answer)
            }
        }
        return Outcome(
            passed: true,
            json: [
                "passed": true, "steps": .int(Int64(steps.count)), "customer": .string(customer),
                "notifications": .array(state.allNotifications.map(JSONValue.string)),
            ])
    }

    /// Where the scenario's customer buys: the test store's App Store or its Google Play.
    enum Store: String {
        case appStore, googlePlay
    }

    private struct State {
        let customer: String
        let environment: AppStoreEnvironment
        let store: Store
        /// The subscription the scenario bought last (its actions' target: an original transaction
        /// id, or on Google Play a purchase token), and all it bought.
        var originalTransactionId: String?
        var bought: Set<String> = []
        /// The scenario's own notifications sent since the last expectation, and all of them (the
        /// clock also moves other customers' subscriptions of the deployment: not counted here).
        var notifications: [String] = []
        var allNotifications: [String] = []
        var eventCursor: Int64 = 0

        mutating func record(_ answer: JSONObject) {
            let names = (answer["happened"]?.arrayValue ?? []).filter { step in
                (step["originalTransactionId"] ?? step["purchaseToken"])?.stringValue.map(bought.contains) ?? false
            }.compactMap { $0["notification"]?.stringValue }
            notifications += names
            allNotifications += names
        }
    }

    /// One step; a failure (what was expected, what was found) when it is an expectation that fails.
    private func take(_ step: JSONObject, at index: Int, state: inout State) async throws -> JSONObject? {
        let kinds = ["purchase", "action", "advance", "to", "expect"].filter { step[$0] != nil }
        guard kinds.count == 1 else {
            throw ServiceError.badRequest("steps[\(index)] needs exactly one of purchase, action, advance, to, expect")
        }
        switch kinds[0] {
        case "purchase" where state.store == .googlePlay:
            var body = step["purchase"]?.objectValue ?? [:]
            body["app"] = .string(services.app.id)
            body["obfuscatedAccountId"] = .string(state.customer)
            let purchase: TestStoreService.PlayPurchaseRequest
            do { purchase = try TestStoreService.PlayPurchaseRequest(body) } catch {
                throw ServiceError.badRequest("steps[\(index)].purchase: \(error.message)")
            }
            let answer = try await testStore.googlePurchase(purchase)
            state.originalTransactionId = answer["purchaseToken"]?.stringValue
            if let token = state.originalTransactionId { state.bought.insert(token) }
            state.record(answer)
        case "action" where state.store == .googlePlay:
            guard let name = step["action"]?.stringValue, let action = TestStoreService.PlayAction(rawValue: name) else {
                throw ServiceError.badRequest(
                    "steps[\(index)].action is one of \(TestStoreService.PlayAction.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard let token = state.originalTransactionId else {
                throw ServiceError.badRequest("steps[\(index)]: an action needs a purchase before it")
            }
            do {
                let answer = try await testStore.googleAct(
                    action, purchaseToken: token, options: try TestStoreService.PlayActionOptions(step))
                // A replacement is a new purchase token: the scenario's actions follow it.
                if let replacement = answer["purchaseToken"]?.stringValue {
                    state.originalTransactionId = replacement
                    state.bought.insert(replacement)
                }
                state.record(answer)
            } catch let refused as ServiceError where refused.code == "TEST_STORE_REFUSED" {
                return ["expectation": "the action is taken", "reason": .string(refused.message)]
            }
        case "purchase":
            var purchase: TestStoreService.Purchase
            do {
                purchase = try TestStoreService.Purchase(
                    step["purchase"]?.objectValue ?? [:], app: services.app.id, appAccountToken: state.customer)
            } catch { throw ServiceError.badRequest("steps[\(index)].purchase: \(error.message)") }
            purchase.environment = state.environment
            let answer = try await testStore.purchase(purchase)
            state.originalTransactionId = answer["originalTransactionId"]?.stringValue
            if let original = state.originalTransactionId { state.bought.insert(original) }
            state.record(answer)
        case "action":
            guard let name = step["action"]?.stringValue, let action = TestStoreService.Action(rawValue: name) else {
                throw ServiceError.badRequest(
                    "steps[\(index)].action is one of \(TestStoreService.Action.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard let original = state.originalTransactionId else {
                throw ServiceError.badRequest("steps[\(index)]: an action needs a purchase before it")
            }
            do {
                state.record(
                    try await testStore.act(action, originalTransactionId: original, options: try TestStoreService.ActionOptions(step)))
            } catch let refused as ServiceError where refused.code == "TEST_STORE_REFUSED" {
                return ["expectation": "the action is taken", "reason": .string(refused.message)]
            }
        case "advance", "to":
            let now = clock.milliseconds
            let target: Int64?
            if let text = step["advance"]?.stringValue {
                target = ClockAdvance(text)?.end(from: now)
            } else {
                target = step["to"].flatMap(Milliseconds.instant).flatMap { $0 >= now ? $0 : nil }
            }
            guard let target else {
                throw ServiceError.badRequest("steps[\(index)]: advance by an ISO 8601 duration (P1M, PT13H) or to a later instant")
            }
            state.record(try await testStore.move(to: target))
        default:
            guard let expectations = step["expect"]?.objectValue else {
                throw ServiceError.badRequest("steps[\(index)].expect must be an object")
            }
            let failure = try await check(expectations, state: state)
            state.notifications = []
            state.eventCursor = try await lastEventSequence()
            return failure
        }
        return nil
    }

    // MARK: - Expectations

    /// The first expectation that does not hold, with what was expected and found; nil when all hold.
    private func check(_ expectations: JSONObject, state: State) async throws -> JSONObject? {
        func failed(_ what: String, _ expected: JSONValue, _ actual: JSONValue) -> JSONObject {
            ["expectation": .string(what), "expected": expected, "actual": actual]
        }
        if let expected = expectations["notifications"] {
            let actual = JSONValue.array(state.notifications.map(JSONValue.string))
            if actual != expected { return failed("the notifications sent since the last expect", expected, actual) }
        }
        if let expected = expectations["events"] {
            let actual = JSONValue.array(try await eventTypes(of: state.customer, after: state.eventCursor).map(JSONValue.string))
            if actual != expected { return failed("the events written since the last expect", expected, actual) }
        }
        if let entitlement = expectations["entitlement"]?.stringValue {
            let subscriber = try await services.pool.perform { [services, clock] in
                try services.subscribers.subscriber(appAccountToken: state.customer, environment: state.environment, at: clock.now())
            }
            let found = JSONValue.object(subscriber ?? [:])["entitlements"]?[entitlement] ?? .null
            for key in ["isActive", "state", "periodType", "willRenew", "productId"] {
                guard let expected = expectations[key] else { continue }
                let actual = found[key] ?? .null
                if actual != expected { return failed("entitlement \(entitlement) \(key)", expected, actual) }
            }
        }
        if let expected = expectations["activeSubscriptions"] {
            let summary = try await figures(state.environment)
            let actual = summary["activeSubscriptions"] ?? .null
            if actual != expected { return failed("activeSubscriptions", expected, actual) }
        }
        if expectations["webhooksDelivered"] == true, let pending = try await pendingDeliveries() {
            return failed("every webhook delivered", .int(0), .int(Int64(pending)))
        }
        return nil
    }

    private func lastEventSequence() async throws -> Int64 {
        var cursor: Int64 = 0
        while true {
            let after = cursor
            let page = try await services.pool.perform { [services] in
                try services.events.store.events(appId: services.app.id, after: after, limit: 1000)
            }
            guard let last = page.last else { return cursor }
            cursor = last.sequence
        }
    }

    /// The customer's events written after `cursor`, in order.
    private func eventTypes(of customer: String, after cursor: Int64) async throws -> [String] {
        let events = try await services.pool.perform { [services] in
            try services.events.store.events(appId: services.app.id, after: cursor, limit: 1000)
        }
        return events.filter { $0.appAccountToken == customer }.map(\.type)
    }

    private func figures(_ environment: AppStoreEnvironment) async throws -> JSONObject {
        let now = clock.milliseconds
        let metrics = services.metrics
        let summary = try await withCheckedThrowingContinuation { continuation in
            metrics.summary(at: now, filter: .init(environment: environment.rawValue), now: now) { continuation.resume(with: $0) }
        }
        return JSONValue.object(summary)["summary"]?.objectValue ?? summary
    }

    /// Deliveries still pending after waiting up to ten seconds for them; nil when none are.
    private func pendingDeliveries() async throws -> Int? {
        for _ in 0..<200 {
            let pending = try await services.pool.perform { [services] in
                try services.events.store.deliveries(appId: services.app.id, status: .pending, limit: 1000).count
            }
            if pending == 0 { return nil }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        return try await services.pool.perform { [services] in
            try services.events.store.deliveries(appId: services.app.id, status: .pending, limit: 1000).count
        }
    }
}
