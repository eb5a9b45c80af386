import Crypto
import Entitlements
import Foundation
import JSON
import TestSupport
import XCTest

@testable import Application

/// `offerings` and `placements` read from a configuration, and each mistake refused at its path:
/// a product or offer not in the catalog, a placement naming no offering, a misspelt condition
/// (which would otherwise match everyone).
final class OfferingsConfigurationTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory("entitle-offerings")
        try writeFile(folder.appendingPathComponent("key.p8"), try P256.Signing.PrivateKey().pemRepresentation)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    private func load(_ members: String) -> Result<EntitleConfiguration, ConfigurationError> {
        let text = """
            {"apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
               "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
               "apiKeys": [{"key": "server_key_0123456789", "role": "server"}],
               "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"],
                                            "googlePlay": {"productId": "pro", "basePlanId": "monthly"}}},
               "offers": {"welcome": {"productId": "pro.monthly", "offerIdentifier": "w", "eligibility": "any"}},
               \(members)}]}
            """
        let path = folder.appendingPathComponent("entitle.json").path
        return Result { () throws(ConfigurationError) in try ConfigurationLoader.load(text: Array(text.utf8), path: path, environment: [:])
        }
    }

    private func problems(_ members: String) -> [String] {
        guard case .failure(let error) = load(members) else { return [] }
        let prefix = folder.appendingPathComponent("entitle.json").path + ": "
        return error.problems.map { $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0 }
    }

    func testOfferingsAndPlacementsAreRead() throws {
        let app = try load(
            #"""
            "offerings": {"main": {"packages": {
                "m": {"appStore": {"productId": "pro.monthly", "offerId": "welcome"}, "googlePlay": {"productId": "pro", "basePlanId": "monthly"}},
                "y": {"appStore": {"productId": "pro.monthly"}}}, "metadata": {"title": "Pro"}}},
            "placements": {"onboarding": {"offering": "main", "rules": [
                {"when": {"state": ["lapsed", "billingRetry"], "country": "de", "daysSinceFirstSeenAtLeast": 7}, "offering": null}]},
              "settings": {"offering": null}}
            """#
        ).get().apps[0]
        XCTAssertEqual(app.offerings["main"]?.packages.map(\.id), ["m", "y"])
        XCTAssertEqual(app.offerings["main"]?.packages[0].appStore?.offerId, "welcome")
        XCTAssertEqual(app.offerings["main"]?.packages[0].googlePlay?.basePlanId, "monthly")
        XCTAssertEqual(app.offerings["main"]?.metadata["title"], "Pro")
        let rule = try XCTUnwrap(app.placements["onboarding"]?.rules.first)
        XCTAssertEqual(rule.name, "rules[0]")
        XCTAssertNil(rule.offering)
        XCTAssertEqual(rule.when.states, [.lapsed, .billingRetry])
        XCTAssertEqual(rule.when.countries, ["DE"])
        XCTAssertEqual(rule.when.daysSinceFirstSeenAtLeast, 7)
        XCTAssertEqual(app.placements["settings"]?.offering, nil)
    }

    func testMistakesAreRefusedAtTheirPath() {
        XCTAssertEqual(
            problems(#""offerings": {"main": {"packages": {"m": {"appStore": {"productId": "pro.yearly"}}}}}"#),
            [#"apps[0].offerings.main.packages.m.appStore.productId: "pro.yearly" is not in the app's products"#])
        XCTAssertEqual(
            problems(#""offerings": {"main": {"packages": {"m": {"appStore": {"productId": "pro.monthly", "offerId": "nope"}}}}}"#),
            [#"apps[0].offerings.main.packages.m.appStore.offerId: "nope" is not an offer of pro.monthly in the app's offers"#])
        XCTAssertEqual(
            problems(#""offerings": {"main": {"packages": {"m": {"googlePlay": {"productId": "pro", "basePlanId": "yearly"}}}}}"#),
            ["apps[0].offerings.main.packages.m.googlePlay: no product of the app's catalog is pro (yearly) on Google Play"])
        XCTAssertEqual(
            problems(#""offerings": {"main": {"packages": {"m": {}}}}"#),
            [#"apps[0].offerings.main.packages.m: a package is sold on "appStore", "googlePlay" or both"#])
        XCTAssertEqual(problems(#""placements": {"p": {"offering": "main"}}"#).count, 1, "no such offering")
        XCTAssertEqual(
            problems(#""placements": {"p": {"rules": []}}"#),
            [#"apps[0].placements.p: "offering" is required: an offering's id, or null to show none"#])
        XCTAssertEqual(
            problems(#""placements": {"p": {"offering": null, "rules": [{"when": {"stat": "lapsed"}, "offering": null}]}}"#).count, 1)
        XCTAssertEqual(
            problems(#""placements": {"p": {"offering": null, "rules": [{"when": {"state": "churned"}, "offering": null}]}}"#),
            [#"apps[0].placements.p.rules[0].when.state: unknown value "churned" (active, billingRetry, lapsed, neverSubscribed, trial)"#])
        let big = String(repeating: "x", count: 5000)
        XCTAssertEqual(
            problems(
                #""offerings": {"main": {"packages": {"m": {"appStore": {"productId": "pro.monthly"}}}, "metadata": {"t": "\#(big)"}}}"#),
            ["apps[0].offerings.main.metadata: at most 4096 bytes of JSON"])
    }
}
