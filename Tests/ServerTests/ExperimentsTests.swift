import Foundation
import JSON
import TestSupport
import XCTest

/// Experiments over HTTP (docs/EXPERIMENTS.md): made, started, drawn deterministically, enrolled
/// only when the app reports the paywall shown (once, with an `EXPERIMENT_ENROLLED` event), the
/// customer left to the rules when they leave the audience, overlapping experiments refused, and
/// a stopped experiment's shipped variant made the placement's offering.
final class ExperimentsTests: TestStoreTestCase {
    override class var appSettings: String {
        #"""
        "offerings": {
          "standard": {"packages": {"monthly": {"appStore": {"productId": "pro.monthly"}}}},
          "trial": {"packages": {"monthly": {"appStore": {"productId": "pro.monthly", "offerId": "welcome"}}}},
          "annual": {"packages": {"annual": {"appStore": {"productId": "pro.yearly"}}}}},
        "placements": {
          "onboarding": {"offering": "standard", "rules": [{"name": "subscribers", "when": {"state": "trial"}, "offering": null}]}},
        """#
    }

    private let client = "client_key_0123456789"
    private let server = "server_key_0123456789"

    private func experiment(_ id: String = "paywall-1", enrollment: Double = 1, audience: JSONValue? = nil) -> (Int, JSONValue) {
        var body: JSONObject = [
            "id": .string(id), "placement": "onboarding", "enrollment": .double(enrollment),
            "variants": .array([.object(["id": "control", "offering": "standard"]), .object(["id": "trial", "offering": "trial"])]),
        ]
        if let audience { body["audience"] = audience }
        return call("POST", "/v1/experiments", body)
    }

    private func shown(_ offering: String, token: String? = nil, type: String = "shown") -> (Int, JSONValue) {
        call(
            "POST", "/v1/subscribers/\(token ?? self.token)/paywall-events", key: client,
            ["placement": "onboarding", "offering": .string(offering), "type": .string(type)])
    }

    private func offering(_ token: String? = nil) -> JSONValue {
        call("GET", "/v1/subscribers/\(token ?? self.token)/offerings?placement=onboarding", key: client).1
    }

    private func enrolledEvents() -> [JSONValue] {
        (call("GET", "/v1/events?limit=1000", key: server).1["events"]?.arrayValue ?? []).filter { $0["type"] == "EXPERIMENT_ENROLLED" }
    }

    func testACustomerIsDrawnOnReadAndEnrolledWhenThePaywallIsShown() throws {
        let (made, draft) = experiment()
        XCTAssertEqual(made, 200, "\(draft)")
        XCTAssertEqual(draft["experiment"]?["status"], "draft")
        XCTAssertEqual(offering()["reason"]?["kind"], "default", "a draft shows nothing")
        XCTAssertEqual(call("POST", "/v1/experiments/paywall-1/start").0, 200)

        let first = offering()
        XCTAssertEqual(first["reason"]?["kind"], "experiment")
        XCTAssertEqual(first["reason"]?["experiment"], "paywall-1")
        let variant = try XCTUnwrap(first["reason"]?["variant"]?.stringValue)
        let shownOffering = try XCTUnwrap(first["offering"]?["id"]?.stringValue)
        XCTAssertEqual(shownOffering, variant == "control" ? "standard" : "trial")
        XCTAssertEqual(offering()["reason"], first["reason"], "the same draw every read")
        XCTAssertEqual(enrolledEvents(), [], "reading the offering enrolls nobody")
        let listed = call("GET", "/v1/experiments").1["experiments"]?.arrayValue?.first
        XCTAssertEqual(listed?["enrolled"]?[variant], 0)

        // Another offering shown (say, an old build's): the report is kept, nobody is enrolled.
        XCTAssertEqual(shown("annual").1["experiment"], nil)
        XCTAssertEqual(enrolledEvents(), [])
        let (status, report) = shown(shownOffering)
        XCTAssertEqual(status, 200, "\(report)")
        XCTAssertEqual(report["experiment"]?["variant"]?.stringValue, variant)
        XCTAssertEqual(shown(shownOffering).0, 200)
        XCTAssertEqual(shown(shownOffering, type: "purchaseStarted").0, 200)
        let events = enrolledEvents()
        XCTAssertEqual(events.count, 1, "enrolled once: \(events)")
        XCTAssertEqual(events.first?["experiment"]?["variant"]?.stringValue, variant)
        XCTAssertEqual(events.first?["experiment"]?["offering"]?.stringValue, shownOffering)
        XCTAssertEqual(events.first?["appAccountToken"]?.stringValue, token)
        XCTAssertEqual(call("GET", "/v1/experiments").1["experiments"]?.arrayValue?.first?["enrolled"]?[variant], 1)

        let subscriber = call("GET", "/v1/subscribers/\(token)", key: client)
        XCTAssertEqual(subscriber.0, 200, "enrolled before buying anything: known")
        XCTAssertEqual(subscriber.1["subscriber"]?["experiments"]?.arrayValue?.first?["variant"]?.stringValue, variant)
        XCTAssertEqual(events.first?["subscriber"]?["experiments"]?.arrayValue?.count, 1)

        // Subscribed: out of the audience (new customers by default), the rules decide again.
        _ = try buy()
        let trial = (call("GET", "/v1/events?limit=1000", key: server).1["events"]?.arrayValue ?? []).first {
            $0["type"] == "TRIAL_STARTED"
        }
        XCTAssertEqual(
            trial?["subscriber"]?["experiments"]?.arrayValue?.first?["id"], "paywall-1", "every later event of the customer carries it")
        XCTAssertEqual(offering()["reason"], .object(["kind": "none", "rule": "subscribers"]))
        XCTAssertEqual(call("GET", "/v1/experiments").1["experiments"]?.arrayValue?.first?["enrolled"]?[variant], 1, "kept for the results")

        // Shipped: its offering is the placement's own for everyone the rules leave to it.
        let (shipped, answer) = call("POST", "/v1/experiments/paywall-1/ship", ["variant": "trial"])
        XCTAssertEqual(shipped, 200, "\(answer)")
        XCTAssertEqual(answer["experiment"]?["status"], "stopped")
        let other = "0d8b3c42-2f7e-4a55-9a70-5a3b5d0e9f11"
        XCTAssertEqual(offering(other)["offering"]?["id"], "trial")
        XCTAssertEqual(offering(other)["reason"], .object(["kind": "shipped", "experiment": "paywall-1"]))
        XCTAssertEqual(call("POST", "/v1/experiments/paywall-1/start").0, 409, "stopping is final")
        XCTAssertEqual(call("POST", "/v1/experiments/paywall-1/stop").0, 409)
    }

    func testOverlapsAndMistakesAreRefused() throws {
        XCTAssertEqual(experiment("half", enrollment: 0.5).0, 200)
        XCTAssertEqual(call("POST", "/v1/experiments/half/start").0, 200)
        XCTAssertEqual(experiment("more", enrollment: 0.6).0, 200)
        let (overlap, refusal) = call("POST", "/v1/experiments/more/start")
        XCTAssertEqual(overlap, 409)
        XCTAssertEqual(refusal["error"]?["code"], "EXPERIMENTS_OVERLAP")
        XCTAssertEqual(experiment("rest", enrollment: 0.5).0, 200)
        XCTAssertEqual(call("POST", "/v1/experiments/rest/start").0, 200, "together 100 %")
        XCTAssertEqual(experiment("half").0, 409, "the id is taken")

        XCTAssertEqual(call("POST", "/v1/experiments", ["id": "x", "placement": "nowhere", "variants": .array([])]).0, 400)
        XCTAssertEqual(
            call(
                "POST", "/v1/experiments",
                [
                    "id": "x", "placement": "onboarding",
                    "variants": .array([.object(["id": "a", "offering": "standard"]), .object(["id": "b", "offering": "gone"])]),
                ]
            ).0, 400)
        XCTAssertEqual(
            call(
                "POST", "/v1/experiments",
                [
                    "id": "x", "placement": "onboarding",
                    "variants": .array([
                        .object(["id": "a", "offering": "standard", "weight": .double(0.9)]),
                        .object(["id": "b", "offering": "trial", "weight": .double(0.9)]),
                    ]),
                ]
            ).0, 400, "weights sum to 1")
        XCTAssertEqual(experiment("x", audience: .object(["stat": "lapsed"])).0, 400, "a misspelt audience")
        XCTAssertEqual(experiment("y", enrollment: 0).0, 400)
        XCTAssertEqual(call("POST", "/v1/experiments/nope/start").0, 404)
        XCTAssertEqual(call("POST", "/v1/experiments/half/pause").0, 404)
        XCTAssertEqual(call("POST", "/v1/experiments/half/ship", ["variant": "nope"]).0, 400)
        XCTAssertEqual(call("GET", "/v1/experiments", key: client).0, 403, "for admins")
        XCTAssertEqual(shown("standard", type: "clicked").0, 400)
        XCTAssertEqual(shown("gone").0, 400)
    }
}
