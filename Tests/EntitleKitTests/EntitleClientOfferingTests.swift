import EntitleKit
import Foundation
import JSON
import XCTest

/// EntitleKit's offerings against a real server: the placement's offering as typed values, the
/// metadata as the app's JSON, the reason; attributes the app sets choosing a rule; a purchase
/// changing what is shown; an answer changed on the way refused.
final class EntitleClientOfferingTests: EntitleKitTestCase {
    func testTheOfferingFollowsAttributesAndPurchases() async throws {
        let entitle = try client()
        let device = EntitleClient.Device(country: "DE", platform: "iOS", appVersion: "2.0 beta+1")
        let first = try await entitle.offerings(placement: "onboarding", device: device)
        XCTAssertEqual(first.placement, "onboarding")
        XCTAssertEqual(first.reason.kind, "default")
        let offering = try XCTUnwrap(first.offering)
        XCTAssertEqual(offering.packages.map(\.id), ["monthly", "annual"])
        XCTAssertEqual(offering.packages[0].appStore?.productId, "pro.monthly")
        XCTAssertNil(offering.packages[0].appStore?.offerId, "the win-back offer is for lapsed customers only")
        let metadata = try JSONSerialization.jsonObject(with: offering.metadata) as? [String: Any]
        XCTAssertEqual(metadata?["title"] as? String, "Go Pro")
        XCTAssertEqual(metadata?["order"] as? [Int], [2, 1])

        let attributes = try await entitle.setAttributes(["cohort": "beta", "unused": nil])
        XCTAssertEqual(attributes, ["cohort": "beta"])
        let beta = try await entitle.offerings(placement: "onboarding", device: device)
        XCTAssertEqual(beta.reason.kind, "rule", "the query, spaces and all, is the signed one")
        XCTAssertEqual(beta.reason.rule, "beta")

        let store = purchaser()
        guard case .purchased = try await entitle.purchase("pro.monthly", using: store) else { return XCTFail("not bought") }
        let subscribed = try await entitle.offerings(placement: "onboarding", device: device)
        XCTAssertNil(subscribed.offering, "no paywall for a subscriber")
        XCTAssertEqual(subscribed.reason.kind, "none")
        XCTAssertEqual(subscribed.reason.rule, "subscribers")
    }

    func testAnUnknownPlacementIsEntitlesErrorAndAChangedAnswerIsRefused() async throws {
        do {
            _ = try await client().offerings(placement: "checkout")
            XCTFail("an unknown placement answered")
        } catch let error as EntitleError {
            XCTAssertEqual(error.code, "UNKNOWN_PLACEMENT")
            XCTAssertEqual(error.status, 404)
        }
        let flipping = try startProxy("flip")
        do {
            _ = try await client(port: flipping).offerings(placement: "onboarding")
            XCTFail("a changed answer was trusted")
        } catch is UntrustedAnswer {}
    }

    /// The guide's snippet (docs/SWIFT_CLIENT.md, "Offerings") as written, the test store's
    /// purchaser standing in for StoreKit's.
    func testTheGuidesOfferingsSnippet() async throws {
        let entitle = try client()
        let store = purchaser()
        let shown = try await entitle.offerings(
            placement: "onboarding",
            device: EntitleClient.Device(country: "DE", appVersion: "2.1"))  // store defaults to "appStore"
        if let offering = shown.offering, let package = offering.packages.first, let product = package.appStore {
            _ = try await entitle.purchase(product.productId, offer: product.offerId, using: store)
        }
        try await entitle.setAttributes(["cohort": "beta", "referrer": nil])  // nil removes one
        let entitled = try await entitle.customer().customer.isEntitled(to: "pro")
        XCTAssertTrue(entitled, "the first package bought")
    }
}

/// An experiment seen through EntitleKit: the variant's offering, and the paywall's first showing
/// counted for the experiment.
final class EntitleClientExperimentTests: EntitleKitTestCase {
    func testThePaywallShownEnrollsTheCustomer() async throws {
        let made = admin(
            "POST", "/v1/experiments",
            [
                "id": "e1", "placement": "onboarding",
                "variants": .array([.object(["id": "a", "offering": "main"]), .object(["id": "b", "offering": "main"])]),
            ])
        XCTAssertEqual(made.0, 200, "\(made.1)")
        XCTAssertEqual(admin("POST", "/v1/experiments/e1/start").0, 200)
        let entitle = try client()
        let shown = try await entitle.offerings(placement: "onboarding")
        XCTAssertEqual(shown.reason.kind, "experiment")
        let variant = try XCTUnwrap(shown.reason.variant)
        let counted = try await entitle.paywallShown(placement: "onboarding", offering: try XCTUnwrap(shown.offering?.id))
        XCTAssertEqual(counted?.experiment, "e1")
        XCTAssertEqual(counted?.variant, variant)
        let listed = admin("GET", "/v1/experiments").1["experiments"]?.arrayValue?.first
        XCTAssertEqual(listed?["enrolled"]?[variant], 1)
    }
}
