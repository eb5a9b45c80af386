import Foundation
package import Instants
package import JSON

/// What the test store's App Store does to a subscription, step by step, as Apple documents it
/// (docs/TEST_STORE.md has the table): each step is the notification Apple sends, with the
/// transaction (when one is made) and the renewal info it signs. Pure: the instant is given, and
/// so are new transaction ids.
package enum AppleStoreSimulation {
    /// One thing that happened, as Apple would notify it.
    package struct Step: Sendable {
        package var at: Int64
        package var originalTransactionId: String
        package var notificationType: String
        package var subtype: String?
        /// The transaction Apple signs with it (the new one, or the current one).
        package var transaction: JSONObject
        /// A subscription's renewal info and status (a one-time purchase has neither).
        package var renewalInfo: JSONObject?
        package var status: SimulatedAppleSubscription.Status?
        /// A `CONSUMPTION_REQUEST`'s reason (its data's `consumptionRequestReason`).
        package var consumptionRequestReason: String?

        /// How the step reads in answers and logs: `DID_RENEW` or `DID_FAIL_TO_RENEW/GRACE_PERIOD`.
        package var name: String { subtype.map { "\(notificationType)/\($0)" } ?? notificationType }
    }

    /// Why an action cannot be taken now (the answer's 409 says it).
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    private static let day: Int64 = 86_400_000

    // MARK: - Buying

    /// A first purchase at `now` (by the customer, or shared with them through Family Sharing:
    /// `ownership` `FAMILY_SHARED`): the subscription and its `SUBSCRIBED/INITIAL_BUY`. An
    /// introductory offer prices the first period(s): a free trial or pay up front is one period of
    /// the offer's own length, pay as you go its number of the subscription's periods.
    package static func purchase(
        bundleId: String, environment: String, productId: String, subscriptionGroup: String, period: ISO8601Duration, price: Int64,
        currency: String, appAccountToken: String?, offer: SimulatedAppleSubscription.Offer?, ownership: String = "PURCHASED",
        transactionId: String, now: Int64
    ) throws(Refusal) -> (SimulatedAppleSubscription, Step) {
        guard let end = (offer?.period ?? period).end(from: now) else {
            throw Refusal("the period does not end within the instants Entitle accepts")
        }
        var subscription = SimulatedAppleSubscription(
            bundleId: bundleId, environment: environment, originalTransactionId: transactionId, appAccountToken: appAccountToken,
            productId: productId, subscriptionGroup: subscriptionGroup, period: period, price: price, currency: currency,
            originalPurchaseDate: now, transactionId: transactionId, periodStart: now, expiresDate: end, status: .active,
            autoRenew: true, offer: offer, nextRenewalFails: nil, gracePeriodExpiresDate: nil, billingRetryEndsAt: nil,
            expirationIntent: nil, revocationDate: nil, renewals: 0, transactionReason: "PURCHASE",
            recentStart: now)
        subscription.ownership = ownership
        return (subscription, step(subscription, "SUBSCRIBED", "INITIAL_BUY", at: now))
    }

    /// The customer buys again in a group whose subscription ended (expired, or refunded): the
    /// same original transaction goes on with a new one, `SUBSCRIBED/RESUBSCRIBE`.
    package static func resubscribe(
        _ subscription: inout SimulatedAppleSubscription, productId: String, period: ISO8601Duration, price: Int64,
        offer: SimulatedAppleSubscription.Offer?, transactionId: String, now: Int64
    ) throws(Refusal) -> Step {
        guard subscription.status == .expired || subscription.status == .revoked else {
            throw Refusal("the customer is subscribed in this group already: upgrade, downgrade or crossgrade instead")
        }
        let plan = SimulatedAppleSubscription.Plan(productId: productId, period: period, price: price)
        try startPeriod(&subscription, of: plan, offer: offer, transactionId: transactionId, now: now)
        subscription.revocationDate = nil
        subscription.revocationType = nil
        subscription.revocationPercentage = nil
        subscription.gracePeriodExpiresDate = nil
        subscription.billingRetryEndsAt = nil
        subscription.recentStart = now
        return step(subscription, "SUBSCRIBED", "RESUBSCRIBE", at: now)
    }

    /// A new transaction of `plan` bought now (a resubscription, an upgrade): its first period
    /// starts, renewing, with nothing pending from the plan before.
    static func startPeriod(
        _ subscription: inout SimulatedAppleSubscription, of plan: SimulatedAppleSubscription.Plan,
        offer: SimulatedAppleSubscription.Offer?, transactionId: String, now: Int64
    ) throws(Refusal) {
        guard let end = (offer?.period ?? plan.period).end(from: now) else {
            throw Refusal("the period does not end within the instants Entitle accepts")
        }
        subscription.productId = plan.productId
        subscription.period = plan.period
        subscription.price = plan.price
        subscription.offer = offer
        subscription.transactionId = transactionId
        subscription.transactionReason = "PURCHASE"
        subscription.periodStart = now
        subscription.expiresDate = end
        subscription.status = .active
        subscription.autoRenew = true
        subscription.expirationIntent = nil
        subscription.nextRenewalFails = nil
        subscription.pendingPlan = nil
        subscription.priceIncrease = nil
    }

    // MARK: - Time passing

    /// When the subscription's next step falls due on its own (a renewal, a failed renewal, the
    /// end of its grace period or of billing retry, an expiry); nil when nothing more happens.
    package static func nextDue(_ subscription: SimulatedAppleSubscription) -> Int64? {
        switch subscription.status {
        case .active: return subscription.expiresDate
        case .gracePeriod: return subscription.gracePeriodExpiresDate
        case .billingRetry: return subscription.billingRetryEndsAt
        case .expired, .revoked: return nil
        }
    }

    /// The step due at `nextDue`, applied; nil when none is due by `now`.
    package static func advance(
        _ subscription: inout SimulatedAppleSubscription, to now: Int64, newTransactionId: () -> String
    ) -> Step? {
        guard let due = nextDue(subscription), due <= now else { return nil }
        switch subscription.status {
        case .active where !subscription.autoRenew:
            subscription.status = .expired
            subscription.expirationIntent = 1
            return step(subscription, "EXPIRED", "VOLUNTARY", at: due)
        case .active where subscription.priceIncrease?.consented == false:
            // The customer never agreed to the new price: the subscription ends at renewal.
            subscription.status = .expired
            subscription.autoRenew = false
            subscription.expirationIntent = 3
            return step(subscription, "EXPIRED", "PRICE_INCREASE", at: due)
        case .active where subscription.nextRenewalFails != nil:
            let grace = subscription.nextRenewalFails == true
            subscription.nextRenewalFails = nil
            subscription.expirationIntent = 2
            subscription.billingRetryEndsAt = due + SimulatedAppleSubscription.billingRetryDays * day
            if grace {
                subscription.status = .gracePeriod
                subscription.gracePeriodExpiresDate = due + subscription.gracePeriodDays * day
                return step(subscription, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: due)
            }
            subscription.status = .billingRetry
            return step(subscription, "DID_FAIL_TO_RENEW", nil, at: due)
        case .active:
            renew(&subscription, from: due, transactionId: newTransactionId())
            return step(subscription, "DID_RENEW", nil, at: due)
        case .gracePeriod:
            // The grace period ends without a renewal; Apple goes on retrying.
            subscription.status = .billingRetry
            subscription.gracePeriodExpiresDate = nil
            return step(subscription, "GRACE_PERIOD_EXPIRED", nil, at: due)
        case .billingRetry:
            subscription.status = .expired
            subscription.billingRetryEndsAt = nil
            return step(subscription, "EXPIRED", "BILLING_RETRY", at: due)
        case .expired, .revoked:
            return nil
        }
    }

    // MARK: - The customer's and Apple's actions

    /// The customer turns auto-renew off (`cancel`) or on again (`resume`).
    package static func setAutoRenew(_ on: Bool, _ subscription: inout SimulatedAppleSubscription, now: Int64) throws(Refusal) -> Step {
        guard [.active, .gracePeriod, .billingRetry].contains(subscription.status) else {
            throw Refusal("the subscription has \(subscription.status == .revoked ? "been revoked" : "expired"): buy it again")
        }
        guard subscription.autoRenew != on else { throw Refusal("auto-renew is already \(on ? "on" : "off")") }
        subscription.autoRenew = on
        subscription.expirationIntent = on ? nil : 1
        return step(subscription, "DID_CHANGE_RENEWAL_STATUS", on ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED", at: now)
    }

    /// The next renewal's charge will fail (with Apple's grace period when `gracePeriod`).
    package static func failNextRenewal(_ subscription: inout SimulatedAppleSubscription, gracePeriod: Bool) throws(Refusal) {
        guard subscription.status == .active, subscription.autoRenew else {
            throw Refusal("only an active subscription that renews can fail to renew")
        }
        subscription.nextRenewalFails = gracePeriod
    }

    /// Billing succeeds again while Apple retries: a new period starts now (or, in the grace
    /// period, where the failed one would have), `DID_RENEW/BILLING_RECOVERY`.
    package static func recover(_ subscription: inout SimulatedAppleSubscription, now: Int64, transactionId: String) throws(Refusal) -> Step
    {
        guard subscription.status == .gracePeriod || subscription.status == .billingRetry else {
            throw Refusal("only a subscription in billing retry or its grace period can recover")
        }
        let start = subscription.status == .gracePeriod ? subscription.expiresDate : now
        subscription.gracePeriodExpiresDate = nil
        subscription.billingRetryEndsAt = nil
        subscription.expirationIntent = nil
        renew(&subscription, from: start, transactionId: transactionId)
        return step(subscription, "DID_RENEW", "BILLING_RECOVERY", at: now)
    }

    /// The customer asks Apple for a refund of the current transaction: `CONSUMPTION_REQUEST`
    /// (Apple asks the developer for consumption information, within 12 hours), then Apple's
    /// decision a second later: `REFUND` (as `refund`) or `REFUND_DECLINED` (nothing changes).
    /// The decision is signed later than the request, as Apple's is, so the refunded transaction
    /// is the newer one.
    package static let consumptionRequestReasons: Set<String> = [
        "UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
    ]

    package static func requestRefund(
        _ subscription: inout SimulatedAppleSubscription, reason: String, granted: Bool, now: Int64
    ) throws(Refusal) -> [Step] {
        try checkRefundRequest(revoked: subscription.revocationDate != nil, reason: reason)
        var request = step(subscription, "CONSUMPTION_REQUEST", nil, at: now)
        request.consumptionRequestReason = reason
        let decided = now + 1000
        guard granted else { return [request, step(subscription, "REFUND_DECLINED", nil, at: decided)] }
        return [request, try refund(&subscription, now: decided)]
    }

    /// What Apple refuses of a refund request: one for a refunded transaction, or a reason it
    /// does not know.
    static func checkRefundRequest(revoked: Bool, reason: String) throws(Refusal) {
        guard !revoked else { throw Refusal("the transaction is refunded already") }
        guard consumptionRequestReasons.contains(reason) else {
            throw Refusal("the reason is one of \(consumptionRequestReasons.sorted().joined(separator: ", "))")
        }
    }

    /// Apple refunds the current period's transaction, in full or (`percentage`, in milliunits of
    /// a percent) in part: `REFUND`, the transaction revoked, no more renewals.
    package static func refund(
        _ subscription: inout SimulatedAppleSubscription, now: Int64, percentage: Int64? = nil
    ) throws(Refusal) -> Step {
        guard subscription.revocationDate == nil else { throw Refusal("the transaction is refunded already") }
        subscription.revocationDate = now
        subscription.revocationType = percentage == nil ? "REFUND_FULL" : "REFUND_PRORATED"
        subscription.revocationPercentage = percentage
        subscription.status = .revoked
        subscription.autoRenew = false
        subscription.nextRenewalFails = nil
        return step(subscription, "REFUND", nil, at: now)
    }

    // MARK: - What Apple signs

    private static func renew(_ subscription: inout SimulatedAppleSubscription, from start: Int64, transactionId: String) {
        if let plan = subscription.pendingPlan {
            subscription.productId = plan.productId
            subscription.period = plan.period
            subscription.price = plan.price
            subscription.pendingPlan = nil
        }
        if let increase = subscription.priceIncrease, increase.consented {
            subscription.price = increase.price
            subscription.priceIncrease = nil
        }
        subscription.transactionId = transactionId
        subscription.periodStart = start
        subscription.expiresDate = subscription.period.end(from: start) ?? start
        subscription.status = .active
        subscription.transactionReason = "RENEWAL"
        subscription.renewals += 1
        if var offer = subscription.offer, offer.periods > 1 {
            offer.periods -= 1
            subscription.offer = offer
        } else {
            subscription.offer = nil
        }
    }

    static func step(
        _ subscription: SimulatedAppleSubscription, _ type: String, _ subtype: String?, at: Int64
    ) -> Step {
        Step(
            at: at, originalTransactionId: subscription.originalTransactionId, notificationType: type, subtype: subtype,
            transaction: transaction(subscription, signedAt: at), renewalInfo: renewalInfo(subscription, signedAt: at),
            status: subscription.status)
    }

    /// The current period's transaction (JWSTransactionDecodedPayload's fields).
    package static func transaction(_ subscription: SimulatedAppleSubscription, signedAt: Int64) -> JSONObject {
        var payload: JSONObject = [
            "transactionId": .string(subscription.transactionId), "originalTransactionId": .string(subscription.originalTransactionId),
            "webOrderLineItemId": .string(subscription.transactionId + "0"), "bundleId": .string(subscription.bundleId),
            "productId": .string(subscription.productId), "subscriptionGroupIdentifier": .string(subscription.subscriptionGroup),
            "purchaseDate": .int(subscription.periodStart), "originalPurchaseDate": .int(subscription.originalPurchaseDate),
            "expiresDate": .int(subscription.expiresDate), "quantity": 1, "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": .string(subscription.ownership), "signedDate": .int(signedAt),
            "environment": .string(subscription.environment),
            "transactionReason": .string(subscription.transactionReason), "storefront": "USA",
            "storefrontId": "143441", "price": .int(subscription.offer?.price ?? subscription.price),
            "currency": .string(subscription.currency),
        ]
        if let token = subscription.appAccountToken { payload["appAccountToken"] = .string(token) }
        if let offer = subscription.offer {
            payload["offerType"] = .int(offer.type)
            payload["offerDiscountType"] = .string(offer.discountType)
            if let identifier = offer.identifier { payload["offerIdentifier"] = .string(identifier) }
        }
        if let revoked = subscription.revocationDate {
            payload["revocationDate"] = .int(revoked)
            payload["revocationReason"] = 0
            if let type = subscription.revocationType { payload["revocationType"] = .string(type) }
            if let percentage = subscription.revocationPercentage { payload["revocationPercentage"] = .int(percentage) }
        }
        if subscription.isUpgraded { payload["isUpgraded"] = true }
        return payload
    }

    /// The renewal info as it stands (JWSRenewalInfoDecodedPayload's fields).
    package static func renewalInfo(_ subscription: SimulatedAppleSubscription, signedAt: Int64) -> JSONObject {
        var payload: JSONObject = [
            "originalTransactionId": .string(subscription.originalTransactionId), "productId": .string(subscription.productId),
            "autoRenewProductId": .string(subscription.pendingPlan?.productId ?? subscription.productId),
            "autoRenewStatus": .int(subscription.autoRenew ? 1 : 0),
            "isInBillingRetryPeriod": .bool(subscription.status == .gracePeriod || subscription.status == .billingRetry),
            "signedDate": .int(signedAt), "environment": .string(subscription.environment),
            "recentSubscriptionStartDate": .int(subscription.recentStart), "renewalDate": .int(subscription.expiresDate),
            "renewalPrice": .int(subscription.pendingPlan?.price ?? subscription.priceIncrease?.price ?? subscription.price),
            "currency": .string(subscription.currency),
        ]
        if let increase = subscription.priceIncrease { payload["priceIncreaseStatus"] = .int(increase.consented ? 1 : 0) }
        if let token = subscription.appAccountToken { payload["appAccountToken"] = .string(token) }
        if let grace = subscription.gracePeriodExpiresDate { payload["gracePeriodExpiresDate"] = .int(grace) }
        if let intent = subscription.expirationIntent { payload["expirationIntent"] = .int(intent) }
        return payload
    }
}
