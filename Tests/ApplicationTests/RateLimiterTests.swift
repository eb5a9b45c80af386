import Application
import XCTest

/// The token buckets alone: the burst, the refill, the answer's numbers, and memory that stays
/// bounded under a flood of new callers.
final class RateLimiterTests: XCTestCase {
    func testTheBurstThenTheRate() {
        let limiter = RateLimiter<String>()
        let limit = RateLimit(perSecond: 2, burst: 3)
        XCTAssertEqual((0..<3).map { _ in limiter.take("k", limit: limit, now: 100).allowed }, [true, true, true])
        let refused = limiter.take("k", limit: limit, now: 100)
        XCTAssertFalse(refused.allowed)
        XCTAssertEqual(refused.retryAfter, 1, "half a second, rounded up")
        XCTAssertEqual(refused.resetSeconds, 2, "three tokens at two a second")
        XCTAssertTrue(limiter.take("k", limit: limit, now: 100.5).allowed, "one token back after half a second")
        XCTAssertTrue(limiter.take("other", limit: limit, now: 100.5).allowed, "each caller has its own bucket")
        XCTAssertEqual(limiter.take("k", limit: limit, now: 200).remaining, 2, "refilled to the burst, one taken")
    }

    func testAFloodOfNewCallersStaysBounded() {
        let limiter = RateLimiter<String>()
        let limit = RateLimit(perSecond: 1, burst: 1)
        for index in 0..<150_000 { _ = limiter.take("address \(index)", limit: limit, now: 1) }
        XCTAssertLessThanOrEqual(limiter.bucketCount, 100_000)
        XCTAssertTrue(limiter.take("fresh", limit: limit, now: 1).allowed, "a full table refuses no newcomer")
    }
}
