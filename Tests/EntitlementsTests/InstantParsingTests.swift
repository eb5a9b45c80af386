import Foundation
import Instants
import XCTest

/// Instants are read by hand (Foundation's ISO 8601 reading builds an ICU formatter each time):
/// the same instants as Foundation reads, on instants no one chose, and the same refusals.
final class InstantParsingTests: XCTestCase {
    func testTheHandReadingAgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var state: UInt64 = 20_261_202
        func next(_ bound: Int64) -> Int64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int64((state >> 33) % UInt64(bound))
        }
        for _ in 0..<5_000 {
            let milliseconds = next(253_402_300_799_999)  // 1970 … 9999
            let offset = (next(2) == 0 ? 0 : next(28 * 4) * 15 - 14 * 60) * 60  // quarter hours within ±14 h
            formatter.timeZone = TimeZone(secondsFromGMT: Int(offset))
            let text = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            XCTAssertEqual(Milliseconds.parse(text), milliseconds, text)
        }
        XCTAssertEqual(Milliseconds.parse("2026-05-01T12:00:00Z"), 1_777_636_800_000)
        XCTAssertEqual(Milliseconds.parse("2026-05-01T14:00:00+02:00"), 1_777_636_800_000)
        XCTAssertEqual(Milliseconds.parse("2026-05-01T12:00:00.123456Z"), 1_777_636_800_123, "a fraction is cut to milliseconds")
        XCTAssertEqual(Milliseconds.parse("2026-05-01T12:00:00.5Z"), 1_777_636_800_500)
        XCTAssertEqual(Milliseconds.parse("0000-12-30T00:00:00Z"), Milliseconds.range.lowerBound)
        for refused in [
            "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-05-01T24:00:00Z", "2026-05-01T12:00:00", "2026-05-01T12:00:00.Z",
            "2026-05-01T12:00:00+2:00", "2026-05-01T12:00:00Zjunk", "yesterday", "",
        ] {
            XCTAssertNil(Milliseconds.parse(refused), refused)
        }
    }
}
