import Application
import Foundation
import TestSupport
import XCTest

/// Every CSV Entitle writes escapes per RFC 4180 and neutralises formula prefixes; Python's `csv`
/// module, an independent reader, reads each field back as written (formulas with their `'`).
final class CSVFieldTests: XCTestCase {
    func testFieldsReadBackWholeAndNeverAsFormulas() throws {
        let values = [
            "USD", "=HYPERLINK(\"http://evil\",\"x\")", "+1", "-2+3", "@SUM(A1)", "\tTAB", "a,b", "say \"hi\"", "two\r\nrows", "line\nfeed",
            "", "plain text", "=",
        ]
        let line = values.map(CSVField.text).joined(separator: ",") + "\r\n"
        let script = """
            import csv, io, json, sys
            rows = list(csv.reader(io.StringIO(sys.stdin.read(), newline='')))
            print(json.dumps(rows))
            """
        let result = try runProcess("python3", ["-c", script], input: Array(line.utf8))
        XCTAssertEqual(result.status, 0, result.stderr)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String]])
        XCTAssertEqual(rows.count, 1, "no field forges a row: \(rows)")
        let expected = values.map { value in
            value.first.map { "=+-@\t\r".contains($0) } == true ? "'" + value : value
        }
        XCTAssertEqual(rows.first, expected)
        XCTAssertEqual(CSVField.text("USD"), "USD", "ordinary text is written as it is")
    }
}
