import Entitlements
import XCTest

/// A promotional grant's state over time, and how it competes with purchases for an entitlement.
final class PromotionalGrantTests: XCTestCase {
    private let products = ["pro.monthly": CatalogProduct(subscriptionGroup: "G1", entitlements: ["pro"])]

    private func grant(revokedAt: Int64? = nil, expires: Int64 = 5_000) -> PromotionalGrant {
        PromotionalGrant(
            id: "g1", appAccountToken: "6b1f3c8e-2d4a-4e5b-9c7d-8e9f0a1b2c3d", environment: "Sandbox", entitlement: "pro",
            startsAt: 1_000, expiresDate: expires, reason: nil, grantedBy: "support", revokedAt: revokedAt)
    }

    /// A monthly subscription bought at 0 that expires at `expires`.
    private func subscription(expires: Int64) -> SubscriptionFacts {
        SubscriptionFacts(
            originalTransactionId: "1000", environment: "Sandbox", appAccountToken: nil,
            transactions: [
                TransactionRecord(
                    transactionId: "1000", originalTransactionId: "1000", productId: "pro.monthly", subscriptionGroupIdentifier: "G1",
                    purchaseDate: 0, expiresDate: expires, environment: "Sandbox", signedDate: 1)
            ], renewal: nil, signals: [])
    }

    private func pro(_ facts: [SubscriptionFacts], _ grants: [PromotionalGrant], at now: Int64) -> ProductGrant? {
        SubscriberEvaluation.evaluate(
            facts, now: now, environment: "Sandbox", products: products, billingRetryGrantsAccess: false, promotional: grants
        ).entitlements["pro"]
    }

    func testStateOverTime() {
        XCTAssertNil(grant().state(at: 999), "not yet given")
        XCTAssertEqual(grant().state(at: 1_000), "ACTIVE")
        XCTAssertEqual(grant().state(at: 5_000), "EXPIRED")
        XCTAssertEqual(grant(revokedAt: 2_000).state(at: 1_500), "ACTIVE", "before its revocation")
        XCTAssertEqual(grant(revokedAt: 2_000).state(at: 2_000), "REVOKED")
    }

    func testAnActiveGrantBeatsAnExpiredSubscription() {
        let answer = pro([subscription(expires: 500)], [grant()], at: 2_000)
        XCTAssertEqual(answer?.isActive, true)
        XCTAssertEqual(answer?.store, "promotional")
        XCTAssertEqual(answer?.promotional?.id, "g1")
    }

    func testTheLaterExpiryWinsAmongActiveOnes() {
        XCTAssertEqual(pro([subscription(expires: 9_000)], [grant()], at: 2_000)?.store, "app_store")
        XCTAssertEqual(pro([subscription(expires: 3_000)], [grant()], at: 2_000)?.store, "promotional")
    }

    func testAnEndedGrantYieldsToAPurchaseAndShowsAlone() {
        XCTAssertEqual(pro([subscription(expires: 500)], [grant(revokedAt: 1_500)], at: 2_000)?.store, "app_store")
        XCTAssertEqual(pro([subscription(expires: 500)], [grant()], at: 6_000)?.state, "EXPIRED")
        XCTAssertEqual(pro([subscription(expires: 500)], [grant()], at: 6_000)?.store, "app_store")
        XCTAssertEqual(pro([], [grant(revokedAt: 1_500)], at: 2_000)?.state, "REVOKED", "nothing else confers it")
        XCTAssertNil(pro([], [grant()], at: 500), "an as-of view before the grant")
    }
}
