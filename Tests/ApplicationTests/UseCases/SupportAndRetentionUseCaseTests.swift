import AppStore
import Entitlements
import Foundation
import Instants
import JSON
import TestSupport
import XCTest

@testable import Application

/// Retention's realtime answer, introductory-offer eligibility, the figures' series and the
/// support overview, without HTTP (UseCaseFixture).
final class SupportAndRetentionUseCaseTests: XCTestCase {
    private func subscribe(_ fixture: UseCaseFixture) throws {
        let posted = try fixture.notification("n-1", type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        XCTAssertEqual(
            try fixture.answer {
                fixture.application.ingestNotification(signedPayload: posted, receivedAt: fixture.clock.now(), completion: $0)
            }, .applied)
    }

    private func retention(_ fixture: UseCaseFixture, original: String, id: String) throws -> String {
        let request = try fixture.chain.sign([
            "originalTransactionId": .string(original), "appAppleId": 1234, "productId": "pro.monthly", "userLocale": "en-US",
            "requestIdentifier": .string(id), "signedDate": .int(fixture.base + 1), "environment": "Sandbox",
        ])
        let answer = try fixture.answer {
            fixture.application.answerRetention(signedPayload: request, now: fixture.clock.now(), completion: $0)
        }
        return JSONValue.object(answer).serializedString
    }

    func testTheCancelSheetIsAnsweredByTheRuleForTheStoredSubscription() throws {
        let fixture = try UseCaseFixture()
        try subscribe(fixture)
        XCTAssert(
            try retention(fixture, original: "1000", id: "5a0c0e0a-0000-4000-8000-000000000001").contains("msg-paying"),
            "the rule for the stored subscription (not a trial)")
        let unknown = try retention(fixture, original: "9999", id: "5a0c0e0a-0000-4000-8000-000000000002")
        XCTAssert(unknown.contains("msg-stay"), "a subscription Entitle does not have: its trial cannot be judged, the default: \(unknown)")
        XCTAssertEqual(
            try fixture.store.retentionRecord(appId: "app", requestIdentifier: "5a0c0e0a-0000-4000-8000-000000000001")?.rule, "paying",
            "recorded")
    }

    func testIntroductoryOfferEligibilityIsDecidedFromTheStoredHistory() throws {
        let fixture = try UseCaseFixture()
        func eligible(_ token: String) throws -> JSONValue? {
            JSONValue.object(
                try fixture.answer {
                    fixture.services.offers.introductoryOfferEligibility(
                        IntroductoryOfferRequest(productId: "pro.monthly", appAccountToken: token), now: fixture.clock.now(),
                        completion: $0)
                })["eligible"]
        }
        XCTAssertEqual(try eligible(fixture.token), true, "no history in the group yet")
        try subscribe(fixture)
        XCTAssertEqual(try eligible(fixture.token), false, "subscribed in the group before")
        XCTAssertEqual(try eligible("0e9f2f8a-1111-4222-8333-444455556666"), true, "another customer")
    }

    func testTheSeriesAndTheOverviewFollowTheFactsAtTheServersClock() throws {
        let fixture = try UseCaseFixture()
        try subscribe(fixture)
        fixture.clock.advance(by: 3 * 86_400)
        let now = fixture.clock.milliseconds
        let day = UseCaseFixture.day
        let series = try fixture.answer {
            fixture.services.metrics.series(
                .revenue, from: (now / day - 7) * day, to: (now / day + 1) * day, interval: .day, filter: .init(environment: "Sandbox"),
                now: now, completion: $0)
        }
        XCTAssertEqual(series.buckets.count, 8)
        let revenue = series.buckets.map { bucket -> Int64 in
            if case .money(let amounts) = bucket.value { return amounts["USD"] ?? 0 }
            return 0
        }
        XCTAssertEqual(revenue.reduce(0, +), 9_990, "the purchase counted once, in milliunits")
        XCTAssertEqual(revenue.filter { $0 != 0 }.count, 1, "on its day: \(revenue)")
        let overview = JSONValue.object(try fixture.answer { fixture.services.overview.stats(now: fixture.clock.now(), completion: $0) })
        XCTAssertEqual(overview["generatedAt"]?.stringValue, Timestamps.iso(now), "generated at the server's clock: \(overview)")
    }
}
