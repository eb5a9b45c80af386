import Foundation
import Instants
import Synchronization
import XCTest

/// The clock tests and the test store move: forward only, by an amount, to an instant, or on its
/// own at a multiple of real time (read against a real clock the test moves itself).
final class MovableClockTests: XCTestCase {
    func testItMovesForwardOnlyAndRunsAtItsSpeed() {
        let real = Mutex(Date(timeIntervalSince1970: 1_000))
        let start = Date(timeIntervalSince1970: 2_000_000)
        let clock = MovableClock(at: start, real: { real.withLock { $0 } })
        real.withLock { $0 += 60 }
        XCTAssertEqual(clock.now(), start, "stopped until moved")
        XCTAssertEqual(clock.advance(by: 30 * 86_400), start.addingTimeInterval(30 * 86_400))
        XCTAssertEqual(clock.advance(by: -5), start.addingTimeInterval(30 * 86_400), "never backwards")
        XCTAssertEqual(clock.move(to: start), start.addingTimeInterval(30 * 86_400), "never backwards")
        let later = start.addingTimeInterval(40 * 86_400)
        XCTAssertEqual(clock.move(to: later), later)
        clock.run(speed: 288)
        real.withLock { $0 += 10 }
        XCTAssertEqual(clock.now(), later.addingTimeInterval(2_880), "288 times real time: ten seconds are 48 minutes")
        clock.run(speed: 0)
        real.withLock { $0 += 10 }
        XCTAssertEqual(clock.now(), later.addingTimeInterval(2_880), "stopped where it was")
        XCTAssertEqual(clock.milliseconds, Milliseconds.since1970(later.addingTimeInterval(2_880)))
    }
}
