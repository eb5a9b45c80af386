import Application
import Dispatch
import Foundation
import XCTest

final class BlockingPoolTests: XCTestCase {
    /// Jobs run on the pool's threads, in parallel up to its size; past the queue bound a job is
    /// refused at once with 503 `OVERLOADED` instead of waiting without end.
    func testRunsJobsAndRefusesPastItsQueueBound() throws {
        let pool = BlockingPool(threads: 2, maxQueuedJobs: 2)
        defer { pool.stop() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            XCTAssertTrue(
                pool.submit {
                    started.signal()
                    release.wait()
                })
        }
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success, "two threads run two jobs at once")
        XCTAssertTrue(pool.submit {})
        XCTAssertTrue(pool.submit {})
        XCTAssertEqual(pool.queuedJobs, 2)
        XCTAssertFalse(pool.submit {}, "the third waiting job is refused")
        let refused = expectation(description: "refused")
        pool.run({ 1 }) { result in
            if case .failure(let error as ServiceError) = result, error.code == "OVERLOADED", error.httpStatus == 503 {
                refused.fulfill()
            }
        }
        wait(for: [refused], timeout: 5)
        release.signal()
        release.signal()
        let ran = expectation(description: "ran")
        for _ in 0..<50 where pool.queuedJobs > 0 { Thread.sleep(forTimeInterval: 0.02) }
        pool.run({ Thread.isMainThread }) { result in
            if case .success(false) = result { ran.fulfill() }
        }
        wait(for: [ran], timeout: 5)
    }
}
