import Dispatch
import Foundation
import Instants
import Synchronization
import XCTest

@testable import Application

final class DueWorkDrainerTests: XCTestCase {
    /// Work committed while a drain runs was not in the due list that drain read: its kick must
    /// make the drainer drain again when the running drain ends, not wait for the timer.
    func testAKickDuringADrainDrainsAgainAtOnce() throws {
        let pool = BlockingPool(threads: 2)
        defer { pool.stop() }
        let drains = Mutex(0)
        let firstDrainStarted = DispatchSemaphore(value: 0)
        let releaseFirstDrain = DispatchSemaphore(value: 0)
        let secondDrain = expectation(description: "a second drain")
        let drainer = DueWorkDrainer(interval: 3600, pool: pool, clock: SystemClock()) { _ in
            let count = drains.withLock { count -> Int in
                count += 1
                return count
            }
            if count == 1 {
                firstDrainStarted.signal()
                releaseFirstDrain.wait()
            } else if count == 2 {
                secondDrain.fulfill()
            }
        }
        drainer.kick()
        XCTAssertEqual(firstDrainStarted.wait(timeout: .now() + 5), .success)
        drainer.kick()  // new work committed while the first drain runs
        drainer.kick()  // and more: still one more drain, not one a kick
        releaseFirstDrain.signal()
        wait(for: [secondDrain], timeout: 2)
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertEqual(drains.withLock { $0 }, 2, "the kicks during a drain fold into one more drain")
        drainer.kick()
        let third = Date().addingTimeInterval(2)
        while drains.withLock({ $0 }) < 3, Date() < third { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(drains.withLock { $0 }, 3, "an idle drainer drains at the next kick")
    }
}
