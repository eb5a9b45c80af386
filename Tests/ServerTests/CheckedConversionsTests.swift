import Foundation
import TestSupport
import XCTest

/// Every number that enters from outside goes through one checked conversion with a stated range:
/// `JSONValue.integer(in:)` and `number(in:)`, and the instants' and prices' readers built on them
/// (`Milliseconds.instant`, `.truncating`, `.stored`, `Milliunits.price`, `PlayTime.number(_:in:)`,
/// `ConfigurationReader.number`/`seconds`/`integer`). The unchecked views (`int64Value`,
/// `doubleValue`) stay inside the JSON module: `usage[].events[].at` read through one of them
/// skipped the instant range and killed the process.
final class CheckedConversionsTests: XCTestCase {
    func testNoModuleButJSONReadsAnUncheckedNumber() throws {
        let sources = packageRoot.appendingPathComponent("Sources")
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
        var found: [String] = []
        for file in files where file.hasSuffix(".swift") && !file.hasPrefix("JSON/") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(".int64Value") || line.contains(".doubleValue") {
                found.append("Sources/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        XCTAssertEqual(found, [], "read numbers from outside with integer(in:) or number(in:)")
        XCTAssertGreaterThan(files.count, 100)
    }
}
