import Crypto
package import Entitlements
package import Instants
package import JSON

/// The test store's Google Play (docs/TEST_STORE.md): it sells an app's Play subscriptions and
/// one-time products to test customers, moves them on the server's clock, and publishes each
/// step's real-time developer notification as Pub/Sub pushes it — to Entitle's own route, with
/// an OIDC token signed by the test store's Google key. Entitle then reads the purchase from the
/// Play Developer API the test store serves (`+GoogleAPI`), as it reads Google's.
extension TestStoreService {
    // MARK: - Buying

    /// `POST /v1/test-store/google/purchases`: a subscription (a base plan, maybe an offer) or a
    /// one-time product (a quantity), bought now.
    package func googlePurchase(_ request: PlayPurchaseRequest) async throws -> JSONObject {
        try await exclusively {
            let (app, settings) = try googleApp(request.app)
            _ = try await takeDueSteps(until: clock.milliseconds)
            guard let catalogId = app.products.catalogId(playProduct: request.productId, basePlanId: request.basePlanId),
                let product = app.products[catalogId]
            else {
                throw ServiceError(
                    status: 422, code: "UNKNOWN_PRODUCT",
                    message: "no product of app \(app.id)'s catalog is \(request.productId) on Google Play")
            }
            let now = clock.milliseconds
            let token = newPurchaseToken()
            let orderId = play.newOrderId()
            guard product.subscriptionGroup != nil else {
                guard request.offer == nil, request.basePlanId == nil else {
                    throw ServiceError.badRequest("a one-time product has no base plan or offer here")
                }
                let (bought, step) = try refusing { () throws(PlayStoreSimulation.Refusal) in
                    try PlayStoreSimulation.buy(
                        packageName: settings.packageName, purchaseToken: token, productId: request.productId, quantity: request.quantity,
                        price: request.price, currency: request.currency, obfuscatedAccountId: request.obfuscatedAccountId,
                        orderId: orderId,
                        now: now)
                }
                keepPlay(bought, app: app.id)
                let happened = try await sendPlay([step], app: app, deliver: request.deliver)
                return [
                    "purchaseToken": .string(token), "orderId": .string(orderId), "packageName": .string(settings.packageName),
                    "productPurchase": .object(PlayStoreSimulation.productPurchase(bought)), "happened": .array(happened),
                ]
            }
            guard let basePlanId = request.basePlanId ?? product.googlePlay?.basePlanId else {
                throw ServiceError.badRequest("a subscription needs \"basePlanId\" (the catalog names none for \(request.productId))")
            }
            guard request.quantity == 1 else { throw ServiceError.badRequest("a subscription is bought one at a time here") }
            let (subscription, step) = try refusing { () throws(PlayStoreSimulation.Refusal) in
                try PlayStoreSimulation.subscribe(
                    packageName: settings.packageName, purchaseToken: token, productId: request.productId, basePlanId: basePlanId,
                    period: Self.period(of: product), price: request.price, currency: request.currency,
                    obfuscatedAccountId: request.obfuscatedAccountId, offer: request.offer, orderId: orderId, now: now)
            }
            keepPlay(subscription, app: app.id)
            let happened = try await sendPlay([step], app: app, deliver: request.deliver)
            return [
                "purchaseToken": .string(token), "orderId": .string(orderId), "packageName": .string(settings.packageName),
                "subscriptionPurchase": .object(PlayStoreSimulation.subscriptionPurchase(subscription)), "happened": .array(happened),
            ]
        }
    }

    // MARK: - Actions

    /// `POST /v1/test-store/google/purchases/{purchaseToken}/{action}`. `calledBy`: the caller's
    /// app, when the caller is one app's key (another app's sale is not found).
    package func googleAct(
        _ action: PlayAction, purchaseToken: String, options: PlayActionOptions, calledBy caller: String? = nil
    ) async throws -> JSONObject {
        try await exclusively {
            _ = try await takeDueSteps(until: clock.milliseconds)
            if let entry = play.products[purchaseToken], caller.map({ $0 == entry.app }) ?? true {
                return try await actOnProduct(action, entry.product, app: try googleApp(entry.app).app, options: options)
            }
            guard let entry = play.subscriptions[purchaseToken], caller.map({ $0 == entry.app }) ?? true else {
                throw ServiceError.notFound("the test store's Google Play sold no purchase \(purchaseToken)")
            }
            let app = try googleApp(entry.app).app
            var subscription = entry.subscription
            let now = clock.milliseconds
            var steps: [PlayStoreSimulation.Step] = []
            var replacement: SimulatedPlaySubscription?
            switch action {
            case .cancel:
                steps = try refusing { () throws(PlayStoreSimulation.Refusal) in try PlayStoreSimulation.cancel(&subscription, now: now) }
            case .restart:
                steps = [
                    try refusing { () throws(PlayStoreSimulation.Refusal) in try PlayStoreSimulation.restart(&subscription, now: now) }
                ]
            case .failRenewal:
                try refusing { () throws(PlayStoreSimulation.Refusal) in
                    try PlayStoreSimulation.failNextRenewal(
                        &subscription, graceDays: options.gracePeriodDays ?? SimulatedPlaySubscription.defaultGraceDays)
                }
            case .recover:
                steps = [
                    try refusing { () throws(PlayStoreSimulation.Refusal) in try PlayStoreSimulation.recover(&subscription, now: now) }
                ]
            case .pause:
                let length = options.duration ?? ISO8601Duration("P1M")!
                steps = [
                    try refusing { () throws(PlayStoreSimulation.Refusal) in
                        try PlayStoreSimulation.pause(&subscription, for: length, now: now)
                    }
                ]
            case .resume:
                steps = [try refusing { () throws(PlayStoreSimulation.Refusal) in try PlayStoreSimulation.resume(&subscription, now: now) }]
            case .revoke, .refund:
                guard subscription.revokedAt == nil else {
                    throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: "the purchase is refunded already")
                }
                steps = PlayStoreSimulation.revoke(&subscription, at: now)
            case .priceStepUp:
                guard let price = options.price else { throw ServiceError.badRequest("a price step-up needs \"price\" (milliunits)") }
                steps = [
                    try refusing { () throws(PlayStoreSimulation.Refusal) in
                        try PlayStoreSimulation.announcePriceStepUp(&subscription, price: price, now: now)
                    }
                ]
            case .consentPriceStepUp:
                steps = [
                    try refusing { () throws(PlayStoreSimulation.Refusal) in
                        try PlayStoreSimulation.consentToPriceStepUp(&subscription, now: now)
                    }
                ]
            case .replace where options.replacementMode == "DEFERRED":
                let plan = try plan(for: subscription, app: app, options: options)
                let deferred = SimulatedPlaySubscription.DeferredPlan(
                    productId: plan.productId, basePlanId: plan.basePlanId, period: Self.period(of: plan.product),
                    price: options.price ?? subscription.price)
                steps = [
                    try refusing { () throws(PlayStoreSimulation.Refusal) in
                        try PlayStoreSimulation.deferReplacement(&subscription, to: deferred, now: now)
                    }
                ]
            case .replace:
                let (new, step) = try replace(&subscription, app: app, options: options, now: now)
                replacement = new
                steps = [step]
            case .requestRefund:
                guard subscription.revokedAt == nil else {
                    throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: "the purchase is refunded already")
                }
                steps = try refundRequest(
                    purchaseToken: purchaseToken, orderId: subscription.latestOrderId, account: subscription.obfuscatedAccountId,
                    app: app, options: options, now: now
                ) { at in PlayStoreSimulation.revoke(&subscription, at: at) }
            case .consume:
                throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: "only a one-time product is consumed")
            }
            keepPlay(subscription, app: app.id)
            if let replacement { keepPlay(replacement, app: app.id) }
            let happened = try await sendPlay(steps, app: app, deliver: options.deliver)
            var answer: JSONObject = [
                "subscriptionPurchase": .object(PlayStoreSimulation.subscriptionPurchase(subscription)), "happened": .array(happened),
            ]
            if let replacement {
                answer["purchaseToken"] = .string(replacement.purchaseToken)
                answer["replacedBy"] = .object(PlayStoreSimulation.subscriptionPurchase(replacement))
            }
            return answer
        }
    }

    private func actOnProduct(
        _ action: PlayAction, _ product: SimulatedPlayProduct, app: AppConfiguration, options: PlayActionOptions
    ) async throws -> JSONObject {
        var product = product
        let now = clock.milliseconds
        var steps: [PlayStoreSimulation.Step] = []
        switch action {
        case .refund, .revoke:
            steps = [
                try refusing { () throws(PlayStoreSimulation.Refusal) in
                    try PlayStoreSimulation.void(&product, quantity: options.quantity, now: now)
                }
            ]
        case .consume:
            guard !product.consumed, product.voidedAt == nil else {
                throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: "the purchase is consumed or refunded already")
            }
            product.consumed = true
        case .requestRefund:
            guard product.voidedAt == nil else {
                throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: "the purchase is refunded already")
            }
            steps = try refundRequest(
                purchaseToken: product.purchaseToken, orderId: product.orderId, account: product.obfuscatedAccountId, app: app,
                options: options, now: now
            ) { at throws(PlayStoreSimulation.Refusal) in [try PlayStoreSimulation.void(&product, quantity: nil, now: at)] }
        default:
            throw ServiceError(
                status: 409, code: "TEST_STORE_REFUSED", message: "a one-time product is refunded, consumed or has a refund requested")
        }
        keepPlay(product, app: app.id)
        let happened = try await sendPlay(steps, app: app, deliver: options.deliver)
        return ["productPurchase": .object(PlayStoreSimulation.productPurchase(product)), "happened": .array(happened)]
    }

    /// The plan a replacement names: another base plan, or another product, of the catalog.
    private func plan(
        for subscription: SimulatedPlaySubscription, app: AppConfiguration, options: PlayActionOptions
    ) throws(ServiceError) -> (productId: String, basePlanId: String, product: CatalogProduct) {
        let productId = options.productId ?? subscription.productId
        guard let basePlanId = options.basePlanId else {
            throw ServiceError.badRequest("a replacement needs \"basePlanId\" (and \"productId\" for another product)")
        }
        guard let catalogId = app.products.catalogId(playProduct: productId, basePlanId: basePlanId),
            let product = app.products[catalogId], product.subscriptionGroup != nil
        else {
            throw ServiceError(
                status: 422, code: "UNKNOWN_PRODUCT", message: "no subscription of the catalog is \(productId) on Google Play")
        }
        return (productId, basePlanId, product)
    }

    /// An upgrade or downgrade now, to another base plan or product of the catalog.
    private func replace(
        _ subscription: inout SimulatedPlaySubscription, app: AppConfiguration, options: PlayActionOptions, now: Int64
    ) throws(ServiceError) -> (SimulatedPlaySubscription, PlayStoreSimulation.Step) {
        let (productId, basePlanId, product) = try plan(for: subscription, app: app, options: options)
        let (token, orderId) = (newPurchaseToken(), play.newOrderId())
        return try refusing { () throws(PlayStoreSimulation.Refusal) in
            try PlayStoreSimulation.replace(
                &subscription, productId: productId, basePlanId: basePlanId, period: Self.period(of: product),
                price: options.price ?? subscription.price, mode: options.replacementMode ?? "WITH_TIME_PRORATION", purchaseToken: token,
                orderId: orderId, now: now)
        }
    }

    /// The customer asks Google for a refund of the latest order: Google asks the developer
    /// (`PENDING_REFUND_REVIEW`, answered through `orders.reviewrefund`), then refunds
    /// (`outcome` `REFUND`: what `refunding` does at that instant) or declines (nothing is
    /// notified for a decline).
    private func refundRequest(
        purchaseToken: String, orderId: String, account: String?, app: AppConfiguration, options: PlayActionOptions, now: Int64,
        refunding: (Int64) throws(PlayStoreSimulation.Refusal) -> [PlayStoreSimulation.Step]
    ) throws(ServiceError) -> [PlayStoreSimulation.Step] {
        let refund = options.outcome ?? "REFUND"
        guard ["REFUND", "DECLINE"].contains(refund) else { throw ServiceError.badRequest("\"outcome\" is REFUND or DECLINE") }
        let reviewToken = "pending-refund-" + Hex.encode(SecureRandom.bytes(12))
        play.refundReviews[reviewToken] = .init(app: app.id, orderId: orderId, purchaseToken: purchaseToken)
        let review = PlayStoreSimulation.refundReview(
            purchaseToken: purchaseToken, orderId: orderId, obfuscatedAccountId: account, reason: options.refundReason ?? 1,
            pendingRefundToken: reviewToken, now: now)
        guard refund == "REFUND" else { return [review] }
        return [review] + (try refusing { () throws(PlayStoreSimulation.Refusal) in try refunding(now + 1) })
    }

    // MARK: - Time passing

    /// The step due at `dueAt` of the Google purchase `id`, taken and published (none when the
    /// entry is stale or names no Google purchase).
    func takeDuePlayStep(_ id: String, dueAt: Int64) async throws -> [Happened] {
        if let entry = play.subscriptions[id], PlayStoreSimulation.nextDue(entry.subscription) == dueAt {
            if dueAt > clock.milliseconds { clock.move(to: Milliseconds.date(dueAt)) }
            var subscription = entry.subscription
            let steps = PlayStoreSimulation.advance(&subscription, to: dueAt)
            keepPlay(subscription, app: entry.app)
            return try await sendPlaySteps(steps, app: try googleApp(entry.app).app, deliver: true)
        }
        if let entry = play.products[id] {
            var product = entry.product
            guard let step = PlayStoreSimulation.acknowledgementLapse(&product, now: dueAt) else { return [] }
            if dueAt > clock.milliseconds { clock.move(to: Milliseconds.date(dueAt)) }
            keepPlay(product, app: entry.app)
            return try await sendPlaySteps([step], app: try googleApp(entry.app).app, deliver: true)
        }
        return []
    }

    // MARK: - Publishing

    private func sendPlay(_ steps: [PlayStoreSimulation.Step], app: AppConfiguration, deliver: Bool) async throws -> [JSONValue] {
        try await sendPlaySteps(steps, app: app, deliver: deliver).map { .object($0.json) }
    }

    /// Each step at its own instant: its order and voided purchase recorded, its notification
    /// pushed to Entitle's route (or not, as if Pub/Sub had failed, when `deliver` is false).
    private func sendPlaySteps(
        _ steps: [PlayStoreSimulation.Step], app: AppConfiguration, deliver shouldDeliver: Bool
    ) async throws
        -> [Happened]
    {
        guard let settings = app.googlePlay, let key = chain.google else { return [] }
        var happened: [Happened] = []
        for step in steps {
            if step.at > clock.milliseconds { clock.move(to: Milliseconds.date(step.at)) }
            if let order = step.order { play.orders[order.id] = (app.id, order, false) }
            if let voided = step.voided {
                let purchaseTime =
                    play.subscriptions[voided.purchaseToken]?.subscription.startTime ?? play.products[voided.purchaseToken]?.product
                    .purchaseTime ?? voided.at
                play.voided.append((app.id, voided, purchaseTime))
                if var order = play.orders[voided.orderId] {
                    order.refunded = true
                    play.orders[voided.orderId] = order
                }
            }
            guard shouldDeliver else {
                deliveries["notSent", default: 0] += 1
                happened.append(Happened(step, delivered: false, status: nil))
                continue
            }
            let rtdn: JSONObject = [
                "version": "1.0", "packageName": .string(settings.packageName), "eventTimeMillis": .string(String(step.at)),
                step.member: .object(step.body),
            ]
            let messageId = String(play.nextMessageNumber)
            play.nextMessageNumber += 1
            let published = JSONValue.string(Timestamps.iso(step.at))
            let push: JSONObject = [
                "message": .object([
                    "attributes": .object([:]), "data": .string(Base64.encode(JSONValue.object(rtdn).serializedBytes)),
                    "messageId": .string(messageId), "message_id": .string(messageId), "publishTime": published, "publish_time": published,
                ]),
                "subscription": .string("projects/entitle-test-store/subscriptions/\(app.id)-play-rtdn"),
            ]
            let token = try key.pushToken(
                audience: settings.pushAudience, serviceAccountEmail: settings.pushServiceAccountEmail, now: clock.milliseconds / 1000)
            let status: Int
            do {
                status = try await deliver(
                    Post(route: .googleNotifications, body: JSONValue.object(push).serializedBytes, authorization: "Bearer " + token)
                ).status
            } catch {
                deliveries["failed", default: 0] += 1
                throw error
            }
            let delivered = (200..<300).contains(status)
            deliveries[delivered ? "delivered" : "refused", default: 0] += 1
            happened.append(Happened(step, delivered: delivered, status: status))
        }
        return happened
    }

    // MARK: - What the store keeps

    /// `GET /v1/test-store/google/purchases/{purchaseToken}`: what Google holds of a purchase, as
    /// the Developer API answers it, and the refund reviews asked about it with their answers.
    package func googlePurchaseState(_ purchaseToken: String, calledBy caller: String) throws(ServiceError) -> JSONObject {
        var answer: JSONObject
        if let entry = play.subscriptions[purchaseToken], entry.app == caller {
            answer = ["subscriptionPurchase": .object(PlayStoreSimulation.subscriptionPurchase(entry.subscription))]
        } else if let entry = play.products[purchaseToken], entry.app == caller {
            answer = ["productPurchase": .object(PlayStoreSimulation.productPurchase(entry.product))]
        } else {
            throw ServiceError.notFound("the test store's Google Play sold no purchase \(purchaseToken)")
        }
        let reviews = play.refundReviews.filter { $0.value.purchaseToken == purchaseToken }.sorted { $0.key < $1.key }
        answer["refundReviews"] = .array(
            reviews.map { token, review in
                var entry: JSONObject = [
                    "pendingRefundToken": .string(token), "orderId": .string(review.orderId), "calls": .int(Int64(review.calls)),
                ]
                if let answer = review.answer { entry["answer"] = .object(answer) }
                return .object(entry)
            })
        return answer
    }

    /// A Google Play subscription the store sold, as it stands.
    package func playSubscription(_ purchaseToken: String) -> SimulatedPlaySubscription? {
        play.subscriptions[purchaseToken]?.subscription
    }

    func keepPlay(_ subscription: SimulatedPlaySubscription, app: String) {
        play.subscriptions[subscription.purchaseToken] = (app, subscription)
        if let due = PlayStoreSimulation.nextDue(subscription) { dueQueue.insert(at: due, id: subscription.purchaseToken) }
    }

    func keepPlay(_ product: SimulatedPlayProduct, app: String) {
        play.products[product.purchaseToken] = (app, product)
        if !product.acknowledged, product.voidedAt == nil {
            dueQueue.insert(
                at: product.purchaseTime + SimulatedPlaySubscription.acknowledgementDays * 86_400_000, id: product.purchaseToken)
        }
    }

    /// The app and its Google Play settings; refused when it sells nothing on Google Play, or the
    /// chain has no Google key (made before the test store sold there).
    func googleApp(_ id: String) throws(ServiceError) -> (app: AppConfiguration, settings: GooglePlaySettings) {
        let app = try self.app(id)
        guard let settings = app.googlePlay else {
            throw ServiceError(status: 409, code: "TEST_STORE_REFUSED", message: "app \(id) has no \"googlePlay\" settings")
        }
        guard chain.google != nil else {
            throw ServiceError(
                status: 409, code: "TEST_STORE_REFUSED",
                message: "the test store's chain has no google-token.key: make a new one with entitle test-store init --out DIR")
        }
        return (app, settings)
    }

    /// Google's tokens are long opaque text; these are recognisably the test store's.
    private func newPurchaseToken() -> String { "teststore." + Base64.encodeURL(SecureRandom.bytes(48)) }

    private static func period(of product: CatalogProduct) -> ISO8601Duration {
        product.period.flatMap(ISO8601Duration.init) ?? ISO8601Duration("P1M")!
    }
}
