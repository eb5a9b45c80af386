import Foundation
import Instants
import Synchronization
import XCTest

@testable import Application

final class DueWorkDrainerTests: XCTestCase {
    /// Work committed while a drain runs was not in the due list that drain read: its kick must
    /// make the drainer drain again when the running drain ends, not wait for the timer.
    func testAKickDuringADrainDrainsAgainAtOnce() async throws {
        let drains = Mutex(0)
        let released = Mutex(false)
        let drainer = DueWorkDrainer(interval: 3600, clock: SystemClock()) { _ in
            let count = drains.withLock { count -> Int in
                count += 1
                return count
            }
            if count == 1 {
                while !released.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 5_000_000) }
            }
        }
        defer { drainer.stop() }
        drainer.kick()
        try await waitUntil { drains.withLock { $0 } == 1 }
        drainer.kick()  // new work committed while the first drain runs
        drainer.kick()  // and more: still one more drain, not one a kick
        released.withLock { $0 = true }
        try await waitUntil { drains.withLock { $0 } == 2 }
        try await Task.sleep(nanoseconds: 100_000_000)
        XCTAssertEqual(drains.withLock { $0 }, 2, "the kicks during a drain fold into one more drain")
        drainer.kick()
        try await waitUntil { drains.withLock { $0 } == 3 }
    }

    /// Stopping cancels the drain in flight (and so the call to Apple or Google it awaits), and
    /// no kick starts another.
    func testStopCancelsTheDrainInFlight() async throws {
        let started = Mutex(0)
        let cancelled = Mutex(false)
        let drainer = DueWorkDrainer(interval: 3600, clock: SystemClock()) { _ in
            started.withLock { $0 += 1 }
            do { try await Task.sleep(nanoseconds: 3_600_000_000_000) } catch { cancelled.withLock { $0 = true } }
        }
        drainer.kick()
        try await waitUntil { started.withLock { $0 } == 1 }
        drainer.stop()
        try await waitUntil { cancelled.withLock { $0 } }
        drainer.kick()
        try await Task.sleep(nanoseconds: 100_000_000)
        XCTAssertEqual(started.withLock { $0 }, 1, "a stopped drainer drains no more")
    }

    /// Polls `condition` for up to five seconds.
    private func waitUntil(_ condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = Date().addingTimeInterval(5)
        while !condition() {
            guard Date() < deadline else { return XCTFail("the condition did not hold within 5 s", file: file, line: line) }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
    }
}
