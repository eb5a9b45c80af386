import Entitlements
import Instants
import XCTest

/// One test per row and rule of docs/ENTITLEMENTS.md, each checked at several `now` values.
final class SubscriptionEngineTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let t0: Int64 = 1_780_000_000_000

    private func transaction(
        _ id: String, product: String = "pro.monthly", purchased: Int64, expires: Int64?,
        signed: Int64? = nil, original: String = "1000", offerType: Int64? = nil,
        discount: String? = nil, upgraded: Bool = false, revoked: Int64? = nil,
        revocationType: String? = nil, ownership: String = "PURCHASED",
        environment: String = "Sandbox"
    ) -> TransactionRecord {
        TransactionRecord(
            transactionId: id, originalTransactionId: original, productId: product, subscriptionGroupIdentifier: "G1",
            purchaseDate: purchased, expiresDate: expires, revocationDate: revoked, revocationReason: revoked == nil ? nil : 0,
            revocationType: revocationType, isUpgraded: upgraded, offerType: offerType, offerDiscountType: discount,
            ownershipType: ownership, environment: environment, signedDate: signed ?? purchased)
    }

    private func renewal(
        autoRenew: Int64 = 1, product: String = "pro.monthly", next: String? = nil, retry: Bool = false,
        grace: Int64? = nil, signed: Int64
    ) -> RenewalRecord {
        RenewalRecord(
            originalTransactionId: "1000", productId: product, autoRenewProductId: next ?? product,
            autoRenewStatus: autoRenew, isInBillingRetryPeriod: retry, gracePeriodExpiresDate: grace, signedDate: signed)
    }

    private func state(
        _ transactions: [TransactionRecord], _ renewal: RenewalRecord? = nil, at now: Int64,
        signals: [SubscriptionSignal] = [], retryGrants: Bool = false
    ) -> SubscriptionState {
        SubscriptionEngine.evaluate(
            transactions: transactions, renewal: renewal, signals: signals, now: now,
            environment: "Sandbox", billingRetryGrantsAccess: retryGrants)!
    }

    func testTrialThenPaidConversion() {
        let trial = transaction("1000", purchased: t0, expires: t0 + 7 * day, offerType: 1, discount: "FREE_TRIAL")
        let during = state([trial], renewal(signed: t0), at: t0 + day)
        XCTAssertEqual(during.state, .active)
        XCTAssertEqual(during.periodType, "TRIAL")
        XCTAssertTrue(during.willRenew)
        let paid = transaction("1001", purchased: t0 + 7 * day - 60_000, expires: t0 + 37 * day)
        let after = state([trial, paid], renewal(signed: t0 + 7 * day), at: t0 + 8 * day)
        XCTAssertEqual(after.state, .active)
        XCTAssertEqual(after.periodType, "NORMAL")
        XCTAssertEqual(after.expiresDate, t0 + 37 * day)
        XCTAssertEqual(
            state([trial, paid], renewal(signed: t0), at: t0 + 38 * day).state, .expired, "no renewal seen: expired at its date (E-09)")
    }

    func testIntroOfferThatIsNotATrial() {
        let intro = transaction("1000", purchased: t0, expires: t0 + 30 * day, offerType: 1, discount: "PAY_AS_YOU_GO")
        XCTAssertEqual(state([intro], at: t0).periodType, "INTRO")
        XCTAssertEqual(state([transaction("1000", purchased: t0, expires: t0 + day, offerType: 2)], at: t0).periodType, "PROMOTIONAL")
        XCTAssertEqual(state([transaction("1000", purchased: t0, expires: t0 + day, offerType: 3)], at: t0).periodType, "OFFER_CODE")
        XCTAssertEqual(state([transaction("1000", purchased: t0, expires: t0 + day, offerType: 4)], at: t0).periodType, "WIN_BACK")
    }

    func testTrialCancelledThenExpiry() {
        let trial = transaction("1000", purchased: t0, expires: t0 + 7 * day, offerType: 1, discount: "FREE_TRIAL")
        let off = renewal(autoRenew: 0, signed: t0 + 2 * day)
        let cancelled = state([trial], off, at: t0 + 3 * day)
        XCTAssertEqual(cancelled.state, .active, "auto-renew describes the future only (E-07)")
        XCTAssertFalse(cancelled.willRenew)
        XCTAssertEqual(cancelled.unsubscribeDetectedAt, t0 + 2 * day)
        let expired = state([trial], off, at: t0 + 7 * day)
        XCTAssertEqual(expired.state, .expired, "expiresDate == now is expired")
        XCTAssertFalse(expired.isActive)
        let resubscribed = state(
            [trial], renewal(autoRenew: 1, signed: t0 + 4 * day),
            at: t0 + 5 * day, signals: [SubscriptionSignal(.autoRenewDisabled, at: t0 + 2 * day)])
        XCTAssertNil(resubscribed.unsubscribeDetectedAt, "turning auto-renew on again clears it")
    }

    func testRenewalDoesNotRequirePurchaseDateBeforeNow() {
        let first = transaction("1000", purchased: t0, expires: t0 + 30 * day)
        // Renewals are charged shortly before the period starts (E-03).
        let renewed = transaction("1001", purchased: t0 + 30 * day - 3_600_000, expires: t0 + 60 * day)
        let justBefore = state([first, renewed], renewal(signed: t0 + 30 * day - 3_600_000), at: t0 + 30 * day - 1_800_000)
        XCTAssertEqual(justBefore.state, .active)
        XCTAssertEqual(justBefore.expiresDate, t0 + 60 * day)
    }

    func testBillingGraceThenRetryThenRecovery() {
        let period = transaction("1000", purchased: t0, expires: t0 + 30 * day)
        let grace = renewal(retry: true, grace: t0 + 36 * day, signed: t0 + 30 * day)
        let inGrace = state([period], grace, at: t0 + 31 * day, signals: [SubscriptionSignal(.billingIssue, at: t0 + 30 * day)])
        XCTAssertEqual(inGrace.state, .gracePeriod)
        XCTAssertTrue(inGrace.isActive)
        XCTAssertEqual(inGrace.gracePeriodExpiresDate, t0 + 36 * day)
        XCTAssertEqual(inGrace.billingIssueDetectedAt, t0 + 30 * day)
        let retry = state([period], grace, at: t0 + 37 * day)
        XCTAssertEqual(retry.state, .billingRetry, "grace ran out without a notification (E-09)")
        XCTAssertFalse(retry.isActive)
        // DID_RENEW / BILLING_RECOVERY brings a new transaction.
        let recovered = transaction("1001", purchased: t0 + 38 * day, expires: t0 + 68 * day)
        let after = state(
            [period, recovered], renewal(signed: t0 + 38 * day), at: t0 + 39 * day,
            signals: [SubscriptionSignal(.billingIssue, at: t0 + 30 * day), SubscriptionSignal(.renewed, at: t0 + 38 * day)])
        XCTAssertEqual(after.state, .active)
        XCTAssertNil(after.billingIssueDetectedAt, "a renewal clears the billing issue")
    }

    func testBillingRetryWithoutGrace() {
        let period = transaction("1000", purchased: t0, expires: t0 + 30 * day)
        let retry = renewal(retry: true, signed: t0 + 30 * day)
        for now in [t0 + 30 * day, t0 + 40 * day] {
            XCTAssertEqual(state([period], retry, at: now).state, .billingRetry)
            XCTAssertFalse(state([period], retry, at: now).isActive)
            XCTAssertTrue(state([period], retry, at: now, retryGrants: true).isActive, "billingRetryGrantsAccess")
        }
        XCTAssertEqual(state([period], retry, at: t0 + day).state, .active, "before the period ends, still active")
    }

    func testRefundOfTheCurrentPeriod() {
        let refunded = transaction("1000", purchased: t0, expires: t0 + 30 * day, signed: t0 + 5 * day, revoked: t0 + 5 * day)
        XCTAssertEqual(state([refunded], at: t0 + 4 * day).state, .active, "before the revocation date")
        let after = state([refunded], renewal(signed: t0), at: t0 + 6 * day)
        XCTAssertEqual(after.state, .revoked)
        XCTAssertFalse(after.isActive)
        XCTAssertFalse(after.willRenew)
        XCTAssertEqual(after.revocationDate, t0 + 5 * day)
    }

    func testRefundOfAnEarlierPeriodLeavesAccess() {
        let earlier = transaction("1000", purchased: t0, expires: t0 + 30 * day, signed: t0 + 40 * day, revoked: t0 + 40 * day)
        let current = transaction("1001", purchased: t0 + 30 * day, expires: t0 + 60 * day)
        for now in [t0 + 41 * day, t0 + 59 * day] {
            XCTAssertEqual(state([earlier, current], at: now).state, .active)
        }
        XCTAssertEqual(state([earlier, current], at: t0 + 61 * day).state, .expired)
    }

    func testRefundReversedThroughANewerSignedTransaction() {
        let refunded = transaction("1000", purchased: t0, expires: t0 + 30 * day, signed: t0 + 5 * day, revoked: t0 + 5 * day)
        let reversed = transaction("1000", purchased: t0, expires: t0 + 30 * day, signed: t0 + 6 * day)
        XCTAssertEqual(state([refunded, reversed], at: t0 + 7 * day).state, .active)
        // The same facts arriving in the other order: the newer signedDate still wins (E-08).
        XCTAssertEqual(state([reversed, refunded], at: t0 + 7 * day).state, .active)
        // And an older copy arriving after a refund never undoes the refund.
        let older = transaction("1000", purchased: t0, expires: t0 + 30 * day, signed: t0 + 1 * day)
        XCTAssertEqual(state([refunded, older], at: t0 + 7 * day).state, .revoked)
    }

    func testUpgradeSupersedesALaterExpiry() {
        // Yearly bought, then upgraded mid-period to a "higher" monthly: the yearly has the later
        // expiresDate but is marked upgraded and never counts again (E-02).
        let yearly = transaction(
            "1000", product: "pro.yearly", purchased: t0, expires: t0 + 365 * day, signed: t0 + 10 * day, upgraded: true)
        let upgraded = transaction("1001", product: "pro.max", purchased: t0 + 10 * day, expires: t0 + 40 * day)
        let now = state([yearly, upgraded], at: t0 + 11 * day)
        XCTAssertEqual(now.productId, "pro.max")
        XCTAssertEqual(now.expiresDate, t0 + 40 * day)
        XCTAssertEqual(state([yearly, upgraded], at: t0 + 41 * day).state, .expired, "the yearly's later expiry never grants access")
    }

    func testDowngradeTakesEffectAtRenewal() {
        let yearly = transaction("1000", product: "pro.yearly", purchased: t0, expires: t0 + 365 * day)
        let scheduled = renewal(product: "pro.yearly", next: "pro.monthly", signed: t0 + 100 * day)
        let before = state([yearly], scheduled, at: t0 + 200 * day)
        XCTAssertEqual(before.productId, "pro.yearly")
        XCTAssertEqual(before.autoRenewProductId, "pro.monthly")
        let monthly = transaction("1001", product: "pro.monthly", purchased: t0 + 365 * day, expires: t0 + 395 * day)
        let after = state([yearly, monthly], renewal(signed: t0 + 365 * day), at: t0 + 366 * day)
        XCTAssertEqual(after.productId, "pro.monthly")
        XCTAssertEqual(after.state, .active)
    }

    func testCrossgradeAtTheSameLevel() {
        let monthly = transaction("1000", product: "pro.monthly", purchased: t0, expires: t0 + 30 * day)
        let other = transaction("1001", product: "pro.monthly.alt", purchased: t0 + 30 * day, expires: t0 + 60 * day)
        XCTAssertEqual(state([monthly, other], at: t0 + 31 * day).productId, "pro.monthly.alt")
    }

    func testFamilySharingAndFamilyRevoke() {
        let shared = transaction("1000", purchased: t0, expires: t0 + 30 * day, ownership: "FAMILY_SHARED")
        let granted = state([shared], at: t0 + day)
        XCTAssertEqual(granted.ownershipType, "FAMILY_SHARED")
        XCTAssertTrue(granted.isActive)
        let revoked = transaction(
            "1000", purchased: t0, expires: t0 + 30 * day, signed: t0 + 2 * day, revoked: t0 + 2 * day,
            revocationType: "FAMILY_REVOKE", ownership: "FAMILY_SHARED")
        XCTAssertEqual(state([shared, revoked], at: t0 + 3 * day).state, .revoked)
    }

    func testSandboxNeverTouchesProduction() {
        let sandbox = transaction("1000", purchased: t0, expires: t0 + 30 * day, environment: "Sandbox")
        XCTAssertNil(
            SubscriptionEngine.evaluate(
                transactions: [sandbox], renewal: nil, now: t0, environment: "Production",
                billingRetryGrantsAccess: false))
        let production = transaction("2000", purchased: t0, expires: t0 + day, environment: "Production")
        let refundInSandbox = transaction("2000", purchased: t0, expires: t0 + day, signed: t0 + 1, revoked: t0, environment: "Sandbox")
        XCTAssertEqual(
            SubscriptionEngine.evaluate(
                transactions: [production, refundInSandbox], renewal: nil, now: t0 + 1,
                environment: "Production", billingRetryGrantsAccess: false)?.state, .active)
    }
}

final class EntitlementResolverTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let t0: Int64 = 1_780_000_000_000

    func testBestGrantWins() {
        let products = ["pro.monthly": ["pro"], "pro.yearly": ["pro"], "lifetime": ["pro", "extras"], "coins": [String]()]
        let expiredMonthly = ProductGrant(
            productId: "pro.monthly", isActive: false, state: "EXPIRED", originalTransactionId: "1",
            expiresDate: t0, ownershipType: "PURCHASED", lastEventDate: t0)
        let activeYearly = ProductGrant(
            productId: "pro.yearly", isActive: true, state: "ACTIVE", originalTransactionId: "2",
            expiresDate: t0 + 300 * day, ownershipType: "PURCHASED", lastEventDate: t0)
        var resolved = EntitlementResolver.resolve([expiredMonthly, activeYearly]) { products[$0] ?? [] }
        XCTAssertEqual(resolved["pro"]?.productId, "pro.yearly", "active beats inactive")
        let lifetime = ProductGrant(
            productId: "lifetime", isActive: true, state: "ACTIVE", originalTransactionId: "3",
            expiresDate: nil, ownershipType: "PURCHASED", lastEventDate: t0)
        resolved = EntitlementResolver.resolve([expiredMonthly, activeYearly, lifetime]) { products[$0] ?? [] }
        XCTAssertEqual(resolved["pro"]?.productId, "lifetime", "no expiry beats any date")
        XCTAssertEqual(resolved["extras"]?.productId, "lifetime")
        let olderExpired = ProductGrant(
            productId: "pro.yearly", isActive: false, state: "EXPIRED", originalTransactionId: "2",
            expiresDate: t0 - 100 * day, ownershipType: "PURCHASED", lastEventDate: t0 - 100 * day)
        resolved = EntitlementResolver.resolve([olderExpired, expiredMonthly]) { products[$0] ?? [] }
        XCTAssertEqual(resolved["pro"]?.productId, "pro.monthly", "among inactive, the most recent")
    }

    func testNonSubscriptions() {
        let lifetime = TransactionRecord(
            transactionId: "5", originalTransactionId: "5", productId: "lifetime", type: "Non-Consumable",
            purchaseDate: t0, signedDate: t0)
        XCTAssertEqual(NonSubscriptionEngine.grant(lifetime, now: t0 + 1000 * day, duration: nil)?.isActive, true)
        var refunded = lifetime
        refunded.revocationDate = t0 + day
        XCTAssertEqual(NonSubscriptionEngine.grant(refunded, now: t0 + 2 * day, duration: nil)?.state, "REVOKED")
        let season = TransactionRecord(
            transactionId: "6", originalTransactionId: "6", productId: "season", type: "Non-Renewing Subscription",
            purchaseDate: t0, signedDate: t0)
        XCTAssertEqual(NonSubscriptionEngine.grant(season, now: t0 + 10 * day, duration: ISO8601Duration("P30D"))?.isActive, true)
        XCTAssertEqual(NonSubscriptionEngine.grant(season, now: t0 + 31 * day, duration: ISO8601Duration("P30D"))?.state, "EXPIRED")
        let coins = TransactionRecord(
            transactionId: "7", originalTransactionId: "7", productId: "coins", type: "Consumable",
            purchaseDate: t0, signedDate: t0)
        XCTAssertNil(NonSubscriptionEngine.grant(coins, now: t0, duration: nil), "never an entitlement")
    }

    func testISO8601Durations() {
        XCTAssertEqual(ISO8601Duration("P1M")?.months, 1)
        XCTAssertEqual(ISO8601Duration("P1Y6M")?.years, 1)
        XCTAssertNil(ISO8601Duration("1M"))
        XCTAssertNil(ISO8601Duration("P1H"))
        XCTAssertNil(ISO8601Duration("P"))
        // Each designator once, in order: P1M1M is not a duration (it was read as one month).
        for text in ["P1M1M", "P1D1Y", "P1W1M", "P2D3D", "P1Y1Y"] { XCTAssertNil(ISO8601Duration(text), text) }
        XCTAssertEqual(ISO8601Duration("P1Y2M3W4D").map { [$0.years, $0.months, $0.weeks, $0.days] }, [1, 2, 3, 4])
        // 2026-01-31 plus one calendar month is 2026-02-28 (UTC).
        let january31: Int64 = 1_769_817_600_000
        XCTAssertEqual(ISO8601Duration("P1M")?.end(from: january31), 1_772_236_800_000)
        XCTAssertEqual(ISO8601Duration("P2W")?.end(from: january31), january31 + 14 * day)
    }

    func testOfferEligibility() {
        let monthly = TransactionRecord(
            transactionId: "1", originalTransactionId: "1", productId: "pro.monthly",
            subscriptionGroupIdentifier: "G1", purchaseDate: t0, expiresDate: t0 + 30 * day, signedDate: t0)
        XCTAssertEqual(OfferEligibility.introductory(group: "G1", transactions: [], groupOf: { _ in nil }), .neverSubscribedToGroup)
        XCTAssertEqual(
            OfferEligibility.introductory(group: "G1", transactions: [monthly], groupOf: { _ in nil }), .alreadySubscribedToGroup,
            "per group, whatever the product")
        XCTAssertEqual(OfferEligibility.introductory(group: "G2", transactions: [monthly], groupOf: { _ in nil }), .neverSubscribedToGroup)

        let active = SubscriptionEngine.evaluate(
            transactions: [monthly], renewal: nil, now: t0 + day, environment: "Sandbox",
            billingRetryGrantsAccess: false)!
        let lapsed = SubscriptionEngine.evaluate(
            transactions: [monthly], renewal: nil, now: t0 + 40 * day, environment: "Sandbox",
            billingRetryGrantsAccess: false)!
        XCTAssertTrue(OfferEligibility.promotional(rule: .any, group: "G1", subscriptions: []))
        XCTAssertFalse(OfferEligibility.promotional(rule: .existing, group: "G1", subscriptions: []))
        XCTAssertTrue(OfferEligibility.promotional(rule: .existing, group: "G1", subscriptions: [lapsed]))
        XCTAssertTrue(OfferEligibility.promotional(rule: .current, group: "G1", subscriptions: [active]))
        XCTAssertFalse(OfferEligibility.promotional(rule: .current, group: "G1", subscriptions: [lapsed]))
        XCTAssertTrue(OfferEligibility.promotional(rule: .lapsed, group: "G1", subscriptions: [lapsed]))
        XCTAssertFalse(OfferEligibility.promotional(rule: .lapsed, group: "G1", subscriptions: [active]))
        XCTAssertFalse(OfferEligibility.promotional(rule: .lapsed, group: "G1", subscriptions: []))
    }
}
