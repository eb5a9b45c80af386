import Entitlements
import JSON
import XCTest

/// The refund policy and both stores' answer rules, alone: each condition, first match, the
/// override, and Apple's percentage rules.
final class RefundPolicyTests: XCTestCase {
    private let hour: Int64 = 3_600_000

    private func request(_ reason: String = "OTHER", store: String = "app_store") -> RefundRequest {
        RefundRequest(
            id: "n-1", store: store, environment: "Sandbox", appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            transactionId: "1", originalTransactionId: "1", pendingRefundToken: store == "play_store" ? "prt-1" : nil, reason: reason,
            requestedAt: 100 * hour, deadline: 112 * hour)
    }

    private func usage(
        consumed: Double? = nil, delivered: Bool? = nil, reason: String? = nil, events: [UsageRecord.Event] = []
    ) -> UsageRecord {
        UsageRecord(
            id: UUID().uuidString, appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138", transactionId: "1", purchaseToken: nil,
            consumedPercent: consumed, delivered: delivered, undeliveredReason: reason, events: events, recordedAt: 1, recordedBy: "server")
    }

    private func refund(
        _ reason: String = "OTHER", type: String? = "consumable", purchasedHoursAgo: Int64 = 2, usage: [UsageRecord] = [], refunds: Int = 0,
        override: String? = nil, store: String = "app_store"
    ) -> RefundCase {
        RefundCase(
            request: request(reason, store: store), productType: type, purchaseDate: 100 * hour - purchasedHoursAgo * hour,
            now: 100 * hour, usage: usage, refundsInLast365Days: refunds,
            override: override.map { RefundOverride(appAccountToken: "t", override: $0, reason: nil, setBy: "support", setAt: 1) },
            sampleContentProvided: false)
    }

    func testEachConditionAndTheFirstMatchWins() {
        let policy = RefundPolicy(
            customerConsent: true,
            rules: [
                RefundRule(name: "legal", reasons: ["LEGAL"], prefer: .grantFull),
                RefundRule(name: "early", hoursSincePurchaseAtMost: 24, prefer: .grantProrated),
                RefundRule(name: "used", consumedAtLeast: 50, prefer: .decline),
                RefundRule(name: "undelivered", delivered: false, prefer: .grantFull),
                RefundRule(name: "abuser", refundsInLast365DaysAtLeast: 3, prefer: .decline),
                RefundRule(name: "subs", productType: "subscription", prefer: .decline),
                RefundRule(name: "play", store: "play_store", prefer: .grantFull),
            ])
        func decided(_ refund: RefundCase) -> String { policy.decide(refund).decidedBy }
        XCTAssertEqual(decided(refund("LEGAL")), "rule legal")
        XCTAssertEqual(decided(refund("LEGAL", purchasedHoursAgo: 1)), "rule legal", "the first match wins")
        XCTAssertEqual(decided(refund(purchasedHoursAgo: 24)), "rule early", "at most 24 hours: 24 counts")
        XCTAssertEqual(decided(refund(purchasedHoursAgo: 30, usage: [usage(consumed: 50)])), "rule used")
        XCTAssertEqual(decided(refund(purchasedHoursAgo: 30, usage: [usage(consumed: 49.9)])), "default")
        XCTAssertEqual(decided(refund(purchasedHoursAgo: 30, usage: [usage(delivered: false, reason: "WRONG_ITEM")])), "rule undelivered")
        XCTAssertEqual(
            decided(refund(purchasedHoursAgo: 30, usage: [usage(delivered: false), usage(delivered: true)])), "default",
            "the latest statement counts")
        XCTAssertEqual(decided(refund(purchasedHoursAgo: 30, refunds: 3)), "rule abuser")
        XCTAssertEqual(decided(refund(type: "subscription", purchasedHoursAgo: 30)), "rule subs")
        XCTAssertEqual(decided(refund(purchasedHoursAgo: 30, store: "play_store")), "rule play")
        XCTAssertEqual(policy.decide(refund(purchasedHoursAgo: 30)), RefundDecision(preference: .none, decidedBy: "default"))
        XCTAssertEqual(decided(refund(type: nil, purchasedHoursAgo: 30)), "default", "an unknown purchase matches no product type")
        XCTAssertEqual(
            policy.decide(refund("LEGAL", override: "ALWAYS_DECLINE")), RefundDecision(preference: .decline, decidedBy: "override"))
        XCTAssertEqual(policy.decide(refund("LEGAL", override: "NO_PREFERENCE")).preference, .none)
        XCTAssertEqual(policy.decide(refund(override: "ALWAYS_GRANT")).preference, .grantFull)
    }

    func testApplesRules() throws {
        let prorated = RefundDecision(preference: .grantProrated, decidedBy: "rule p")
        XCTAssertNil(RefundAnswer.apple(prorated, refund(), consent: false), "no consent, no answer")
        let used = try XCTUnwrap(RefundAnswer.apple(prorated, refund(usage: [usage(consumed: 25.5)]), consent: true))
        XCTAssertEqual(
            used.body,
            [
                "customerConsented": true, "deliveryStatus": "DELIVERED", "sampleContentProvided": false, "consumptionPercentage": 25_500,
                "refundPreference": "GRANT_PRORATED",
            ])
        let whole = try XCTUnwrap(RefundAnswer.apple(prorated, refund(usage: [usage(consumed: 100)]), consent: true))
        XCTAssertNil(whole.body["refundPreference"], "GRANT_PRORATED needs a share strictly between 0 and 100 %")
        XCTAssert(whole.decidedBy.contains("no preference sent"), whole.decidedBy)
        let unknown = try XCTUnwrap(RefundAnswer.apple(prorated, refund(), consent: true))
        XCTAssertNil(unknown.body["refundPreference"], "no consumption known: no prorated preference")
        let subscription = try XCTUnwrap(
            RefundAnswer.apple(prorated, refund(type: "subscription", usage: [usage(consumed: 40)]), consent: true))
        XCTAssertNil(subscription.body["consumptionPercentage"], "never for an auto-renewable subscription")
        XCTAssertEqual(subscription.body["refundPreference"], "GRANT_PRORATED")
        let undelivered = try XCTUnwrap(
            RefundAnswer.apple(
                RefundDecision(preference: .none, decidedBy: "default"),
                refund(usage: [usage(consumed: 70), usage(delivered: false, reason: "QUALITY_ISSUE")]), consent: true))
        XCTAssertEqual(undelivered.body["deliveryStatus"], "UNDELIVERED_QUALITY_ISSUE")
        XCTAssertEqual(undelivered.body["consumptionPercentage"], 0, "0 when not delivered")
        XCTAssertNil(undelivered.body["refundPreference"])
    }

    func testGooglesRules() {
        let events = [UsageRecord.Event(at: 1_796_119_200_000, description: String(repeating: "x", count: 6000))]
        let full = RefundAnswer.google(
            RefundDecision(preference: .grantProrated, decidedBy: "r"),
            refund(usage: [usage(consumed: 10, events: events)], store: "play_store"),
            consent: true)
        XCTAssertEqual(full["refundPreference"], "APPROVE")
        XCTAssertEqual(full["pendingRefundToken"], "prt-1")
        XCTAssertEqual(full["consumptionPercentageMilliunits"], 10_000)
        let event = full["consumptionUsageEvents"]?.arrayValue?.first
        XCTAssertEqual(event?["consumptionItemDescription"]?.stringValue?.count, 5000, "cut to Google's limit")
        XCTAssertEqual(event?["consumptionTime"], "2026-12-01T10:00:00.000Z")
        XCTAssertEqual(event?["obfuscatedAccountId"], "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        let private_ = RefundAnswer.google(
            RefundDecision(preference: .none, decidedBy: "default"), refund(usage: [usage(events: events)], store: "play_store"),
            consent: false)
        XCTAssertEqual(private_["refundPreference"], "NEUTRAL")
        XCTAssertNil(private_["consumptionUsageEvents"], "no usage leaves without the customer's consent")
        XCTAssertEqual(
            RefundAnswer.google(RefundDecision(preference: .decline, decidedBy: ""), refund(), consent: true)["refundPreference"], "DECLINE"
        )
    }
}
