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
    /// Posts to one of Entitle's routes; answers the HTTP status and body.
    package typealias Delivery = @Sendable (_ post: Post) async throws -> (status: Int, body: [UInt8])

    /// Where the stores post: Apple's App Store Server Notifications and the cancel sheet's
    /// realtime request, Google's Pub/Sub pushes.
    package enum Route: String, Sendable {
        case notifications = "/v1/notifications/apple"
        case retention = "/v1/retention/apple"
        case googleNotifications = "/v1/notifications/google"
    }

    /// One post: its route, body and `Authorization` header.
    package struct Post: Sendable {
        package var route: Route
        package var body: [UInt8]
        package var authorization: String?

        /// Apple's `{"signedPayload"}`.
        static func signed(_ route: Route, _ signedPayload: String) -> Post {
            Post(route: route, body: JSONValue.object(["signedPayload": .string(signedPayload)]).serializedBytes, authorization: nil)
        }
    }

    let apps: [String: AppConfiguration]
    let chain: TestStoreChain
    let clock: MovableClock
    let newId: @Sendable () -> String
    let deliver: Delivery
    /// What the store sold, as it stands, by original transaction id (a one-time purchase's is
    /// its transaction id): set only through `keep`.
    private(set) var subscriptions: [String: (app: String, subscription: SimulatedAppleSubscription)] = [:]
    private(set) var oneTimePurchases: [String: (app: String, purchase: SimulatedApplePurchase)] = [:]
    /// Every transaction a subscription has had, as it stood when last changed (the App Store
    /// Server API's history), by original transaction id, oldest first; and when each record
    /// last changed, a number counting every change (the history's `revision`).
    private(set) var transactionLog: [String: [LoggedTransaction]] = [:]
    private(set) var purchaseRevisions: [String: Int] = [:]
    /// The original transaction of each logged subscription transaction.
    private(set) var originalOfTransaction: [String: String] = [:]
    private var changes = 0
    /// Notifications sent, by what became of them (`delivered`, `refused` by Entitle's route,
    /// `failed` to reach it, `notSent`: told not to deliver).
    var deliveries: [String: Int64] = [:]
    /// When each subscription falls due next (Apple's by original transaction id, Google's by
    /// purchase token).
    var dueQueue = DueQueue<String>()
    /// What the store's Google Play knows.
    var play: TestStorePlayState
    /// Whether the transaction history is kept (the served API's); a population, whose test
    /// store ends with its process, keeps none, so its memory stays flat.
    private let keepsHistory: Bool
    /// The notifications sent, oldest first, at most `notificationLogLimit` (Get Notification
    /// History).
    private(set) var notificationLog: [SentNotification] = []
    /// A customer's subscription in a group, by app, appAccountToken and group: Apple keeps one
    /// original transaction per customer and group, and a purchase there resubscribes it.
    private var subscriptionOfCustomer: [CustomerInGroup: String] = [:]
    /// Each app's Retention Messaging (images, messages, defaults, realtime URL, performance tests).
    var messagingCatalogs: [String: AppleMessagingCatalog] = [:]
    /// Purchases waiting for a parent's approval (Ask to Buy), by request id.
    private var askToBuyRequests: [String: Purchase] = [:]
    /// Each test customer's download, by app and appAccountToken (`SimulatedAppDownload`).
    var downloads: [String: SimulatedAppDownload] = [:]
    /// The nonces of promotional offers sold, per app: Apple takes each once.
    private var usedNonces: [String: Set<String>] = [:]
    private var nextTransactionNumber: Int64
    /// Whether a request runs, and who waits for it (an actor alone would let a second request in
    /// while the first awaits a delivery).
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(
        apps: [AppConfiguration], chain: TestStoreChain, clock: MovableClock, newId: @escaping @Sendable () -> String,
        keepsHistory: Bool = true, deliver: @escaping Delivery
    ) {
        self.keepsHistory = keepsHistory
        self.apps = Dictionary(uniqueKeysWithValues: apps.map { ($0.id, $0) })
        self.chain = chain
        self.clock = clock
        self.newId = newId
        self.deliver = deliver
        // Apple's transaction ids are decimal; these start from the clock so two runs differ.
        nextTransactionNumber = 2_000_000_000_000_000 + clock.milliseconds % 1_000_000_000_000
        play = TestStorePlayState(seed: clock.milliseconds)
    }

    // MARK: - Buying

    /// Buys a subscription or a one-time product now: answers what StoreKit gives the app (the
    /// signed transaction, and a subscription's renewal info) and what was notified.
    package func purchase(_ request: Purchase) async throws -> JSONObject {
        try await exclusively {
            guard request.askToBuy else { return try await purchaseNow(request) }
            let app = try self.app(request.app)
            guard app.products[request.productId] != nil else {
                throw ServiceError(status: 422, code: "UNKNOWN_PRODUCT", message: "\(request.productId) is not in app \(app.id)'s catalog")
            }
            let id = newId()
            askToBuyRequests[id] = request
            return ["askToBuy": .object(["requestId": .string(id), "status": "PENDING"])]
        }
    }

    /// `POST /v1/test-store/apple/ask-to-buy/{requestId}/{approve|decline}`: the parent's
    /// answer. Approved, the purchase is made now (its offer checked now), as StoreKit completes
    /// it; declined, nothing happens at the App Store and nothing is notified.
    package func decideAskToBuy(_ requestId: String, approve: Bool) async throws -> JSONObject {
        try await exclusively {
            guard var request = askToBuyRequests.removeValue(forKey: requestId) else {
                throw ServiceError.notFound("no Ask to Buy request \(requestId) is pending")
            }
            guard approve else { return ["askToBuy": .object(["requestId": .string(requestId), "status": "DECLINED"])] }
            request.askToBuy = false
            var answer = try await purchaseNow(request)
            answer["askToBuy"] = .object(["requestId": .string(requestId), "status": "APPROVED"])
            return answer
        }
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
            guard request.offer == nil else { throw ServiceError.badRequest("a one-time product takes no offer here") }
            guard request.ownership == "PURCHASED" else {
                throw ServiceError.badRequest("the test store shares subscriptions through Family Sharing, not one-time products")
            }
            // The catalog says which products are non-renewing subscriptions (a `duration`).
            let kind = product.duration != nil ? SimulatedApplePurchase.Kind.nonRenewing : request.kind
            let (purchase, step) = AppleStoreSimulation.buyOnce(
                bundleId: app.bundleId, environment: request.environment.rawValue, productId: request.productId, kind: kind,
                quantity: request.quantity, price: request.price, currency: request.currency, appAccountToken: request.appAccountToken,
                transactionId: newTransactionId(), now: clock.milliseconds)
            keep(purchase, app: app.id)
            let happened = try await send(step, app: app, deliver: request.deliver)
            return [
                "transactionId": .string(purchase.transactionId), "originalTransactionId": .string(purchase.transactionId),
                "orderId": .string(Self.orderId(of: purchase.transactionId)),
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
                appAccountToken: request.appAccountToken, offer: request.offer?.pricing, ownership: request.ownership,
                transactionId: transactionId, now: now)
        }
        keep(subscription, app: app.id)
        if let customer { subscriptionOfCustomer[customer] = subscription.originalTransactionId }
        if let nonce { usedNonces[app.id, default: []].insert(nonce) }
        let happened = try await send(step, app: app, deliver: request.deliver)
        return [
            "transactionId": .string(subscription.transactionId), "originalTransactionId": .string(subscription.originalTransactionId),
            "orderId": .string(Self.orderId(of: subscription.transactionId)),
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

    /// `POST /v1/test-store/apple/subscriptions/{originalTransactionId}/{action}`. `calledBy`:
    /// the caller's app, when the caller is one app's key (another app's sale is not found).
    package func act(
        _ action: Action, originalTransactionId: String, options: ActionOptions, calledBy caller: String? = nil
    ) async throws -> JSONObject {
        try await exclusively { try await actNow(action, originalTransactionId: originalTransactionId, options: options, caller: caller) }
    }

    private func actNow(
        _ action: Action, originalTransactionId: String, options: ActionOptions, caller: String?
    ) async throws -> JSONObject {
        _ = try await takeDueSteps(until: clock.milliseconds)
        guard let (appId, sold) = subscriptions[originalTransactionId], caller.map({ $0 == appId }) ?? true else {
            throw ServiceError.notFound("the test store sold no subscription \(originalTransactionId)")
        }
        var subscription = sold
        let app = try self.app(appId)
        if action == .openCancelSheet { return try await openCancelSheet(subscription, app: app, locale: options.locale) }
        let now = clock.milliseconds
        let plan = try plan(for: action, of: subscription, in: app, options: options)
        let newId = [.recover, .upgrade, .crossgrade].contains(action) ? newTransactionId() : ""
        var replaced: SimulatedAppleSubscription?
        let steps: [AppleStoreSimulation.Step] = try refusing { () throws(AppleStoreSimulation.Refusal) in
            switch action {
            case .cancel: return [try AppleStoreSimulation.setAutoRenew(false, &subscription, now: now)]
            case .resume: return [try AppleStoreSimulation.setAutoRenew(true, &subscription, now: now)]
            case .failRenewal:
                try AppleStoreSimulation.failNextRenewal(&subscription, gracePeriod: options.gracePeriod)
                return []
            case .recover: return [try AppleStoreSimulation.recover(&subscription, now: now, transactionId: newId)]
            case .refund: return [try AppleStoreSimulation.refund(&subscription, now: now, percentage: options.percentage)]
            case .requestRefund:
                return try AppleStoreSimulation.requestRefund(
                    &subscription, reason: options.reason, granted: options.refundGranted, now: now)
            case .upgrade, .downgrade, .crossgrade:
                guard let plan else { throw AppleStoreSimulation.Refusal("a plan change names the new \"productId\"") }
                if plan.atRenewal { return [try AppleStoreSimulation.changePlanAtRenewal(&subscription, to: plan.plan, now: now)] }
                let change = try AppleStoreSimulation.changePlanNow(&subscription, to: plan.plan, transactionId: newId, now: now)
                replaced = change.replaced
                return [change.step]
            case .priceIncrease:
                return [try AppleStoreSimulation.increasePrice(&subscription, to: options.price, consent: options.consent, now: now)]
            case .revokeFamily: return [try AppleStoreSimulation.revokeFamilySharing(&subscription, now: now)]
            case .openCancelSheet: return []
            }
        }
        if let replaced { keep(replaced, app: appId) }
        keep(subscription, app: appId)
        var answer: JSONObject = ["subscription": .object(Self.json(subscription))]
        // What StoreKit gives the app after a purchase that changes the plan: the transaction (a
        // new one for a change now) and the renewal info.
        if [.upgrade, .downgrade, .crossgrade].contains(action), let last = steps.last {
            answer["transactionId"] = last.transaction["transactionId"] ?? .null
            answer["signedTransaction"] = .string(try chain.sign(last.transaction))
            if let renewalInfo = last.renewalInfo { answer["signedRenewalInfo"] = .string(try chain.sign(renewalInfo)) }
        }
        let happened = try await send(steps, app: app, deliver: options.deliver)
        if !happened.isEmpty { answer["happened"] = .array(happened) }
        return answer
    }

    /// The new plan of a plan change, and whether it waits for the renewal: an upgrade takes
    /// effect now, a downgrade at renewal, a crossgrade now when the duration is the same (as
    /// Apple does); `atRenewal` chooses otherwise, but for a downgrade. The current product
    /// withdraws a pending change.
    private func plan(
        for action: Action, of subscription: SimulatedAppleSubscription, in app: AppConfiguration, options: ActionOptions
    ) throws(ServiceError) -> (plan: SimulatedAppleSubscription.Plan, atRenewal: Bool)? {
        guard [.upgrade, .downgrade, .crossgrade].contains(action) else { return nil }
        guard let productId = options.productId else { throw ServiceError.badRequest("a plan change names the new \"productId\"") }
        guard let product = app.products[productId], product.subscriptionGroup == subscription.subscriptionGroup else {
            throw ServiceError(
                status: 422, code: "UNKNOWN_PRODUCT",
                message: "\(productId) is not a product of the subscription's group \(subscription.subscriptionGroup)")
        }
        let period = ISO8601Duration(product.period ?? "P1M") ?? subscription.period
        let atRenewal: Bool
        switch action {
        case _ where productId == subscription.productId: atRenewal = true  // withdraws a pending change
        case .downgrade:
            guard options.atRenewal != false else { throw ServiceError.badRequest("a downgrade takes effect at renewal") }
            atRenewal = true
        case .crossgrade: atRenewal = options.atRenewal ?? (period != subscription.period)
        default: atRenewal = options.atRenewal ?? false
        }
        return (
            SimulatedAppleSubscription.Plan(productId: productId, period: period, price: options.price ?? subscription.price), atRenewal
        )
    }

    /// The customer opens the subscription's cancel sheet: Apple asks Entitle's realtime
    /// Retention Messaging route what to show (a signed `DecodedRealtimeRequestBody`); answers
    /// what Entitle answered.
    private func openCancelSheet(
        _ subscription: SimulatedAppleSubscription, app: AppConfiguration, locale: String
    ) async throws -> JSONObject {
        guard subscription.status == .active || subscription.status == .gracePeriod, subscription.autoRenew else {
            throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: "the cancel sheet is for a subscription that renews")
        }
        let request = try realtimeRequest(for: subscription, app: app, locale: locale)
        let answer = try await deliver(.signed(.retention, try chain.sign(request)))
        var retention: JSONObject = ["requestIdentifier": request["requestIdentifier"] ?? .null, "status": .int(Int64(answer.status))]
        // Entitle's answer as it came (what the sheet would show); a body that is not JSON is reported as absent.
        if let parsed = try? JSONParser.parse(answer.body) { retention["answer"] = parsed }
        return ["subscription": .object(Self.json(subscription)), "retention": .object(retention)]
    }

    /// Apple's realtime Retention Messaging request for the subscription (`DecodedRealtimeRequestBody`).
    func realtimeRequest(
        for subscription: SimulatedAppleSubscription, app: AppConfiguration, locale: String
    ) throws(ServiceError) -> JSONObject {
        guard let appAppleId = app.appAppleId else {
            throw ServiceError(
                status: 409, code: "TEST_STORE_REFUSED", message: "app \(app.id) has no appAppleId: Apple's requests name the app by it")
        }
        return [
            "originalTransactionId": .string(subscription.originalTransactionId), "appAppleId": .int(appAppleId),
            "productId": .string(subscription.productId), "userLocale": .string(locale), "requestIdentifier": .string(newId()),
            "signedDate": .int(clock.milliseconds), "environment": .string(subscription.environment),
        ]
    }

    /// `POST /v1/test-store/apple/transactions/{transactionId}/{action}`: `refund` or
    /// `request-refund` of a one-time purchase.
    package func actOnPurchase(
        _ action: Action, transactionId: String, options: ActionOptions, calledBy caller: String? = nil
    ) async throws -> JSONObject {
        try await exclusively {
            guard let (appId, bought) = oneTimePurchases[transactionId], caller.map({ $0 == appId }) ?? true else {
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
    func takeDueSteps(until target: Int64) async throws -> [Happened] {
        var happened: [Happened] = []
        while let next = dueQueue.first, next.at <= target {
            dueQueue.removeFirst()
            guard let entry = subscriptions[next.id] else {
                happened += try await takeDuePlayStep(next.id, dueAt: next.at)
                continue
            }
            // A stale entry: the subscription moved on (acted on, or taken) since it was queued.
            guard AppleStoreSimulation.nextDue(entry.subscription) == next.at else { continue }
            if next.at > clock.milliseconds { clock.move(to: Milliseconds.date(next.at)) }
            var subscription = entry.subscription
            let step = AppleStoreSimulation.advance(&subscription, to: next.at, newTransactionId: { newTransactionId() })
            keep(subscription, app: entry.app)
            if let step { happened.append(try await send(step, app: try app(entry.app), deliver: true)) }
        }
        return happened
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
            deliveries["notSent", default: 0] += 1
            logNotification(sent)
            return Happened(step, delivered: false, status: nil)
        }
        let status: Int
        do { status = try await deliver(.signed(.notifications, signed)).status } catch {
            deliveries["failed", default: 0] += 1
            logNotification(sent)
            throw error
        }
        let delivered = (200..<300).contains(status)
        deliveries[delivered ? "delivered" : "refused", default: 0] += 1
        sent.attemptResult = delivered ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        logNotification(sent)
        return Happened(step, delivered: delivered, status: status)
    }

    // MARK: - What the store keeps

    /// A subscription the store sold, as it stands.
    package func subscription(_ originalTransactionId: String) -> SimulatedAppleSubscription? {
        subscriptions[originalTransactionId]?.subscription
    }

    /// How many notifications were delivered, refused by Entitle's route, or not sent.
    package func deliveryCounts() -> JSONObject {
        JSONObject(deliveries.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.int($0.value)) })
    }

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

    /// How many notifications Get Notification History can find at least (Apple keeps 180
    /// days; the test store, in memory, the latest ten thousand).
    static let notificationLogLimit = 10_000

    /// Stores the subscription and logs its current transaction (a new one appended, a changed
    /// one, refunded say, replaced).
    private func keep(_ subscription: SimulatedAppleSubscription, app: String) {
        subscriptions[subscription.originalTransactionId] = (app, subscription)
        if let due = AppleStoreSimulation.nextDue(subscription) { dueQueue.insert(at: due, id: subscription.originalTransactionId) }
        changes += 1
        guard keepsHistory else { return }
        let logged = LoggedTransaction(revision: changes, subscription: subscription)
        var log = transactionLog[subscription.originalTransactionId] ?? []
        if log.last?.subscription.transactionId == subscription.transactionId { log[log.count - 1] = logged } else { log.append(logged) }
        transactionLog[subscription.originalTransactionId] = log
        originalOfTransaction[subscription.transactionId] = subscription.originalTransactionId
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
        guard keepsHistory else { return }
        notificationLog.append(sent)
        if notificationLog.count > Self.notificationLogLimit {
            notificationLog.removeFirst(notificationLog.count - Self.notificationLogLimit)
        }
    }

    // MARK: - Helpers

    /// Runs `body` when no other request runs, so requests never interleave across their awaits.
    func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if busy { await withCheckedContinuation { waiting.append($0) } }
        busy = true
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }

    func app(_ id: String) throws(ServiceError) -> AppConfiguration {
        guard let app = apps[id] else { throw ServiceError.notFound("no app \"\(id)\"") }
        return app
    }

    private func newTransactionId() -> String {
        nextTransactionNumber += 1
        return String(nextTransactionNumber)
    }

    /// A refusal of the simulation as the API's 409.
    func refusing<T>(_ body: () throws(AppleStoreSimulation.Refusal) -> T) throws(ServiceError) -> T {
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
            "price": .int(subscription.price), "status": .int(subscription.status.rawValue), "autoRenew": .bool(subscription.autoRenew),
            "renewals": .int(Int64(subscription.renewals)),
        ]
        if let plan = subscription.pendingPlan { object["autoRenewProductId"] = .string(plan.productId) }
        if let increase = subscription.priceIncrease {
            object["priceIncrease"] = .object(["price": .int(increase.price), "consented": .bool(increase.consented)])
        }
        if subscription.ownership != "PURCHASED" { object["inAppOwnershipType"] = .string(subscription.ownership) }
        Timestamps.set(&object, "expiresDate", subscription.expiresDate)
        Timestamps.set(&object, "gracePeriodExpiresDate", subscription.gracePeriodExpiresDate)
        if let fails = subscription.nextRenewalFails { object["nextRenewalFails"] = .object(["gracePeriod": .bool(fails)]) }
        return object
    }
}
