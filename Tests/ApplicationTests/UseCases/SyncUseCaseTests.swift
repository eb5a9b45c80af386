import AppStore
import Entitlements
import Foundation
import Instants
import JSON
import Synchronization
import XCTest

@testable import Application

/// Sync and back-fill without HTTP: what the App Store Server API port answers (signed by the
/// chain the app trusts) is verified and stored through the same writer as a notification.
final class SyncUseCaseTests: XCTestCase {
    func testASyncStoresWhatAppleAnswersAndReadsTheSubscriber() async throws {
        let fixture = try UseCaseFixture()
        let transaction = try fixture.transaction()
        let renewal = try fixture.renewal()
        fixture.apple.answers.withLock {
            $0.statuses = [
                .object([
                    "subscriptionGroupIdentifier": "G1",
                    "lastTransactions": .array([
                        .object([
                            "originalTransactionId": "1000", "status": 1, "signedTransactionInfo": .string(transaction),
                            "signedRenewalInfo": .string(renewal),
                        ])
                    ]),
                ])
            ]
            $0.history = [transaction]
        }
        let sync = try XCTUnwrap(fixture.services.sync)
        let synced = try await sync.syncTransactionAndRead("1000")
        XCTAssertEqual(synced.report.environment, .sandbox)
        XCTAssertEqual(synced.report.failures.count, 0, "\(synced.report.failures)")
        XCTAssertGreaterThan(synced.report.stored, 0)
        XCTAssertEqual(JSONValue.object(synced.subscriber ?? [:])["entitlements"]?["pro"]?["isActive"], true)
        XCTAssertEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], true, "stored, not only answered")
    }

    func testABackfillAppliesMissedNotificationsOnce() async throws {
        let fixture = try UseCaseFixture()
        let missed = try fixture.notification("n-missed", type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        fixture.apple.answers.withLock { $0.notifications = [missed] }
        let sync = try XCTUnwrap(fixture.services.sync)
        let now = fixture.clock.milliseconds
        let first = try await sync.backfill(start: now - 86_400_000, end: now)
        XCTAssertEqual([first.stored, first.duplicates], [1, 0])
        XCTAssertEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["isActive"], true)
        let again = try await sync.backfill(start: now - 86_400_000, end: now)
        XCTAssertEqual([again.stored, again.duplicates], [0, 1], "a notification already stored is not applied twice")
    }
}
