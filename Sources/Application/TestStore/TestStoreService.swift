package import AppStore
package import Entitlements
import Foundation
package import Instants
package import JSON

/// The test store's App Store (docs/TEST_STORE.md): it sells the apps' subscriptions to test
/// customers, moves them as time passes on the server's one clock, and sends each step's
/// App Store Server Notification, signed with the test store's chain, to Entitle's own
/// notification route over HTTP: what it makes goes through Entitle's real verifier, writer,
/// events, webhooks and figures, nothing around them.
///
/// Its own state is what Apple would know (the subscriptions it sold), kept in memory: a restart
/// starts a new test store, while what Entitle stored stays. One request at a time, across its
/// awaits (`exclusively`): a step's notification is delivered before the next step is taken.
package actor TestStoreService {
    /// Posts a signed notification to Entitle's route; answers the HTTP status.
    package typealias Delivery = @Sendable (_ signedPayload: String) async throws -> Int

    let apps: [String: AppConfiguration]
    let chain: TestStoreChain
    let clock: MovableClock
    private let newId: @Sendable () -> String
    private let deliver: Delivery
    /// What the store sold, as it stands, by original transaction id (a one-time purchase's is
    /// its transaction id): set only through `keep`.
    private(set) var subscriptions: [String: (app: String, subscription: SimulatedAppleSubscription)] = [:]
    private(set) var oneTimePurchases: [String: (app: String, purchase: SimulatedApplePurchase)] = [:]
    /// Every transaction a subscription has had, as it stood when last changed (the App Store
    /// Server API's history), by original transaction id, oldest first; and when each record
    /// last changed, a number counting every change (the history's `revision`).
    private(set) var transactionLog: [String: [LoggedTransaction]] = [:]
    private(set) var purchaseRevisions: [String: Int] = [:]
    private var changes = 0
    /// The notifications sent, oldest first, at most `notificationLogLimit` (Get Notification
    /// History).
    private(set) var notificationLog: [SentNotification] = []
    /// A customer's subscription in a group, by app, appAccountToken and group: Apple keeps one
    /// original transaction per customer and group, and a purchase there resubscribes it.
    private var subscriptionOfCustomer: [CustomerInGroup: String] = [:]
    /// The nonces of promotional offers sold, per app: Apple takes each once.
    private var usedNonces: [String: Set<String>] = [:]
    private var nextTransactionNumber: Int64
    /// Whether a request runs, and who waits for it (an actor alone would let a second request in
    /// while the first awaits a delivery).
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(
        apps: [AppConfiguration], chain: TestStoreChain, clock: MovableClock, newId: @escaping @Sendable () -> String,
        deliver: @escaping Delivery
    ) {
        self.apps = Dictionary(uniqueKeysWithValues: apps.map { ($0.id, $0) })
        self.chain = chain
        self.clock = clock
        self.newId = newId
        self.deliver = deliver
        // Apple's transaction ids are decimal; these start from the clock so two runs differ.
        nextTransactionNumber = 2_000_000_000_000_000 + clock.milliseconds % 1_000_000_000_000
    }

    /// One step taken, as answers list it.
    package struct Happened: Sendable {
        package var step: AppleStoreSimulation.Step
        package var delivered: Bool
        /// The status Entitle's notification route answered (nil when not delivered).
        package var status: Int?

        package var json: JSONObject {
            var object: JSONObject = [
                "notification": .string(step.name), "originalTransactionId": .string(step.originalTransactionId),
                "transactionId": step.transaction["transactionId"] ?? .null, "delivered": .bool(delivered),
            ]
            Timestamps.set(&object, "at", step.at)
            if let status { object["status"] = .int(Int64(status)) }
            return object
        }
    }

    // MARK: - Buying

    /// The request of `POST /v1/test-store/apple/purchases`.
    package struct Purchase: Sendable {
        package var app: String
        package var appAccountToken: String?
        package var productId: String
        package var environment: AppStoreEnvironment
        package var price: Int64
        package var currency: String
        package var offer: TestStoreOffer?
        package var deliver: Bool
        /// A one-time product's kind and quantity (the catalog does not say consumable or not).
        package var kind = SimulatedApplePurchase.Kind.nonConsumable
        package var quantity = 1

        package init(
            app: String, appAccountToken: String?, productId: String, environment: AppStoreEnvironment, price: Int64,
            currency: String, offer: TestStoreOffer?, deliver: Bool
        ) {
            self.app = app
            self.appAccountToken = appAccountToken
            self.productId = productId
            self.environment = environment
            self.price = price
            self.currency = currency
            self.offer = offer
            self.deliver = deliver
        }

        /// A purchase body (the API's and a scenario's step): `productId`, `environment`,
        /// `price`, `currency`, `offer`, `type`, `quantity`, `deliver`, each checked.
        package init(_ body: JSONObject, app: String, appAccountToken: String?) throws(ServiceError) {
            guard let productId = body["productId"]?.stringValue, !productId.isEmpty else {
                throw .badRequest("missing field \"productId\"")
            }
            guard let price = body["price"].map({ $0.integer(in: Milliunits.priceRange) }) ?? 9990 else {
                throw .badRequest("\"price\" must be whole milliunits from 0 to \(Milliunits.priceRange.upperBound)")
            }
            guard body["currency"].map({ $0.stringValue != nil }) ?? true, body["environment"].map({ $0.stringValue != nil }) ?? true
            else { throw .badRequest("\"currency\" and \"environment\" are strings") }
            self.init(
                app: app, appAccountToken: appAccountToken, productId: productId,
                environment: AppStoreEnvironment(rawValue: body["environment"]?.stringValue ?? "Sandbox"), price: price,
                currency: body["currency"]?.stringValue ?? "USD", offer: try TestStoreOffer.parse(body["offer"]),
                deliver: body["deliver"]?.boolValue ?? true)
            if let type = body["type"] {
                guard let kind = type.stringValue.flatMap(SimulatedApplePurchase.Kind.init(rawValue:)) else {
                    throw .badRequest("\"type\" of a one-time product is Consumable or Non-Consumable")
                }
                self.kind = kind
            }
            if let quantity = body["quantity"] {
                guard let count = quantity.integer(in: 1...10) else { throw .badRequest("\"quantity\" is 1 to 10") }
                self.quantity = Int(count)
            }
        }
    }

    /// Buys a subscription or a one-time product now: answers what StoreKit gives the app (the
    /// signed transaction, and a subscription's renewal info) and what was notified.
    package func purchase(_ request: Purchase) async throws -> JSONObject {
        try await exclusively { try await purchaseNow(request) }
    }

    private func purchaseNow(_ request: Purchase) async throws -> JSONObject {
        let app = try self.app(request.app)
        guard app.environments.contains(request.environment) else {
            throw ServiceError.badRequest("app \(app.id) does not enable \(request.environment.rawValue)")
        }
        guard let product = app.products[request.productId] else {
            throw ServiceError(status: 422, code: "UNKNOWN_PRODUCT", message: "\(request.productId) is not in app \(app.id)'s catalog")
        }
        _ = try await takeDueSteps(until: clock.milliseconds)
        guard let group = product.subscriptionGroup else {
            guard product.duration == nil else {
                throw ServiceError(
                    status: 422, code: "OFFER_NOT_SUPPORTED",
                    message: "\(request.productId) is a non-renewing subscription: the test store does not sell those yet")
            }
            guard request.offer == nil else { throw ServiceError.badRequest("a one-time product takes no offer here") }
            let (purchase, step) = AppleStoreSimulation.buyOnce(
                bundleId: app.bundleId, environment: request.environment.rawValue, productId: request.productId, kind: request.kind,
                quantity: request.quantity, price: request.price, currency: request.currency, appAccountToken: request.appAccountToken,
                transactionId: newTransactionId(), now: clock.milliseconds)
            keep(purchase, app: app.id)
            let happened = try await send(step, app: app, deliver: request.deliver)
            return [
                "transactionId": .string(purchase.transactionId), "originalTransactionId": .string(purchase.transactionId),
                "signedTransaction": .string(try chain.sign(step.transaction)), "happened": .array([.object(happened.json)]),
            ]
        }
        let period = ISO8601Duration(product.period ?? "P1M") ?? ISO8601Duration("P1M")!
        let now = clock.milliseconds
        let customer = request.appAccountToken.map { CustomerInGroup(app: app.id, appAccountToken: $0, group: group) }
        let existing = customer.flatMap { subscriptionOfCustomer[$0] }.flatMap { subscriptions[$0]?.subscription }
        var nonce: String?
        if let offer = request.offer {
            let check = AppStoreOfferCheck(
                app: app, productId: request.productId, appAccountToken: request.appAccountToken, now: now,
                machineNow: Milliseconds.since1970(clock.machineNow), usedNonces: usedNonces[app.id] ?? [])
            nonce = try check.check(offer, customer: knownCustomer(existing, app: app.id, appAccountToken: request.appAccountToken))
        }
        let transactionId = newTransactionId()
        let (subscription, step) = try refusing { () throws(AppleStoreSimulation.Refusal) in
            if var subscription = existing {
                let step = try AppleStoreSimulation.resubscribe(
                    &subscription, productId: request.productId, period: period, price: request.price, offer: request.offer?.pricing,
                    transactionId: transactionId, now: now)
                return (subscription, step)
            }
            return try AppleStoreSimulation.purchase(
                bundleId: app.bundleId, environment: request.environment.rawValue, productId: request.productId,
                subscriptionGroup: group, period: period, price: request.price, currency: request.currency,
                appAccountToken: request.appAccountToken, offer: request.offer?.pricing, transactionId: transactionId, now: now)
        }
        keep(subscription, app: app.id)
        if let customer { subscriptionOfCustomer[customer] = subscription.originalTransactionId }
        if let nonce { usedNonces[app.id, default: []].insert(nonce) }
        let happened = try await send(step, app: app, deliver: request.deliver)
        return [
            "transactionId": .string(subscription.transactionId), "originalTransactionId": .string(subscription.originalTransactionId),
            "signedTransaction": .string(try chain.sign(step.transaction)),
            "signedRenewalInfo": .string(try chain.sign(step.renewalInfo ?? [:])), "happened": .array([.object(happened.json)]),
        ]
    }

    /// What the App Store knows of a customer in a group, for an offer's check.
    private func knownCustomer(
        _ subscription: SimulatedAppleSubscription?, app: String, appAccountToken: String?
    ) -> AppStoreOfferCheck.Customer {
        var transactionIds: Set<String> = []
        if let subscription { transactionIds = [subscription.originalTransactionId, subscription.transactionId] }
        if let appAccountToken {
            for (id, entry) in oneTimePurchases where entry.app == app && entry.purchase.appAccountToken == appAccountToken {
                transactionIds.insert(id)
            }
        }
        return AppStoreOfferCheck.Customer(
            subscribedBefore: subscription != nil,
            subscribedNow: subscription.map { $0.status != .expired && $0.status != .revoked } ?? false,
            transactionIds: transactionIds)
    }

    // MARK: - Actions on a subscription

    package enum Action: String, Sendable, CaseIterable {
        case cancel, resume, failRenewal = "fail-renewal", recover, refund, requestRefund = "request-refund"
    }

    /// What an action's body may add: `gracePeriod` (fail-renewal), `outcome` and `reason`
    /// (request-refund), and whether its notifications are delivered.
    package struct ActionOptions: Sendable {
        package var gracePeriod = false
        package var refundGranted = true
        package var reason = "UNINTENDED_PURCHASE"
        package var deliver = true

        package init() {}

        /// From the body of an action (or a scenario's step).
        package init(_ body: JSONObject) throws(ServiceError) {
            gracePeriod = body["gracePeriod"]?.boolValue ?? false
            deliver = body["deliver"]?.boolValue ?? true
            if let outcome = body["outcome"] {
                guard let name = outcome.stringValue, ["REFUND", "REFUND_DECLINED"].contains(name) else {
                    throw .badRequest("\"outcome\" is REFUND or REFUND_DECLINED")
                }
                refundGranted = name == "REFUND"
            }
            if let reason = body["reason"] {
                guard let text = reason.stringValue else { throw .badRequest("\"reason\" must be a string") }
                self.reason = text
            }
        }
    }

    /// `POST /v1/test-store/apple/subscriptions/{originalTransactionId}/{action}`.
    package func act(_ action: Action, originalTransactionId: String, options: ActionOptions) async throws -> JSONObject {
        try await exclusively { try await actNow(action, originalTransactionId: originalTransactionId, options: options) }
    }

    private func actNow(_ action: Action, originalTransactionId: String, options: ActionOptions) async throws -> JSONObject {
        _ = try await takeDueSteps(until: clock.milliseconds)
        guard let (appId, sold) = subscriptions[originalTransactionId] else {
            throw ServiceError.notFound("the test store sold no subscription \(originalTransactionId)")
        }
        var subscription = sold
        let app = try self.app(appId)
        let now = clock.milliseconds
        let recoveryId = action == .recover ? newTransactionId() : ""
        let steps: [AppleStoreSimulation.Step] = try refusing { () throws(AppleStoreSimulation.Refusal) in
            switch action {
            case .cancel: return [try AppleStoreSimulation.setAutoRenew(false, &subscription, now: now)]
            case .resume: return [try AppleStoreSimulation.setAutoRenew(true, &subscription, now: now)]
            case .failRenewal:
                try AppleStoreSimulation.failNextRenewal(&subscription, gracePeriod: options.gracePeriod)
                return []
            case .recover: return [try AppleStoreSimulation.recover(&subscription, now: now, transactionId: recoveryId)]
            case .refund: return [try AppleStoreSimulation.refund(&subscription, now: now)]
            case .requestRefund:
                return try AppleStoreSimulation.requestRefund(
                    &subscription, reason: options.reason, granted: options.refundGranted, now: now)
            }
        }
        keep(subscription, app: appId)
        var answer: JSONObject = ["subscription": .object(Self.json(subscription))]
        let happened = try await send(steps, app: app, deliver: options.deliver)
        if !happened.isEmpty { answer["happened"] = .array(happened) }
        return answer
    }

    /// `POST /v1/test-store/apple/transactions/{transactionId}/{action}`: `refund` or
    /// `request-refund` of a one-time purchase.
    package func actOnPurchase(_ action: Action, transactionId: String, options: ActionOptions) async throws -> JSONObject {
        try await exclusively {
            guard let (appId, bought) = oneTimePurchases[transactionId] else {
                throw ServiceError.notFound("the test store sold no one-time purchase \(transactionId)")
            }
            var purchase = bought
            let now = clock.milliseconds
            let steps: [AppleStoreSimulation.Step] = try refusing { () throws(AppleStoreSimulation.Refusal) in
                switch action {
                case .refund: return [try AppleStoreSimulation.refund(&purchase, now: now)]
                case .requestRefund:
                    return try AppleStoreSimulation.requestRefund(
                        &purchase, reason: options.reason, granted: options.refundGranted, now: now)
                default: throw AppleStoreSimulation.Refusal("a one-time purchase takes refund or request-refund")
                }
            }
            keep(purchase, app: appId)
            let happened = try await send(steps, app: try self.app(appId), deliver: options.deliver)
            var answer: JSONObject = [
                "transactionId": .string(transactionId), "productId": .string(purchase.productId),
                "type": .string(purchase.kind.rawValue), "happened": .array(happened),
            ]
            Timestamps.set(&answer, "revocationDate", purchase.revocationDate)
            return answer
        }
    }

    // MARK: - The clock

    /// `GET /v1/test-store/clock`.
    package func clockState() -> JSONObject { ["now": .string(Timestamps.iso(clock.milliseconds))] }

    /// Moves the server's clock forward to `target`, taking every step that falls due on the way,
    /// in order, each at its own instant; answers the new now and what happened.
    package func move(to target: Int64) async throws -> JSONObject {
        try await exclusively {
            let happened = try await takeDueSteps(until: target)
            clock.move(to: Milliseconds.date(target))
            return ["now": .string(Timestamps.iso(clock.milliseconds)), "happened": .array(happened.map { .object($0.json) })]
        }
    }

    /// Runs the clock at `speed` times real time from now (0 stops it); what falls due as it runs
    /// is taken by `catchUp`, which the server calls every second.
    package func run(speed: Double) async throws -> JSONObject {
        try await exclusively {
            _ = try await takeDueSteps(until: clock.milliseconds)
            clock.run(speed: speed)
            return ["now": .string(Timestamps.iso(clock.milliseconds)), "speed": .double(speed)]
        }
    }

    /// Takes what fell due as the clock ran on its own; answers what happened.
    package func catchUp() async throws -> [Happened] {
        try await exclusively { try await takeDueSteps(until: clock.milliseconds) }
    }

    /// Each due step, earliest first (a subscription's steps in order, ties by id), with the
    /// clock moved to its instant before it is notified.
    private func takeDueSteps(until target: Int64) async throws -> [Happened] {
        var happened: [Happened] = []
        while true {
            let due = subscriptions.compactMap { id, entry in AppleStoreSimulation.nextDue(entry.subscription).map { (id, $0) } }
                .filter { $0.1 <= target }
                .min { ($0.1, $0.0) < ($1.1, $1.0) }
            guard let (id, at) = due, let entry = subscriptions[id] else { return happened }
            if at > clock.milliseconds { clock.move(to: Milliseconds.date(at)) }
            var subscription = entry.subscription
            let step = AppleStoreSimulation.advance(&subscription, to: at, newTransactionId: { newTransactionId() })
            keep(subscription, app: entry.app)
            if let step { happened.append(try await send(step, app: try app(entry.app), deliver: true)) }
        }
    }

    // MARK: - Notifying

    /// An action's steps, in order, each at its own instant (Apple's decision on a refund request
    /// comes after the request): what happened, as answers list it.
    private func send(_ steps: [AppleStoreSimulation.Step], app: AppConfiguration, deliver: Bool) async throws -> [JSONValue] {
        var happened: [JSONValue] = []
        for step in steps {
            if step.at > clock.milliseconds { clock.move(to: Milliseconds.date(step.at)) }
            happened.append(.object(try await send(step, app: app, deliver: deliver).json))
        }
        return happened
    }

    /// Signs the step's notification as Apple does and posts it to Entitle's route (or not, when
    /// `deliver` is false, as if Apple's delivery had failed).
    private func send(_ step: AppleStoreSimulation.Step, app: AppConfiguration, deliver shouldDeliver: Bool) async throws -> Happened {
        var data: JSONObject = [
            "bundleId": .string(app.bundleId), "environment": step.transaction["environment"] ?? .null,
            "signedTransactionInfo": .string(try chain.sign(step.transaction)),
        ]
        if let renewalInfo = step.renewalInfo { data["signedRenewalInfo"] = .string(try chain.sign(renewalInfo)) }
        if let status = step.status { data["status"] = .int(status.rawValue) }
        if let appAppleId = app.appAppleId { data["appAppleId"] = .int(appAppleId) }
        if let reason = step.consumptionRequestReason { data["consumptionRequestReason"] = .string(reason) }
        var payload: JSONObject = [
            "notificationType": .string(step.notificationType), "notificationUUID": .string(newId()), "version": "2.0",
            "signedDate": .int(step.at), "data": .object(data),
        ]
        if let subtype = step.subtype { payload["subtype"] = .string(subtype) }
        let signed = try chain.sign(payload)
        var sent = SentNotification(
            app: app.id, signedPayload: signed, signedDate: step.at, notificationType: step.notificationType, subtype: step.subtype,
            transactionIds: [step.originalTransactionId, step.transaction["transactionId"]?.stringValue ?? ""],
            attemptResult: "NO_RESPONSE")
        guard shouldDeliver else {
            logNotification(sent)
            return Happened(step: step, delivered: false, status: nil)
        }
        let status: Int
        do { status = try await deliver(signed) } catch {
            logNotification(sent)
            throw error
        }
        let delivered = (200..<300).contains(status)
        sent.attemptResult = delivered ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        logNotification(sent)
        return Happened(step: step, delivered: delivered, status: status)
    }

    // MARK: - What the store keeps

    /// A subscription transaction as it was last signed: the subscription's state then.
    struct LoggedTransaction: Sendable {
        var revision: Int
        var subscription: SimulatedAppleSubscription
    }

    /// A notification as sent, for Get Notification History.
    struct SentNotification: Sendable {
        var app: String
        var signedPayload: String
        var signedDate: Int64
        var notificationType: String
        var subtype: String?
        var transactionIds: Set<String>
        /// Apple's `sendAttemptResult`: `SUCCESS`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE` or
        /// `NO_RESPONSE` (told not to deliver).
        var attemptResult: String
    }

    /// How many notifications Get Notification History can find (Apple keeps 180 days; the
    /// test store, in memory, the latest ten thousand).
    static let notificationLogLimit = 10_000

    /// Stores the subscription and logs its current transaction (a new one appended, a changed
    /// one, refunded say, replaced).
    private func keep(_ subscription: SimulatedAppleSubscription, app: String) {
        subscriptions[subscription.originalTransactionId] = (app, subscription)
        changes += 1
        let logged = LoggedTransaction(revision: changes, subscription: subscription)
        var log = transactionLog[subscription.originalTransactionId] ?? []
        if log.last?.subscription.transactionId == subscription.transactionId { log[log.count - 1] = logged } else { log.append(logged) }
        transactionLog[subscription.originalTransactionId] = log
    }

    /// The subscription with a new appAccountToken (Set App Account Token): kept, and found
    /// under its customer from now on.
    func relink(_ subscription: SimulatedAppleSubscription, app: String) {
        keep(subscription, app: app)
        if let token = subscription.appAccountToken {
            subscriptionOfCustomer[CustomerInGroup(app: app, appAccountToken: token, group: subscription.subscriptionGroup)] =
                subscription.originalTransactionId
        }
    }

    func relink(_ purchase: SimulatedApplePurchase, app: String) { keep(purchase, app: app) }

    private func keep(_ purchase: SimulatedApplePurchase, app: String) {
        oneTimePurchases[purchase.transactionId] = (app, purchase)
        changes += 1
        purchaseRevisions[purchase.transactionId] = changes
    }

    private func logNotification(_ sent: SentNotification) {
        notificationLog.append(sent)
        if notificationLog.count > Self.notificationLogLimit {
            notificationLog.removeFirst(notificationLog.count - Self.notificationLogLimit)
        }
    }

    // MARK: - Helpers

    /// Runs `body` when no other request runs, so requests never interleave across their awaits.
    private func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if busy { await withCheckedContinuation { waiting.append($0) } }
        busy = true
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }

    private func app(_ id: String) throws(ServiceError) -> AppConfiguration {
        guard let app = apps[id] else { throw ServiceError.notFound("no app \"\(id)\"") }
        return app
    }

    private func newTransactionId() -> String {
        nextTransactionNumber += 1
        return String(nextTransactionNumber)
    }

    /// A refusal of the simulation as the API's 409.
    private func refusing<T>(_ body: () throws(AppleStoreSimulation.Refusal) -> T) throws(ServiceError) -> T {
        do { return try body() } catch {
            throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: error.description)
        }
    }

    /// One customer's place in a subscription group.
    private struct CustomerInGroup: Hashable {
        var app: String
        var appAccountToken: String
        var group: String
    }

    /// A subscription as the test store's answers show it.
    static func json(_ subscription: SimulatedAppleSubscription) -> JSONObject {
        var object: JSONObject = [
            "originalTransactionId": .string(subscription.originalTransactionId), "transactionId": .string(subscription.transactionId),
            "productId": .string(subscription.productId), "environment": .string(subscription.environment),
            "status": .int(subscription.status.rawValue), "autoRenew": .bool(subscription.autoRenew),
            "renewals": .int(Int64(subscription.renewals)),
        ]
        Timestamps.set(&object, "expiresDate", subscription.expiresDate)
        Timestamps.set(&object, "gracePeriodExpiresDate", subscription.gracePeriodExpiresDate)
        if let fails = subscription.nextRenewalFails { object["nextRenewalFails"] = .object(["gracePeriod": .bool(fails)]) }
        return object
    }
}
