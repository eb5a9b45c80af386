import Entitlements
import XCTest

/// What an attempt makes of its delivery's row is decided here, once; the stores write it.
final class DeliverySettlementTests: XCTestCase {
    func testEachOutcomeSettlesItsRow() {
        XCTAssertEqual(
            DeliveryOutcome(id: "1", result: .delivered(at: 10), httpStatus: 202, error: "slow").settlement,
            .init(status: .delivered, nextAt: 10, deliveredAt: 10, lastStatus: 202, lastError: nil),
            "delivered: no error stays, whatever the status (one statement settles a round's 200s and 204s the same way)")
        XCTAssertEqual(
            DeliveryOutcome(id: "1", result: .retry(at: 20), httpStatus: 503, error: "HTTP 503").settlement,
            .init(status: .pending, nextAt: 20, deliveredAt: nil, lastStatus: 503, lastError: "HTTP 503"))
        XCTAssertEqual(
            DeliveryOutcome(id: "1", result: .failed(at: 30), httpStatus: nil, error: "connection refused").settlement,
            .init(status: .failed, nextAt: 30, deliveredAt: nil, lastStatus: nil, lastError: "connection refused"))
    }
}
