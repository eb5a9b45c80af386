import Entitlements
import XCTest

@testable import Application

/// When a failed delivery is tried again, and when it is given up.
final class RetryScheduleTests: XCTestCase {
    private var settings: DeliverySettings {
        var settings = DeliverySettings()
        settings.firstRetrySeconds = 5
        settings.maxRetrySeconds = 3600
        settings.retryWindowSeconds = 86_400
        return settings
    }

    private func delay(_ attempts: Int, jitter: Double = 0.5) -> Int64? {
        guard
            case .retry(let at) = RetrySchedule.afterFailure(
                attempts: attempts, now: 1_000, windowStart: 0, settings: settings, jitter: jitter)
        else { return nil }
        return at - 1_000
    }

    func testDelaysStartNearFiveSecondsAndDouble() {
        XCTAssertEqual(delay(1), 5_000)
        XCTAssertEqual(delay(2), 10_000)
        XCTAssertEqual(delay(3), 20_000)
        XCTAssertEqual(delay(12), 3_600_000, "capped")
        XCTAssertEqual(delay(200), 3_600_000, "no overflow")
    }

    func testJitterScattersByAFifth() {
        XCTAssertEqual(delay(1, jitter: 0), 4_000)
        XCTAssertEqual(delay(1, jitter: 1), 6_000)
    }

    func testTheLastTryIsAtTheWindowsEndThenTheDeliveryIsDead() {
        let nearEnd = RetrySchedule.afterFailure(attempts: 9, now: 86_399_000, windowStart: 0, settings: settings, jitter: 0.5)
        XCTAssertEqual(nearEnd, .retry(at: 86_400_000))
        let over = RetrySchedule.afterFailure(attempts: 10, now: 86_400_000, windowStart: 0, settings: settings, jitter: 0.5)
        XCTAssertEqual(over, .failed(at: 86_400_000))
    }
}
