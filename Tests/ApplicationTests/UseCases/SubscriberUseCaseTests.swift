import AppStore
import Entitlements
import Foundation
import Instants
import JSON
import XCTest

@testable import Application

/// Ingestion, the subscriber answer, grants, the figures, the history and search: each use case
/// called as the HTTP adapters call it, with no HTTP (UseCaseFixture).
final class SubscriberUseCaseTests: XCTestCase {
    func testANotificationIsVerifiedStoredOnceAndReadAsTheSubscriber() throws {
        let fixture = try UseCaseFixture()
        let posted = try fixture.notification("n-1", type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        let outcome = try fixture.answer {
            fixture.application.ingestNotification(signedPayload: posted, receivedAt: fixture.clock.now(), completion: $0)
        }
        XCTAssertEqual(outcome, .applied)
        XCTAssertEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], true)
        let again = try fixture.answer {
            fixture.application.ingestNotification(signedPayload: posted, receivedAt: fixture.clock.now(), completion: $0)
        }
        XCTAssertEqual(again, .duplicate, "Apple's retry changes nothing")
        var forged = Array(try fixture.notification("n-2", type: "DID_RENEW").utf8)
        forged[forged.count - 5] ^= 1
        XCTAssertThrowsError(
            try fixture.answer {
                fixture.application.ingestNotification(
                    signedPayload: String(decoding: forged, as: UTF8.self), receivedAt: fixture.clock.now(), completion: $0)
            }, "a notification whose signature does not verify is refused")
    }

    func testATransactionFromTheAppIsStoredAndAMonthLaterHasLapsed() throws {
        let fixture = try UseCaseFixture()
        let posted = try fixture.answer {
            fixture.services.transactions.post(
                signedTransaction: try! fixture.transaction(), signedRenewalInfo: try! fixture.renewal(),
                appAccountToken: fixture.token, now: fixture.clock.now(), completion: $0)
        }
        XCTAssertEqual(JSONValue.object(posted.subscriber)["entitlements"]?["pro"]?["isActive"], true)
        fixture.clock.advance(by: 31 * 86_400)
        XCTAssertEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], false, "read at the server's clock")
    }

    func testAGrantEntitlesUntilItIsRevokedAndBothAreInTheHistory() throws {
        let fixture = try UseCaseFixture()
        let granted = try fixture.answer {
            fixture.services.grants.grant(
                appAccountToken: fixture.token, entitlement: "pro", length: .duration("P1M"), reason: "sorry for the outage",
                environment: nil, by: fixture.support, now: fixture.clock.now(), completion: $0)
        }
        let id = try XCTUnwrap(granted["id"]?.stringValue)
        XCTAssertEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["store"], "promotional")
        fixture.clock.advance(by: 86_400)
        _ = try fixture.answer {
            fixture.services.grants.revoke(
                appAccountToken: fixture.token, entitlement: "pro", grantId: id, by: fixture.support, now: fixture.clock.now(),
                completion: $0)
        }
        XCTAssertNotEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], true, "revoked")
        let history = try XCTUnwrap(
            try fixture.services.history.history(appAccountToken: fixture.token, environment: nil, now: fixture.clock.now()))
        let entries = JSONValue.object(history)["history"]?.arrayValue ?? []
        let kinds = entries.compactMap { $0["kind"]?.stringValue }
        XCTAssert(kinds.contains("grant") && kinds.contains("grantRevoked"), "\(kinds)")
        XCTAssert(entries.contains { $0["source"]?.stringValue == "support: Dana (support)" }, "who did it, by name")
    }

    func testTheFiguresAndSearchFollowTheFacts() async throws {
        let fixture = try UseCaseFixture()
        let posted = try fixture.notification("n-1", type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        _ = try fixture.answer {
            fixture.application.ingestNotification(signedPayload: posted, receivedAt: fixture.clock.now(), completion: $0)
        }
        func summary() throws -> JSONValue {
            let now = fixture.clock.milliseconds
            return .object(
                try fixture.answer {
                    fixture.services.metrics.summary(at: now, filter: .init(environment: "Sandbox"), now: now, completion: $0)
                })
        }
        let counted = try summary()
        XCTAssertEqual(
            (counted["activeSubscriptions"]?.int64Value ?? 0) + (counted["activeTrials"]?.int64Value ?? 0), 1, "\(counted)")
        fixture.clock.advance(by: 40 * 86_400)
        let later = try summary()
        XCTAssertEqual((later["activeSubscriptions"]?.int64Value ?? 0) + (later["activeTrials"]?.int64Value ?? 0), 0, "\(later)")
        for query in [fixture.token, "1000"] {
            let found = try await fixture.services.search.search(query, now: fixture.clock.now())
            let matches = JSONValue.object(found)["matches"]?.arrayValue ?? []
            XCTAssertEqual(matches.first?["appAccountToken"]?.stringValue, fixture.token, query)
        }
    }
}
