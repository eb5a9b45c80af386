import Foundation
import XCTest

@testable import Entitlements

/// The hand-written ISO 8601 formatting agrees with the C library's `gmtime_r` + `strftime`.
final class TimestampsTests: XCTestCase {
    func testAgreesWithTheCLibrary() {
        var instants: [Int64] = [0, 1, 999, 1000, -1, -1000, -86_400_001, 951_782_400_000, 4_107_542_399_999, 1_760_592_122_788]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { instants.append(Int64.random(in: -32_000_000_000_000...253_402_300_799_999, using: &generator)) }
        for instant in instants {
            XCTAssertEqual(Timestamps.iso(instant), Timestamps.libraryISO(instant), "\(instant)")
        }
    }

    func testKnownInstants() {
        XCTAssertEqual(Timestamps.iso(0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamps.iso(951_782_400_000), "2000-02-29T00:00:00.000Z")
        XCTAssertEqual(Timestamps.iso(1_760_592_122_788), "2025-10-16T05:22:02.788Z")
    }
}
