import Entitlements
import Foundation
import Instants
import JSON
import TestSupport
import XCTest

@testable import Application

/// Support's refund evidence without HTTP: usage recorded for a purchase, a customer's override
/// (which then decides the answer to Apple), and the requests listed with the time left.
final class RefundEvidenceUseCaseTests: XCTestCase {
    func testUsageAndAnOverrideAreStoredAndTheOverrideDecidesTheAnswer() throws {
        let fixture = try UseCaseFixture()
        let refunds = fixture.services.refunds
        let usage = JSONValue.object(
            try fixture.answer {
                refunds.recordUsage(
                    appAccountToken: fixture.token,
                    body: ["transactionId": "t-r-1", "consumedPercent": 40, "delivered": true], by: fixture.support,
                    now: fixture.clock.now(), completion: $0)
            })
        XCTAssertEqual(usage["usage"]?.arrayValue?.first?["transactionId"], "t-r-1", "\(usage)")
        XCTAssertThrowsError(
            try fixture.answer {
                refunds.recordUsage(
                    appAccountToken: fixture.token, body: ["transactionId": "t-r-1", "consumedPercent": 140], by: fixture.support,
                    now: fixture.clock.now(), completion: $0)
            }, "a share past 100 is refused")

        XCTAssertThrowsError(
            try fixture.answer {
                refunds.setOverride(
                    appAccountToken: fixture.token, override: "SOMETIMES", reason: nil, by: fixture.support, now: fixture.clock.now(),
                    completion: $0)
            }
        ) { XCTAssertEqual(($0 as? ServiceError)?.httpStatus, 400) }
        let set = JSONValue.object(
            try fixture.answer {
                refunds.setOverride(
                    appAccountToken: fixture.token, override: "ALWAYS_DECLINE", reason: "abuses refunds", by: fixture.support,
                    now: fixture.clock.now(), completion: $0)
            })
        XCTAssertEqual(set["refundOverride"]?["override"], "ALWAYS_DECLINE")
        XCTAssertEqual(set["refundOverride"]?["setBy"], "Dana (support)", "who set it, by the key's name")
        let read = JSONValue.object(try fixture.answer { refunds.override(appAccountToken: fixture.token, completion: $0) })
        XCTAssertEqual(read["refundOverride"]?["reason"], "abuses refunds")

        // A request for a reason the rules would not decline is declined by the override.
        let requestedAt = fixture.clock.milliseconds
        var batch = FactBatch(appId: "app", environment: "Sandbox")
        batch.refundRequest = RefundRequest(
            id: "r-1", store: "app_store", environment: "Sandbox", appAccountToken: fixture.token, transactionId: "t-r-1",
            originalTransactionId: "t-r-1", reason: "OTHER", requestedAt: requestedAt, deadline: requestedAt + RefundRequest.appleWindow)
        XCTAssertEqual(try fixture.store.apply(batch), .applied)
        fixture.services.refundReviews.kick()
        let deadline = Date().addingTimeInterval(10)
        while fixture.apple.consumption.all.isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(fixture.apple.consumption.all.first?.1["refundPreference"], "DECLINE")

        fixture.clock.advance(by: 3600)
        let listed = JSONValue.object(try fixture.answer { refunds.requests(limit: 10, now: fixture.clock.now(), completion: $0) })
        let request = listed["refundRequests"]?.arrayValue?.first
        XCTAssertEqual(request?["id"], "r-1", "\(listed)")
        XCTAssertEqual(request?["decidedBy"], "override")
    }
}
