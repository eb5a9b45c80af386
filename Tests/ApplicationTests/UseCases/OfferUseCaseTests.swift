import AppStore
import Entitlements
import Foundation
import Instants
import JSON
import XCTest

@testable import Application

/// Signing offers and answering eligibility without HTTP: decided from the stored history at the
/// server's clock, never a fallback to another offer.
final class OfferUseCaseTests: XCTestCase {
    private func subscribe(_ fixture: UseCaseFixture) throws {
        let posted = try fixture.notification("n-1", type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        _ = try fixture.answer {
            fixture.application.ingestNotification(signedPayload: posted, receivedAt: fixture.clock.now(), completion: $0)
        }
    }

    private func sign(_ fixture: UseCaseFixture, offer: String) throws -> JSONObject {
        try fixture.answer {
            fixture.services.offers.signPromotionalOffer(
                PromotionalOfferRequest(productId: "pro.monthly", offerId: offer, appAccountToken: fixture.token), now: fixture.clock.now(),
                completion: $0)
        }
    }

    func testAWinBackOfferIsSignedOnlyOnceTheSubscriptionHasLapsed() throws {
        let fixture = try UseCaseFixture()
        try subscribe(fixture)
        XCTAssertThrowsError(try sign(fixture, offer: "comeback"), "the customer is subscribed: not lapsed") { error in
            XCTAssertEqual((error as? ServiceError)?.code, "OFFER_UNAVAILABLE", "\(error)")
        }
        fixture.clock.advance(by: 40 * 86_400)
        let signed = JSONValue.object(try sign(fixture, offer: "comeback"))
        XCTAssertEqual(signed["offerIdentifier"], "comeback", "\(signed)")
        XCTAssertNotNil(signed["signature"]?.stringValue)
        XCTAssertEqual(
            signed["timestamp"]?.int64Value, fixture.clock.milliseconds, "signed at the server's clock, which Apple checks within a day")
        XCTAssertThrowsError(try sign(fixture, offer: "not-in-the-catalog")) { error in
            XCTAssertEqual((error as? ServiceError)?.code, "OFFER_UNAVAILABLE", "never another offer instead")
        }
    }
}
