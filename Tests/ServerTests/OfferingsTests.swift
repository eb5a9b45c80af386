import Foundation
import JSON
import Server
import TestSupport
import XCTest

/// Offerings over HTTP (docs/OFFERINGS.md): a placement's offering chosen for the customer by
/// targeting rules over what Entitle knows of them — their state from real purchases in the test
/// store, the app's version, attributes the app set — with offers the customer may not have left
/// out; and the configuration's mistakes refused.
final class OfferingsTests: TestStoreTestCase {
    override class var appSettings: String {
        #"""
        "offerings": {
          "standard": {"packages": {
              "monthly": {"appStore": {"productId": "pro.monthly", "offerId": "welcome"},
                          "googlePlay": {"productId": "pro", "basePlanId": "monthly"}},
              "annual": {"appStore": {"productId": "pro.yearly", "offerId": "winback"}}},
            "metadata": {"title": "Go Pro", "highlight": "annual"}},
          "winback": {"packages": {"annual": {"appStore": {"productId": "pro.yearly", "offerId": "winback"}}},
            "metadata": {"title": "Come back"}},
          "beta": {"packages": {"annual": {"appStore": {"productId": "pro.yearly"}}}}},
        "placements": {
          "onboarding": {"offering": "standard", "rules": [
            {"name": "subscribers", "when": {"state": ["trial", "active"]}, "offering": null},
            {"name": "lapsed", "when": {"state": "lapsed"}, "offering": "winback"},
            {"name": "beta testers", "when": {"attributes": {"cohort": ["beta", "staff"]}, "appVersionAtLeast": "2.10",
                                             "country": "de"}, "offering": "beta"}]},
          "settings": {"offering": null}},
        """#
    }

    private let client = "client_key_0123456789"

    private func offering(_ query: String) -> (Int, JSONValue) {
        call("GET", "/v1/subscribers/\(token)/offerings?\(query)", key: client)
    }

    private func packages(_ answer: JSONValue) -> [String: JSONValue] {
        var found: [String: JSONValue] = [:]
        for package in answer["offering"]?["packages"]?.arrayValue ?? [] { found[package["id"]?.stringValue ?? ""] = package }
        return found
    }

    func testTheOfferingFollowsTheCustomersStateWithOffersTheyMayHave() throws {
        let (status, fresh) = offering("placement=onboarding")
        XCTAssertEqual(status, 200, "\(fresh)")
        XCTAssertEqual(fresh["offering"]?["id"], "standard")
        XCTAssertEqual(fresh["reason"], .object(["kind": "default"]))
        XCTAssertEqual(fresh["offering"]?["metadata"]?["highlight"], "annual")
        let listed = packages(fresh)
        XCTAssertEqual(
            fresh["offering"]?["packages"]?.arrayValue?.compactMap { $0["id"]?.stringValue }, ["monthly", "annual"],
            "in the order configured")
        XCTAssertEqual(listed["monthly"]?["appStore"]?["offerIdentifier"], "pro_monthly_welcome", "an offer for anyone")
        XCTAssertEqual(listed["monthly"]?["googlePlay"]?["basePlanId"], "monthly")
        XCTAssertEqual(listed["annual"]?["appStore"]?["productId"], "pro.yearly")
        XCTAssertNil(listed["annual"]?["appStore"]?["offerId"], "a win-back offer is not listed to a customer who never subscribed")

        let original = try buy()
        let (_, inTrial) = offering("placement=onboarding")
        XCTAssertEqual(inTrial["offering"], .null, "no paywall for a customer in a trial")
        XCTAssertEqual(inTrial["reason"], .object(["kind": "none", "rule": "subscribers"]))

        XCTAssertEqual(act(original, "cancel").0, 200)
        _ = advance("P2M")
        let (_, lapsed) = offering("placement=onboarding")
        XCTAssertEqual(lapsed["offering"]?["id"], "winback")
        XCTAssertEqual(lapsed["reason"], .object(["kind": "rule", "rule": "lapsed"]))
        XCTAssertEqual(packages(lapsed)["annual"]?["appStore"]?["offerIdentifier"], "pro_yearly_winback", "now the offer is theirs")
        let (_, standardForLapsed) = call("GET", "/v1/offerings", key: admin)
        XCTAssertNotNil(standardForLapsed["offerings"]?["standard"]?["packages"], "the configured offerings, for admins")
    }

    func testAttributesAndTheDeviceChooseTheRule() throws {
        XCTAssertEqual(
            call("POST", "/v1/subscribers/\(token)/attributes", key: client, ["attributes": .object(["cohort": "beta"])]).1,
            .object(["attributes": .object(["cohort": "beta"])]))
        XCTAssertEqual(offering("placement=onboarding&appVersion=2.10.1&country=DE").1["offering"]?["id"], "beta")
        XCTAssertEqual(offering("placement=onboarding&appVersion=2.10.1&country=DE").1["reason"]?["rule"], "beta testers")
        XCTAssertEqual(offering("placement=onboarding&appVersion=2.9&country=DE").1["offering"]?["id"], "standard", "2.9 is before 2.10")
        XCTAssertEqual(offering("placement=onboarding&appVersion=2.10&country=FR").1["offering"]?["id"], "standard")
        XCTAssertEqual(offering("placement=onboarding&country=DE").1["offering"]?["id"], "standard", "no version: not at least 2.10")

        let (removed, after) = call(
            "POST", "/v1/subscribers/\(token)/attributes", key: client, ["attributes": .object(["cohort": .null, "plan": "family"])])
        XCTAssertEqual(removed, 200, "\(after)")
        XCTAssertEqual(after, .object(["attributes": .object(["plan": "family"])]))
        XCTAssertEqual(offering("placement=onboarding&appVersion=3&country=de").1["offering"]?["id"], "standard")

        var many = JSONObject()
        for index in 0..<50 { many["a\(index)"] = "x" }
        let (tooMany, refusal) = call("POST", "/v1/subscribers/\(token)/attributes", key: client, ["attributes": .object(many)])
        XCTAssertEqual(tooMany, 422, "51 with the one kept")
        XCTAssertEqual(refusal["error"]?["code"], "TOO_MANY_ATTRIBUTES")
        let badName = call("POST", "/v1/subscribers/\(token)/attributes", key: client, ["attributes": .object(["no spaces": "x"])])
        XCTAssertEqual(badName.0, 400)
        let long = String(repeating: "x", count: 501)
        XCTAssertEqual(
            call("POST", "/v1/subscribers/\(token)/attributes", key: client, ["attributes": .object(["note": .string(long)])]).0, 400)
        XCTAssertEqual(call("POST", "/v1/subscribers/\(token)/attributes", key: client, ["attributes": .object(["n": 1])]).0, 400)
    }

    func testPlacementsThatShowNothingOrDoNotExist() throws {
        XCTAssertEqual(
            offering("placement=settings").1, .object(["placement": "settings", "offering": .null, "reason": .object(["kind": "none"])]))
        let (unknown, answer) = offering("placement=checkout")
        XCTAssertEqual(unknown, 404)
        XCTAssertEqual(answer["error"]?["code"], "UNKNOWN_PLACEMENT")
        XCTAssertEqual(call("GET", "/v1/subscribers/\(token)/offerings", key: client).0, 400, "a placement is required")
        XCTAssertEqual(offering("placement=onboarding&store=windows").0, 400)
        XCTAssertEqual(offering("placement=onboarding&environment=Production").0, 400, "not enabled")
        XCTAssertEqual(call("GET", "/v1/subscribers/not-a-token/offerings?placement=onboarding", key: client).0, 400)
        XCTAssertEqual(call("GET", "/v1/offerings", key: client).0, 403, "the configuration is for admins")
    }

    /// SIGHUP (`EntitleServer.reload`) takes the offerings and placements the file says now; a
    /// file with a mistake changes nothing.
    func testAReloadSellsWhatTheConfigurationSaysNow() throws {
        let file = folder.appendingPathComponent("entitle.json")
        let original = try String(contentsOf: file, encoding: .utf8)
        try writeFile(
            file, original.replacingOccurrences(of: #""settings": {"offering": null}"#, with: #""settings": {"offering": "beta"}"#))
        entitle.reload()
        XCTAssertEqual(offering("placement=settings").1["offering"]?["id"], "beta", "the new placement's offering")

        try writeFile(
            file, original.replacingOccurrences(of: #""settings": {"offering": null}"#, with: #""settings": {"offering": "gone"}"#))
        entitle.reload()
        XCTAssertEqual(offering("placement=settings").1["offering"]?["id"], "beta", "a configuration with a mistake changes nothing")
    }
}
