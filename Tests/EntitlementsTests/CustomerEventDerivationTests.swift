import AppStore
import Entitlements
import XCTest

/// Each rule of docs/EVENTS.md "Which fact causes which event", on the pure derivation: stored facts
/// before, one batch, the events it causes.
final class CustomerEventDerivationTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_700_000_000_000

    // MARK: - Helpers

    /// Stored facts seen through `FactReading`, as a store's transaction would see them.
    private struct Stored: FactReading {
        var subscriptions: [SubscriptionFacts]
        var storedGrants: [PromotionalGrant] = []
        func facts(environment: String, originalTransactionId: String, storedToken: String??) -> SubscriptionFacts? {
            subscriptions.first { $0.originalTransactionId == originalTransactionId && $0.environment == environment }
        }
        func facts(environment: String, appAccountToken: String) -> [SubscriptionFacts] {
            subscriptions.filter { $0.appAccountToken == appAccountToken && $0.environment == environment }
        }
        func token(environment: String, originalTransactionId: String) -> String? {
            facts(environment: environment, originalTransactionId: originalTransactionId, storedToken: nil)?.appAccountToken
        }
        func linkTransfers(environment: String, appAccountToken: String) -> [LinkTransfer] { [] }
        func grants(environment: String, appAccountToken: String) -> [PromotionalGrant] {
            storedGrants.filter { $0.environment == environment && $0.appAccountToken == appAccountToken }
        }
        func grant(id: String) -> PromotionalGrant? { storedGrants.first { $0.id == id } }
        var storedPlay: [PlayPurchase] = []
        func playPurchases(appAccountToken: String) -> [PlayPurchase] { storedPlay.filter { $0.appAccountToken == appAccountToken } }
        func playPurchase(token: String) -> PlayPurchase? { storedPlay.first { $0.purchaseToken == token } }
        func retentionRecords(environment: String, originalTransactionId: String) -> [RetentionRecord] { [] }
        func appDownloads(appAccountToken: String) -> [AppDownload] { [] }
        func experimentAssignments(appAccountToken: String) -> [ExperimentAssignment] { [] }
    }

    // MARK: - Google Play

    private func play(
        _ token: String = "p1", state: String = "SUBSCRIPTION_STATE_ACTIVE", expiry: Int64 = 5_000, renews: Bool = true,
        linked: String? = nil, voided: Int64? = nil, phase: String? = nil, read: Int64
    ) -> PlayPurchase {
        var purchase = PlayPurchase(
            purchaseToken: token, kind: .subscription, productId: "pro", basePlanId: "monthly", offerId: nil, environment: "Production",
            googleState: state, startTime: 1_000, expiryTime: expiry, autoRenewing: renews, linkedPurchaseToken: linked,
            acknowledged: true, appAccountToken: customer, orderId: nil, voidedAt: voided, readAt: read)
        purchase.details.offerPhase = phase
        return purchase
    }

    private func playEvents(stored: [PlayPurchase], _ purchase: PlayPurchase) throws -> [CustomerEvent.Kind] {
        var batch = FactBatch(appId: "app", environment: "Production")
        batch.playPurchases = [(purchase, "{}")]
        batch.requestedAt = purchase.readAt
        let pending = try FactChange.read(batch, environments: ["Production"], from: Stored(subscriptions: [], storedPlay: stored))
        let change = FactChange.applying(batch, to: pending)
        XCTAssertEqual(change.playSubscribers[purchase.purchaseToken]?.playPurchases.map(\.purchaseToken), [purchase.purchaseToken])
        return kinds(CustomerEventDerivation.events(change, billingRetryGrantsAccess: false))
    }

    func testPlayPurchasesCauseTheSameEventsAsAppStoreOnes() throws {
        let first = play(read: 10)
        XCTAssertEqual(try playEvents(stored: [], first), [.initialPurchase])
        XCTAssertEqual(try playEvents(stored: [], play("p2", linked: "p1", read: 10)), [.productChange], "an upgrade")
        XCTAssertEqual(try playEvents(stored: [first], play(expiry: 9_000, read: 20)), [.renewal])
        XCTAssertEqual(
            try playEvents(stored: [first], play(state: "SUBSCRIPTION_STATE_CANCELED", renews: false, read: 20)), [.cancellation])
        XCTAssertEqual(try playEvents(stored: [play(renews: false, read: 10)], play(read: 20)), [.uncancellation])
        XCTAssertEqual(try playEvents(stored: [first], play(state: "SUBSCRIPTION_STATE_ON_HOLD", read: 20)), [.billingIssue])
        XCTAssertEqual(
            try playEvents(stored: [play(state: "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", read: 10)], play(expiry: 9_000, read: 20)),
            [.renewal, .billingRecovery])
        XCTAssertEqual(
            try playEvents(stored: [first], play(state: "SUBSCRIPTION_STATE_EXPIRED", renews: false, read: 20)),
            [.cancellation, .expiration])
        XCTAssertEqual(try playEvents(stored: [first], play(voided: 15, read: 20)), [.refund])
        XCTAssertEqual(try playEvents(stored: [first], play(read: 20)), [], "a read that changes nothing")
        XCTAssertEqual(try playEvents(stored: [play(read: 30)], play(expiry: 9_000, read: 20)), [], "an older read changes nothing")
    }

    /// Free trials as on the App Store: started with the purchase, converted by the first paid
    /// renewal, cancelled while running; a grace period stretching the expiry is no renewal.
    func testPlayFreeTrialsAndGracePeriods() throws {
        let trial = play(phase: "freeTrial", read: 10)
        XCTAssertEqual(try playEvents(stored: [], trial), [.initialPurchase, .trialStarted])
        XCTAssertEqual(try playEvents(stored: [trial], play(expiry: 9_000, phase: "basePrice", read: 20)), [.renewal, .trialConverted])
        XCTAssertEqual(
            try playEvents(stored: [trial], play(state: "SUBSCRIPTION_STATE_CANCELED", renews: false, phase: "freeTrial", read: 20)),
            [.cancellation, .trialCancelled])
        XCTAssertEqual(
            try playEvents(stored: [play(read: 10)], play(state: "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", expiry: 8_000, read: 20)),
            [.billingIssue], "the expiry moved to the grace period's end: nothing was charged")
    }

    // MARK: - Promotional grants

    private let customer = "6b1f3c8e-2d4a-4e5b-9c7d-8e9f0a1b2c3d"

    private func grant(revokedAt: Int64? = nil) -> PromotionalGrant {
        PromotionalGrant(
            id: "g1", appAccountToken: customer, environment: "Sandbox", entitlement: "pro", startsAt: 1_000, expiresDate: 5_000,
            reason: "sorry", grantedBy: "support", revokedAt: revokedAt, revokedBy: revokedAt == nil ? nil : "support")
    }

    private func grantEvents(stored: [PromotionalGrant], _ grant: PromotionalGrant) throws -> [CustomerEvent] {
        var batch = FactBatch(appId: "app", environment: "Sandbox")
        batch.grant = grant
        let pending = try FactChange.read(batch, environments: ["Sandbox"], from: Stored(subscriptions: [], storedGrants: stored))
        let change = FactChange.applying(batch, to: pending)
        XCTAssertEqual(change.grantSubscriber?.grants, [grant], "the customer after the batch holds the grant as stored")
        return CustomerEventDerivation.events(change, billingRetryGrantsAccess: false)
    }

    func testANewGrantIsAPromotionalGrant() throws {
        let events = try grantEvents(stored: [], grant())
        XCTAssertEqual(kinds(events), [.promotionalGrant])
        XCTAssertEqual(events.first?.occurredAt, 1_000)
        XCTAssertEqual(events.first?.grant?.id, "g1")
    }

    func testRevokingAStoredGrantIsAPromotionalGrantRevoked() throws {
        let events = try grantEvents(stored: [grant()], grant(revokedAt: 2_000))
        XCTAssertEqual(kinds(events), [.promotionalGrantRevoked])
        XCTAssertEqual(events.first?.occurredAt, 2_000)
    }

    func testStoringAGrantAgainCausesNothing() throws {
        XCTAssertEqual(kinds(try grantEvents(stored: [grant()], grant())), [])
        XCTAssertEqual(kinds(try grantEvents(stored: [grant(revokedAt: 2_000)], grant(revokedAt: 2_000))), [], "revoked twice")
    }

    private func events(_ batch: FactBatch) throws -> [CustomerEvent] { try events([], batch) }

    private func events(_ stored: [SubscriptionFacts], _ batch: FactBatch) throws -> [CustomerEvent] {
        let pending = try FactChange.read(batch, environments: ["Sandbox"], from: Stored(subscriptions: stored))
        return CustomerEventDerivation.events(FactChange.applying(batch, to: pending), billingRetryGrantsAccess: false)
    }

    private func kinds(_ events: [CustomerEvent]) -> [CustomerEvent.Kind] { events.map(\.kind) }

    private func transaction(
        _ id: String, product: String = "pro.monthly", at purchase: Int64, days: Int64 = 30, signed: Int64? = nil,
        offerType: Int64? = nil, discount: String? = nil, revoked: Int64? = nil, type: ProductType = .autoRenewable,
        expires: Int64? = nil
    ) -> TransactionRecord {
        TransactionRecord(
            transactionId: id, originalTransactionId: "1000", productId: product, type: type.rawValue, purchaseDate: purchase,
            expiresDate: type == .autoRenewable ? expires ?? purchase + days * day : nil, revocationDate: revoked,
            revocationReason: revoked == nil ? nil : 1, revocationType: revoked == nil ? nil : "REFUND_FULL", offerType: offerType,
            offerDiscountType: discount, signedDate: signed ?? purchase, price: 9990, currency: "EUR")
    }

    private func renewal(
        status: Int64 = 1, next: String = "pro.monthly", retry: Bool = false, grace: Int64? = nil, intent: Int64? = nil,
        signed: Int64
    ) -> RenewalRecord {
        RenewalRecord(
            originalTransactionId: "1000", productId: "pro.monthly", autoRenewProductId: next, autoRenewStatus: status,
            isInBillingRetryPeriod: retry, gracePeriodExpiresDate: grace, expirationIntent: intent, signedDate: signed)
    }

    private func facts(
        _ transactions: [TransactionRecord], renewal: RenewalRecord? = nil, signals: [SubscriptionSignal] = []
    )
        -> SubscriptionFacts
    {
        SubscriptionFacts(
            originalTransactionId: "1000", environment: "Sandbox", appAccountToken: nil, transactions: transactions,
            renewal: renewal, signals: signals)
    }

    private func batch(
        _ transactions: [TransactionRecord] = [], renewal: RenewalRecord? = nil, notification: (String, String?)? = nil,
        at: Int64 = 0, signals: [SubscriptionSignal] = []
    ) -> FactBatch {
        var batch = FactBatch(appId: "app", environment: "Sandbox")
        batch.transactions = transactions.map { ($0, "jws") }
        batch.renewal = renewal.map { ($0, "jws") }
        batch.signals = signals.map { ("1000", $0) }
        if let (type, subtype) = notification {
            batch.notification = StoredNotification(
                notificationUUID: UUID().uuidString, appId: "app", environment: "Sandbox", notificationType: type, subtype: subtype,
                signedDate: at, receivedAt: at, originalTransactionId: "1000", jws: "jws")
        }
        return batch
    }

    // MARK: - Purchases

    func testFirstTransactionIsAnInitialPurchase() throws {
        let found = try events(batch([transaction("1000", at: start)]))
        XCTAssertEqual(kinds(found), [.initialPurchase])
        XCTAssertEqual(found[0].transaction?.price, 9990)
        XCTAssertEqual(found[0].occurredAt, start, "without a notification, the purchase's own date")
    }

    func testFreeTrialStartCausesInitialPurchaseAndTrialStarted() throws {
        let trial = transaction("1000", at: start, days: 7, offerType: 1, discount: "FREE_TRIAL")
        XCTAssertEqual(kinds(try events(batch([trial]))), [.initialPurchase, .trialStarted])
    }

    func testPaidIntroductoryOfferIsNoTrial() throws {
        let intro = transaction("1000", at: start, offerType: 1, discount: "PAY_AS_YOU_GO")
        XCTAssertEqual(kinds(try events(batch([intro]))), [.initialPurchase])
    }

    func testLaterTransactionIsARenewalAtTheNotificationsTime() throws {
        let first = transaction("1000", at: start)
        let found = try events(
            [facts([first])], batch([transaction("1001", at: start + 30 * day)], notification: ("DID_RENEW", nil), at: 42))
        XCTAssertEqual(kinds(found), [.renewal])
        XCTAssertEqual(found[0].isTrialConversion, false)
        XCTAssertEqual(found[0].occurredAt, 42, "a notification's signedDate")
    }

    func testRenewalAfterAFreeTrialIsATrialConversion() throws {
        let trial = transaction("1000", at: start, days: 7, offerType: 1, discount: "FREE_TRIAL")
        let found = try events([facts([trial])], batch([transaction("1001", at: start + 7 * day)]))
        XCTAssertEqual(kinds(found), [.renewal, .trialConverted])
        XCTAssertEqual(found[0].isTrialConversion, true)
    }

    func testNewProductBeforeThePeriodEndsIsAnImmediateProductChange() throws {
        let monthly = transaction("1000", at: start)
        let found = try events([facts([monthly])], batch([transaction("1001", product: "pro.yearly", at: start + 10 * day)]))
        XCTAssertEqual(kinds(found), [.productChange])
        XCTAssertEqual(found[0].takesEffect, "IMMEDIATELY")
        XCTAssertEqual(found[0].previousProductId, "pro.monthly")
        XCTAssertEqual(found[0].newProductId, "pro.yearly")
    }

    func testOneTimePurchaseIsANonRenewingPurchase() throws {
        let coins = transaction("1000", product: "coins.100", at: start, type: .consumable)
        XCTAssertEqual(kinds(try events(batch([coins]))), [.nonRenewingPurchase])
        let lifetime = transaction("1000", product: "lifetime", at: start, type: .nonConsumable)
        XCTAssertEqual(kinds(try events(batch([lifetime]))), [.nonRenewingPurchase])
    }

    // MARK: - What Entitle already had

    func testFactsAlreadyStoredCauseNothing() throws {
        let first = transaction("1000", at: start, signed: start + 5)
        let stored = [facts([first], renewal: renewal(signed: start + 5))]
        XCTAssertEqual(try events(stored, batch([first], renewal: renewal(signed: start + 5))), [], "the same facts again")
        let older = transaction("1000", at: start, signed: start + 1, revoked: start + 1)
        XCTAssertEqual(try events(stored, batch([older])), [], "an older copy never wins, so it changes nothing")
        let newerCopy = transaction("1000", at: start, signed: start + 9)
        XCTAssertEqual(try events(stored, batch([newerCopy], notification: ("SUBSCRIBED", "INITIAL_BUY"), at: start + 9)), [])
    }

    // MARK: - Auto-renewal

    func testAutoRenewTurnedOffIsACancellationWithItsReason() throws {
        let stored = [facts([transaction("1000", at: start)], renewal: renewal(signed: start))]
        let byCustomer = try events(
            stored,
            batch(renewal: renewal(status: 0, signed: start + day), notification: ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED")))
        XCTAssertEqual(kinds(byCustomer), [.cancellation])
        XCTAssertEqual(byCustomer[0].cancelReason, "UNSUBSCRIBE")
        let byBilling = try events(stored, batch(renewal: renewal(status: 0, intent: 2, signed: start + day)))
        XCTAssertEqual(byBilling.first?.cancelReason, "BILLING_ERROR", "Apple's expirationIntent when it says")
        let unknown = try events(stored, batch(renewal: renewal(status: 0, signed: start + day)))
        XCTAssertEqual(kinds(unknown), [.cancellation])
        XCTAssertEqual(unknown[0].cancelReason, "UNKNOWN")
    }

    func testCancellationDuringAFreeTrialIsAlsoATrialCancellation() throws {
        let trial = transaction("1000", at: start, days: 7, offerType: 1, discount: "FREE_TRIAL")
        let found = try events([facts([trial], renewal: renewal(signed: start))], batch(renewal: renewal(status: 0, signed: start + day)))
        XCTAssertEqual(kinds(found), [.cancellation, .trialCancelled])
    }

    func testAutoRenewTurnedBackOnIsAnUncancellation() throws {
        let stored = [facts([transaction("1000", at: start)], renewal: renewal(status: 0, signed: start + day))]
        XCTAssertEqual(kinds(try events(stored, batch(renewal: renewal(status: 1, signed: start + 2 * day)))), [.uncancellation])
    }

    func testResubscribingAfterExpiryIsARenewalNotAnUncancellation() throws {
        let stored = [facts([transaction("1000", at: start)], renewal: renewal(status: 0, intent: 1, signed: start + 31 * day))]
        let found = try events(
            stored, batch([transaction("1001", at: start + 40 * day)], renewal: renewal(status: 1, signed: start + 40 * day)))
        XCTAssertEqual(kinds(found), [.renewal])
    }

    func testPendingProductChangeTakesEffectAtRenewal() throws {
        let stored = [facts([transaction("1000", at: start)], renewal: renewal(signed: start))]
        let found = try events(stored, batch(renewal: renewal(next: "pro.basic", signed: start + day)))
        XCTAssertEqual(kinds(found), [.productChange])
        XCTAssertEqual(found[0].takesEffect, "AT_RENEWAL")
        XCTAssertEqual(found[0].newProductId, "pro.basic")
        XCTAssertEqual(found[0].previousProductId, "pro.monthly")
    }

    func testExpirationWithItsReason() throws {
        let stored = [facts([transaction("1000", at: start)], renewal: renewal(status: 0, signed: start + day))]
        let found = try events(
            stored, batch(renewal: renewal(status: 0, intent: 1, signed: start + 31 * day), notification: ("EXPIRED", "VOLUNTARY"), at: 77))
        XCTAssertEqual(kinds(found), [.expiration])
        XCTAssertEqual(found[0].expirationReason, "UNSUBSCRIBE")
        XCTAssertEqual(found[0].occurredAt, 77)
        let again = [facts([transaction("1000", at: start)], renewal: renewal(status: 0, intent: 1, signed: start + 31 * day))]
        XCTAssertEqual(try events(again, batch(renewal: renewal(status: 0, intent: 1, signed: start + 32 * day))), [], "once per lapse")
    }

    // MARK: - Billing

    func testBillingTroubleIsABillingIssueWithTheGracePeriod() throws {
        let stored = [facts([transaction("1000", at: start)], renewal: renewal(signed: start))]
        let grace = start + 36 * day
        let found = try events(
            stored,
            batch(
                renewal: renewal(retry: true, grace: grace, signed: start + 30 * day), notification: ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"),
                at: start + 30 * day, signals: [SubscriptionSignal(.billingIssue, at: start + 30 * day)]))
        XCTAssertEqual(kinds(found), [.billingIssue])
        XCTAssertEqual(found[0].gracePeriodExpiresDate, grace)
        let stillFailing = [facts([transaction("1000", at: start)], renewal: renewal(retry: true, grace: grace, signed: start + 30 * day))]
        XCTAssertEqual(try events(stillFailing, batch(renewal: renewal(retry: true, grace: grace, signed: start + 31 * day))), [])
    }

    func testRenewalAfterBillingTroubleIsABillingRecovery() throws {
        let stored = [facts([transaction("1000", at: start)], renewal: renewal(retry: true, signed: start + 30 * day))]
        let found = try events(
            stored,
            batch(
                [transaction("1001", at: start + 32 * day)], renewal: renewal(signed: start + 32 * day),
                signals: [SubscriptionSignal(.renewed, at: start + 32 * day)]))
        XCTAssertEqual(kinds(found), [.renewal, .billingRecovery])
    }

    // MARK: - Refunds and extensions

    func testRefundOfTheCurrentPeriodEndsAccess() throws {
        let current = transaction("1000", at: start, signed: start)
        let refunded = transaction("1000", at: start, signed: start + 2 * day, revoked: start + 2 * day)
        let found = try events([facts([current])], batch([refunded], notification: ("REFUND", nil), at: start + 2 * day))
        XCTAssertEqual(kinds(found), [.refund])
        XCTAssertEqual(found[0].refundedTransactionId, "1000")
        XCTAssertEqual(found[0].revocationReason, 1)
        XCTAssertEqual(found[0].endedAccess, true)
    }

    func testRefundOfAnEarlierPeriodLeavesAccess() throws {
        let old = transaction("1000", at: start)
        let current = transaction("1001", at: start + 30 * day)
        let refunded = transaction("1000", at: start, signed: start + 31 * day, revoked: start + 31 * day)
        let found = try events([facts([old, current])], batch([refunded], notification: ("REFUND", nil), at: start + 31 * day))
        XCTAssertEqual(kinds(found), [.refund])
        XCTAssertEqual(found[0].endedAccess, false)
    }

    func testRefundReversed() throws {
        let refunded = transaction("1000", at: start, signed: start + day, revoked: start + day)
        let restored = transaction("1000", at: start, signed: start + 2 * day)
        XCTAssertEqual(kinds(try events([facts([refunded])], batch([restored]))), [.refundReversed])
    }

    func testLaterExpiryOfTheSameTransactionIsAnExtension() throws {
        let current = transaction("1000", at: start)
        let extended = transaction("1000", at: start, signed: start + day, expires: start + 37 * day)
        let found = try events([facts([current])], batch([extended], notification: ("RENEWAL_EXTENDED", nil), at: start + day))
        XCTAssertEqual(kinds(found), [.subscriptionExtended])
        XCTAssertEqual(found[0].previousExpiresDate, start + 30 * day)
    }

    // MARK: - Tests

    func testTestNotificationAndWebhookTestCauseATestEvent() throws {
        XCTAssertEqual(kinds(try events(batch(notification: ("TEST", nil), at: 5))), [.test])
        var ping = FactBatch(appId: "app", environment: "Production")
        ping.webhookTestId = "id"
        XCTAssertEqual(kinds(try events(ping)), [.test])
    }

    // MARK: - The change itself

    func testTheChangeSpansTheWholeSubscriberAfterTheBatch() throws {
        var other = facts([transaction("2000", at: start)])
        other.originalTransactionId = "2000"
        other.transactions[0].originalTransactionId = "2000"
        other.appAccountToken = "token"
        var mine = facts([transaction("1000", at: start)])
        mine.appAccountToken = "token"
        let pending = try FactChange.read(
            batch([transaction("1001", at: start + 30 * day)]), environments: ["Sandbox"], from: Stored(subscriptions: [other, mine]))
        let change = FactChange.applying(batch([transaction("1001", at: start + 30 * day)]), to: pending)
        let subscriber = try XCTUnwrap(change.subscribers["1000"])
        XCTAssertEqual(subscriber.appAccountToken, "token")
        let subscriptions = subscriber.environments[0].facts
        XCTAssertEqual(subscriptions.map(\.originalTransactionId), ["1000", "2000"])
        XCTAssertEqual(subscriptions[0].transactions.map(\.transactionId), ["1000", "1001"], "the batch's renewal is in the view")
    }
}
