package import Instants
package import JSON

/// What the test store's Google Play does to a purchase, step by step, as Google documents it
/// (docs/TEST_STORE.md has the table): each step is the real-time developer notification Google
/// publishes, and the order it charged, if any. Pure: the instant and new ids are given.
package enum PlayStoreSimulation {
    /// One thing that happened, as Google would notify it.
    package struct Step: Sendable {
        package var at: Int64
        package var purchaseToken: String
        /// The notification's member (`subscriptionNotification`, `oneTimeProductNotification`,
        /// `voidedPurchaseNotification`, `pendingRefundReviewNotification`) and its object.
        package var member: String
        package var body: JSONObject
        /// `SUBSCRIPTION_RENEWED`, `VOIDED_PURCHASE`, …: how answers and logs name it.
        package var name: String
        /// The order Google charged with it.
        package var order: Order?
        /// A purchase voided with it (`purchases.voidedpurchases` lists it).
        package var voided: Voided?
    }

    /// An order (`orders.get`): what the buyer paid.
    package struct Order: Sendable, Equatable {
        package var id: String
        package var purchaseToken: String
        package var productId: String
        package var total: Int64
        package var currency: String
        package var at: Int64
    }

    /// An entry of `purchases.voidedpurchases.list`: `voidedSource` 0 user, 1 developer, 2 Google;
    /// `voidedReason` 0 other … 8 an unacknowledged purchase; `voidedQuantity` for a partial
    /// refund of a one-time product.
    package struct Voided: Sendable, Equatable {
        package var purchaseToken: String
        package var orderId: String
        package var at: Int64
        package var source: Int64
        package var reason: Int64
        /// 1 a subscription, 2 a one-time product.
        package var productType: Int64
        /// 1 full, 2 quantity-based partial.
        package var refundType: Int64
        package var quantity: Int64?
    }

    package typealias Refusal = AppleStoreSimulation.Refusal

    static let day: Int64 = 86_400_000

    /// Google's `SubscriptionNotification.notificationType` codes the test store sends.
    static let subscriptionCodes: [String: Int64] = [
        "SUBSCRIPTION_RECOVERED": 1, "SUBSCRIPTION_RENEWED": 2, "SUBSCRIPTION_CANCELED": 3, "SUBSCRIPTION_PURCHASED": 4,
        "SUBSCRIPTION_ON_HOLD": 5, "SUBSCRIPTION_IN_GRACE_PERIOD": 6, "SUBSCRIPTION_RESTARTED": 7, "SUBSCRIPTION_PAUSED": 10,
        "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED": 11, "SUBSCRIPTION_REVOKED": 12, "SUBSCRIPTION_EXPIRED": 13,
        "SUBSCRIPTION_ITEMS_CHANGED": 17, "SUBSCRIPTION_PRICE_CHANGE_UPDATED": 19, "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED": 22,
    ]

    // MARK: - Buying

    /// A new subscription at `now`: `SUBSCRIPTION_PURCHASED` with its first order. A free trial
    /// is one period of the offer's own length at no charge; an introductory price prices
    /// `cycles` periods of the base plan.
    package static func subscribe(
        packageName: String, purchaseToken: String, productId: String, basePlanId: String, period: ISO8601Duration, price: Int64,
        currency: String, obfuscatedAccountId: String?, offer: SimulatedPlaySubscription.Offer?, orderId: String, now: Int64
    ) throws(Refusal) -> (SimulatedPlaySubscription, Step) {
        let phase = offer?.phase ?? "basePrice"
        let length = phase == "freeTrial" ? offer?.period ?? period : period
        guard let end = length.end(from: now) else { throw Refusal("the period does not end within the instants Entitle accepts") }
        let subscription = SimulatedPlaySubscription(
            packageName: packageName, purchaseToken: purchaseToken, productId: productId, basePlanId: basePlanId, period: period,
            price: price, currency: currency, obfuscatedAccountId: obfuscatedAccountId, startTime: now, expiryTime: end, state: .active,
            autoRenew: true, offer: offer, offerCyclesLeft: phase == "basePrice" ? 0 : max(0, (offer?.cycles ?? 1) - 1), offerPhase: phase,
            firstOrderId: orderId, renewals: 0, acknowledged: false)
        return (subscription, subscriptionStep(subscription, "SUBSCRIPTION_PURCHASED", at: now, charged: true))
    }

    /// A one-time product bought at `now`, `quantity` units: `ONE_TIME_PRODUCT_PURCHASED`.
    package static func buy(
        packageName: String, purchaseToken: String, productId: String, quantity: Int64, price: Int64, currency: String,
        obfuscatedAccountId: String?, orderId: String, now: Int64
    ) throws(Refusal) -> (SimulatedPlayProduct, Step) {
        guard (1...100).contains(quantity) else { throw Refusal("a quantity is from 1 to 100") }
        let product = SimulatedPlayProduct(
            packageName: packageName, purchaseToken: purchaseToken, productId: productId, orderId: orderId, quantity: quantity,
            refundableQuantity: quantity, price: price, currency: currency, obfuscatedAccountId: obfuscatedAccountId, purchaseTime: now,
            acknowledged: false, consumed: false)
        var step = oneTimeStep(product, type: 1, "ONE_TIME_PRODUCT_PURCHASED", at: now)
        step.order = Order(
            id: orderId, purchaseToken: purchaseToken, productId: productId, total: price.multipliedSaturating(by: quantity),
            currency: currency, at: now)
        return (product, step)
    }

    // MARK: - Time passing

    /// When the acknowledgement window of an unacknowledged purchase closes.
    static func acknowledgementDeadline(_ subscription: SimulatedPlaySubscription) -> Int64? {
        subscription.acknowledged || subscription.revokedAt != nil
            ? nil : subscription.startTime + SimulatedPlaySubscription.acknowledgementDays * day
    }

    /// When the subscription's next step falls due on its own; nil when nothing more happens.
    package static func nextDue(_ subscription: SimulatedPlaySubscription) -> Int64? {
        let own: Int64?
        switch subscription.state {
        case .active, .canceled: own = subscription.expiryTime
        case .inGracePeriod: own = subscription.graceEnds
        case .onHold: own = subscription.holdEnds
        case .paused: own = subscription.autoResumeTime
        case .expired: own = nil
        }
        guard let deadline = acknowledgementDeadline(subscription), subscription.state != .expired else { return own }
        return min(own ?? deadline, deadline)
    }

    /// The steps due at `nextDue`, applied; empty when none is due by `now`.
    package static func advance(_ subscription: inout SimulatedPlaySubscription, to now: Int64) -> [Step] {
        guard let due = nextDue(subscription), due <= now else { return [] }
        if let deadline = acknowledgementDeadline(subscription), deadline == due {
            // Not acknowledged in three days: Google refunds the purchase and ends it.
            return revoke(&subscription, at: due, source: 2, reason: 8)
        }
        switch subscription.state {
        case .canceled:
            subscription.state = .expired
            return [subscriptionStep(subscription, "SUBSCRIPTION_EXPIRED", at: due)]
        case .active where subscription.autoResumeTime != nil:
            subscription.state = .paused
            return [subscriptionStep(subscription, "SUBSCRIPTION_PAUSED", at: due)]
        case .active where subscription.priceStepUp.map { !$0.consented && $0.consentDeadline <= due } ?? false:
            // No consent to the higher price by its deadline: Google cancels at renewal.
            subscription.state = .expired
            subscription.autoRenew = false
            subscription.cancellation = .system
            subscription.cancelTime = due
            return [subscriptionStep(subscription, "SUBSCRIPTION_EXPIRED", at: due)]
        case .active where subscription.nextRenewalFails != nil:
            let graceDays = Int64(subscription.nextRenewalFails ?? 0)
            subscription.nextRenewalFails = nil
            if graceDays > 0 {
                subscription.state = .inGracePeriod
                subscription.graceEnds = due + graceDays * day
                subscription.expiryTime = due + graceDays * day
                return [subscriptionStep(subscription, "SUBSCRIPTION_IN_GRACE_PERIOD", at: due)]
            }
            subscription.state = .onHold
            subscription.holdEnds = due + SimulatedPlaySubscription.holdDays * day
            return [subscriptionStep(subscription, "SUBSCRIPTION_ON_HOLD", at: due)]
        case .active:
            renew(&subscription, from: due)
            return [subscriptionStep(subscription, "SUBSCRIPTION_RENEWED", at: due, charged: true)]
        case .inGracePeriod:
            subscription.state = .onHold
            subscription.graceEnds = nil
            subscription.holdEnds = due + SimulatedPlaySubscription.holdDays * day
            return [subscriptionStep(subscription, "SUBSCRIPTION_ON_HOLD", at: due)]
        case .onHold:
            // Account hold ran out: Google cancels the subscription for the customer.
            subscription.state = .expired
            subscription.holdEnds = nil
            subscription.autoRenew = false
            subscription.cancellation = .system
            subscription.cancelTime = due
            return [subscriptionStep(subscription, "SUBSCRIPTION_EXPIRED", at: due)]
        case .paused:
            subscription.autoResumeTime = nil
            renew(&subscription, from: due)
            return [subscriptionStep(subscription, "SUBSCRIPTION_RENEWED", at: due, charged: true)]
        case .expired:
            return []
        }
    }

    /// A new period from `start`, charged: the offer's next phase (or the base price), and a
    /// consented price step-up once its deadline has come.
    private static func renew(_ subscription: inout SimulatedPlaySubscription, from start: Int64) {
        subscription.renewals += 1
        if let plan = subscription.deferredPlan {
            subscription.replacement = .init(
                productId: subscription.productId, basePlanId: subscription.basePlanId, offerId: subscription.offer?.id, mode: "DEFERRED")
            subscription.productId = plan.productId
            subscription.basePlanId = plan.basePlanId
            subscription.period = plan.period
            subscription.price = plan.price
            subscription.offer = nil
            subscription.offerPhase = "basePrice"
            subscription.deferredPlan = nil
        }
        if subscription.offerPhase != "basePrice" {
            if subscription.offerPhase == "introductoryPrice", subscription.offerCyclesLeft > 0 {
                subscription.offerCyclesLeft -= 1
            } else {
                subscription.offerPhase = "basePrice"
            }
        }
        if let stepUp = subscription.priceStepUp, stepUp.consented, stepUp.consentDeadline <= start {
            subscription.price = stepUp.price
            subscription.priceStepUp = nil
        }
        subscription.state = .active
        subscription.expiryTime = subscription.period.end(from: start) ?? Milliseconds.range.upperBound
    }

    // MARK: - The customer's, the developer's and Google's actions

    /// The customer cancels (auto-renew off; entitled to the period's end). In grace or on hold
    /// the subscription ends at once.
    package static func cancel(_ subscription: inout SimulatedPlaySubscription, now: Int64) throws(Refusal) -> [Step] {
        guard subscription.autoRenew, subscription.state != .expired else {
            throw Refusal("the subscription does not renew: nothing to cancel")
        }
        subscription.autoRenew = false
        subscription.cancellation = .user
        subscription.cancelTime = now
        subscription.nextRenewalFails = nil
        subscription.autoResumeTime = nil
        let ends = [.inGracePeriod, .onHold, .paused].contains(subscription.state)
        subscription.state = ends ? .expired : .canceled
        if ends { subscription.expiryTime = min(subscription.expiryTime, now) }
        var steps = [subscriptionStep(subscription, "SUBSCRIPTION_CANCELED", at: now)]
        if ends { steps.append(subscriptionStep(subscription, "SUBSCRIPTION_EXPIRED", at: now)) }
        return steps
    }

    /// The customer restores a canceled subscription before it expires.
    package static func restart(_ subscription: inout SimulatedPlaySubscription, now: Int64) throws(Refusal) -> Step {
        guard subscription.state == .canceled, subscription.expiryTime > now else {
            throw Refusal("only a canceled subscription that has not expired can be restarted (buy it again otherwise)")
        }
        subscription.state = .active
        subscription.autoRenew = true
        subscription.cancellation = nil
        subscription.cancelTime = nil
        return subscriptionStep(subscription, "SUBSCRIPTION_RESTARTED", at: now)
    }

    /// The next charge fails: with `graceDays` of grace (0: account hold at once).
    package static func failNextRenewal(_ subscription: inout SimulatedPlaySubscription, graceDays: Int) throws(Refusal) {
        guard subscription.state == .active, subscription.autoRenew else {
            throw Refusal("only an active subscription that renews can fail to renew")
        }
        guard (0...30).contains(graceDays) else { throw Refusal("a grace period is from 0 to 30 days") }
        subscription.nextRenewalFails = graceDays
    }

    /// The customer fixes the payment in grace or on hold: the pending order is charged and a
    /// period starts now (Google moves the renewal date to the recovery).
    package static func recover(_ subscription: inout SimulatedPlaySubscription, now: Int64) throws(Refusal) -> Step {
        guard subscription.state == .inGracePeriod || subscription.state == .onHold else {
            throw Refusal("only a subscription in its grace period or on hold can recover")
        }
        subscription.graceEnds = nil
        subscription.holdEnds = nil
        renew(&subscription, from: now)
        return subscriptionStep(subscription, "SUBSCRIPTION_RECOVERED", at: now, charged: true)
    }

    /// The customer pauses from the period's end for `length` (Google offers a week to three months).
    package static func pause(
        _ subscription: inout SimulatedPlaySubscription, for length: ISO8601Duration, now: Int64
    ) throws(Refusal) -> Step {
        guard subscription.state == .active, subscription.autoRenew else {
            throw Refusal("only an active, renewing subscription can pause")
        }
        guard let resume = length.end(from: subscription.expiryTime), resume - subscription.expiryTime >= 7 * day,
            resume - subscription.expiryTime <= 92 * day
        else { throw Refusal("a pause lasts from a week to three months") }
        subscription.autoResumeTime = resume
        return subscriptionStep(subscription, "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", at: now)
    }

    /// The customer resumes a paused subscription early (or withdraws a scheduled pause).
    package static func resume(_ subscription: inout SimulatedPlaySubscription, now: Int64) throws(Refusal) -> Step {
        switch subscription.state {
        case .paused:
            subscription.autoResumeTime = nil
            renew(&subscription, from: now)
            return subscriptionStep(subscription, "SUBSCRIPTION_RENEWED", at: now, charged: true)
        case .active where subscription.autoResumeTime != nil:
            subscription.autoResumeTime = nil
            return subscriptionStep(subscription, "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", at: now)
        default:
            throw Refusal("only a paused subscription, or one with a pause scheduled, can resume")
        }
    }

    /// The developer (or Google) refunds the latest order and ends access at once:
    /// `SUBSCRIPTION_REVOKED`, and the purchase among the voided ones.
    package static func revoke(
        _ subscription: inout SimulatedPlaySubscription, at now: Int64, source: Int64 = 1, reason: Int64 = 0
    ) -> [Step] {
        subscription.state = .expired
        subscription.autoRenew = false
        subscription.revokedAt = now
        subscription.cancellation = source == 1 ? .developer : .system
        subscription.cancelTime = now
        subscription.expiryTime = min(subscription.expiryTime, now)
        let voided = Voided(
            purchaseToken: subscription.purchaseToken, orderId: subscription.latestOrderId, at: now, source: source, reason: reason,
            productType: 1, refundType: 1, quantity: nil)
        return [subscriptionStep(subscription, "SUBSCRIPTION_REVOKED", at: now), voidedStep(voided)]
    }

    /// Google announces a higher price: the customer must consent by the deadline (30 days on),
    /// else the subscription ends at the first renewal after it.
    package static func announcePriceStepUp(
        _ subscription: inout SimulatedPlaySubscription, price: Int64, now: Int64
    ) throws(Refusal) -> Step {
        guard subscription.state == .active, subscription.autoRenew else { throw Refusal("only an active, renewing subscription") }
        guard price > subscription.price else { throw Refusal("a price step-up raises the price (\(subscription.price) milliunits now)") }
        subscription.priceStepUp = .init(price: price, consentDeadline: now + 30 * day, consented: false)
        return subscriptionStep(subscription, "SUBSCRIPTION_PRICE_CHANGE_UPDATED", at: now)
    }

    /// The customer consents to the announced price.
    package static func consentToPriceStepUp(_ subscription: inout SimulatedPlaySubscription, now: Int64) throws(Refusal) -> Step {
        guard var stepUp = subscription.priceStepUp, !stepUp.consented, subscription.state != .expired else {
            throw Refusal("no price step-up waits for consent")
        }
        stepUp.consented = true
        subscription.priceStepUp = stepUp
        return subscriptionStep(subscription, "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED", at: now)
    }

    /// Google's immediate replacement modes; `DEFERRED` waits for the renewal (`deferReplacement`).
    package static let replacementModes: Set<String> = [
        "WITH_TIME_PRORATION", "CHARGE_PRORATED_PRICE", "CHARGE_FULL_PRICE", "WITHOUT_PRORATION",
    ]

    /// A `DEFERRED` replacement: the purchase keeps its token and names the new plan in
    /// `deferredItemReplacement` (`SUBSCRIPTION_ITEMS_CHANGED`); its next renewal charges the new
    /// plan. `productId` nil withdraws a pending one.
    package static func deferReplacement(
        _ subscription: inout SimulatedPlaySubscription, to plan: SimulatedPlaySubscription.DeferredPlan?, now: Int64
    ) throws(Refusal) -> Step {
        guard subscription.state == .active, subscription.autoRenew else { throw Refusal("only an active, renewing subscription") }
        if let plan, plan.productId == subscription.productId, plan.basePlanId == subscription.basePlanId {
            throw Refusal("that is the plan subscribed to")
        }
        subscription.deferredPlan = plan
        return subscriptionStep(subscription, "SUBSCRIPTION_ITEMS_CHANGED", at: now)
    }

    /// An upgrade or downgrade now: a new purchase token whose `linkedPurchaseToken` is the old
    /// one (which Google ends), a new period charged from now, `SUBSCRIPTION_PURCHASED` for it.
    package static func replace(
        _ old: inout SimulatedPlaySubscription, productId: String, basePlanId: String, period: ISO8601Duration, price: Int64,
        mode: String, purchaseToken: String, orderId: String, now: Int64
    ) throws(Refusal) -> (SimulatedPlaySubscription, Step) {
        guard [.active, .canceled, .inGracePeriod].contains(old.state) else {
            throw Refusal("only a subscription with access can be replaced")
        }
        guard replacementModes.contains(mode) else {
            throw Refusal(
                "replacementMode is one of \(replacementModes.sorted().joined(separator: ", ")) (the test store does not simulate DEFERRED)"
            )
        }
        guard productId != old.productId || basePlanId != old.basePlanId else { throw Refusal("that is the plan subscribed to") }
        var (new, step) = try subscribe(
            packageName: old.packageName, purchaseToken: purchaseToken, productId: productId, basePlanId: basePlanId, period: period,
            price: price, currency: old.currency, obfuscatedAccountId: old.obfuscatedAccountId, offer: nil, orderId: orderId, now: now)
        new.linkedPurchaseToken = old.purchaseToken
        new.replacement = .init(productId: old.productId, basePlanId: old.basePlanId, offerId: old.offer?.id, mode: mode)
        old.state = .expired
        old.autoRenew = false
        old.cancellation = .replacement
        old.cancelTime = now
        old.expiryTime = min(old.expiryTime, now)
        step.body = notificationBody(of: new, "SUBSCRIPTION_PURCHASED")
        return (new, step)
    }

    /// The customer asks Google for a refund: Google asks the developer
    /// (`pendingRefundReviewNotification`) about the purchase's latest order.
    package static func refundReview(
        purchaseToken: String, orderId: String, obfuscatedAccountId: String?, reason: Int64, pendingRefundToken: String, now: Int64
    ) -> Step {
        var body: JSONObject = [
            "version": "1.0", "pendingRefundToken": .string(pendingRefundToken), "orderId": .string(orderId), "refundReason": .int(reason),
        ]
        if let obfuscatedAccountId { body["obfuscatedAccountId"] = .string(obfuscatedAccountId) }
        return Step(
            at: now, purchaseToken: purchaseToken, member: "pendingRefundReviewNotification", body: body, name: "PENDING_REFUND_REVIEW",
            order: nil, voided: nil)
    }

    // MARK: - One-time products

    /// Refunds `quantity` units (all that are left when nil): a quantity-based partial refund
    /// while units remain, else a full one that voids the purchase.
    package static func void(
        _ product: inout SimulatedPlayProduct, quantity: Int64?, now: Int64, source: Int64 = 1, reason: Int64 = 0
    )
        throws(Refusal) -> Step
    {
        guard product.voidedAt == nil, product.refundableQuantity > 0 else { throw Refusal("the purchase is refunded already") }
        let units = quantity ?? product.refundableQuantity
        guard (1...product.refundableQuantity).contains(units) else {
            throw Refusal("a refund is of 1 to \(product.refundableQuantity) units (those not refunded yet)")
        }
        product.refundableQuantity -= units
        let full = product.refundableQuantity == 0 && units == product.quantity
        if product.refundableQuantity == 0 { product.voidedAt = now }
        return voidedStep(
            Voided(
                purchaseToken: product.purchaseToken, orderId: product.orderId, at: now, source: source, reason: reason, productType: 2,
                refundType: full ? 1 : 2, quantity: units))
    }

    /// A one-time product not acknowledged within three days: Google refunds it.
    package static func acknowledgementLapse(_ product: inout SimulatedPlayProduct, now: Int64) -> Step? {
        guard !product.acknowledged, product.voidedAt == nil,
            now >= product.purchaseTime + SimulatedPlaySubscription.acknowledgementDays * day
        else { return nil }
        // Not voided, so units remain: the refund of what is left cannot be refused.
        return try? void(
            &product, quantity: nil, now: product.purchaseTime + SimulatedPlaySubscription.acknowledgementDays * day, source: 2, reason: 8)
    }

    // MARK: - Notifications

    private static func subscriptionStep(
        _ subscription: SimulatedPlaySubscription, _ name: String, at: Int64, charged: Bool = false
    )
        -> Step
    {
        let order =
            charged
            ? Order(
                id: subscription.latestOrderId, purchaseToken: subscription.purchaseToken, productId: subscription.productId,
                total: subscription.currentPrice, currency: subscription.currency, at: at) : nil
        return Step(
            at: at, purchaseToken: subscription.purchaseToken, member: "subscriptionNotification",
            body: notificationBody(of: subscription, name), name: name, order: order, voided: nil)
    }

    private static func notificationBody(of subscription: SimulatedPlaySubscription, _ name: String) -> JSONObject {
        [
            "version": "1.0", "notificationType": .int(subscriptionCodes[name] ?? 0), "purchaseToken": .string(subscription.purchaseToken),
            "subscriptionId": .string(subscription.productId),
        ]
    }

    private static func oneTimeStep(_ product: SimulatedPlayProduct, type: Int64, _ name: String, at: Int64) -> Step {
        Step(
            at: at, purchaseToken: product.purchaseToken, member: "oneTimeProductNotification",
            body: [
                "version": "1.0", "notificationType": .int(type), "purchaseToken": .string(product.purchaseToken),
                "sku": .string(product.productId),
            ],
            name: name, order: nil, voided: nil)
    }

    private static func voidedStep(_ voided: Voided) -> Step {
        Step(
            at: voided.at, purchaseToken: voided.purchaseToken, member: "voidedPurchaseNotification",
            body: [
                "purchaseToken": .string(voided.purchaseToken), "orderId": .string(voided.orderId), "productType": .int(voided.productType),
                "refundType": .int(voided.refundType),
            ], name: "VOIDED_PURCHASE", order: nil, voided: voided)
    }
}
