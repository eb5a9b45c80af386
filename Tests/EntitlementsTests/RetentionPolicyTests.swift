import Entitlements
import XCTest

final class RetentionPolicyTests: XCTestCase {
    /// A rule that names only the product matched a subscription Entitle had never stored, and
    /// answered it with a signed offer no eligibility rule or cooldown had judged.
    func testASubscriptionEntitleDoesNotKnowGetsNoOffer() {
        let policy = RetentionPolicy(
            defaultMessage: "msg-default",
            rules: [
                RetentionRule(
                    name: "offer", productIds: ["pro.monthly"],
                    answer: .promotionalOffer(messageIdentifier: "msg-offer", offerId: "comeback")),
                RetentionRule(name: "message", productIds: ["pro.monthly"], answer: .message(messageIdentifier: "msg-monthly")),
            ])
        let unknown = RetentionCase(
            subscription: nil, transactions: [], productId: "pro.monthly", locale: "en-US", now: 1_767_225_600_000, lastOfferAt: nil)
        let decision = policy.decide(unknown) { _ in true }
        XCTAssertEqual(decision, RetentionDecision(answer: .message(messageIdentifier: "msg-monthly"), rule: "message"))
    }
}
