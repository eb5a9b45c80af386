import Foundation
import Instants
import XCTest

@testable import Entitlements

#if canImport(Glibc)
import Glibc
#endif

/// The hand-written ISO 8601 formatting agrees with the C library's `gmtime_r` + `strftime` where
/// that writes four digits of year, and always writes four digits itself, so that every instant
/// the API writes is one it reads back.
final class TimestampsTests: XCTestCase {
    /// The C library's text, the independent reference (years 1000 to 9999: below, `%Y` has fewer digits).
    private func library(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        let remainder = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let prefix = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return prefix + "." + String(repeating: "0", count: 3 - String(remainder).count) + String(remainder) + "Z"
    }

    func testAgreesWithTheCLibrary() {
        var instants: [Int64] = [0, 1, 999, 1000, -1, -1000, -86_400_001, 951_782_400_000, 4_107_542_399_999, 1_760_592_122_788]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { instants.append(Int64.random(in: -30_610_224_000_000...253_402_300_799_999, using: &generator)) }
        for instant in instants {
            XCTAssertEqual(Timestamps.iso(instant), library(instant), "\(instant)")
        }
    }

    func testKnownInstants() {
        XCTAssertEqual(Timestamps.iso(0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(Timestamps.iso(951_782_400_000), "2000-02-29T00:00:00.000Z")
        XCTAssertEqual(Timestamps.iso(1_760_592_122_788), "2025-10-16T05:22:02.788Z")
        XCTAssertEqual(Timestamps.iso(-30_610_224_000_001), "0999-12-31T23:59:59.999Z", "four digits below year 1000")
        XCTAssertEqual(Timestamps.iso(Milliseconds.range.lowerBound), "0000-12-30T00:00:00.000Z")
        XCTAssertEqual(Timestamps.iso(Milliseconds.range.upperBound), "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(Timestamps.iso(.min), "0000-12-30T00:00:00.000Z", "outside the range: the nearest edge")
        XCTAssertEqual(Timestamps.iso(.max), "9999-12-31T23:59:59.999Z")
    }

    /// Everything written reads back as the same instant, at the edges and across the years below 1000.
    func testEveryInstantWrittenReadsBack() {
        var instants: [Int64] = [Milliseconds.range.lowerBound, Milliseconds.range.upperBound, -30_610_224_000_001, -62_135_596_800_000]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { instants.append(Int64.random(in: Milliseconds.range, using: &generator)) }
        for instant in instants {
            XCTAssertEqual(Milliseconds.parse(Timestamps.iso(instant)), instant, Timestamps.iso(instant))
        }
    }

    /// Series buckets at the range's edges begin and end inside it.
    func testBucketsAtTheEdgesStayInsideTheRange() throws {
        for interval in MetricsInterval.allCases {
            let low = try XCTUnwrap(
                interval.buckets(from: Milliseconds.range.lowerBound, to: Milliseconds.range.lowerBound + 1, limit: 10))
            XCTAssertEqual(low.first?.start, Milliseconds.range.lowerBound, "\(interval)")
            let high = try XCTUnwrap(
                interval.buckets(from: Milliseconds.range.upperBound - 1, to: Milliseconds.range.upperBound, limit: 10))
            XCTAssertEqual(high.last?.end, Milliseconds.range.upperBound, "\(interval)")
            for bucket in low + high {
                XCTAssertNotNil(Milliseconds.parse(Timestamps.iso(bucket.start)))
                XCTAssertNotNil(Milliseconds.parse(Timestamps.iso(bucket.end)))
            }
        }
    }
}
