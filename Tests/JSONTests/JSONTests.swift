import JSON
import XCTest

final class JSONTests: XCTestCase {
    func testParsesEveryKind() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2.5, 1e3, true, false, null, "x\u00e9\n\ud83d\ude00"], "b": {}} "#)
        XCTAssertEqual(
            value["a"],
            .array([
                .int(1), .double(-2.5), .double(1000), .bool(true), .bool(false), .null,
                .string("x\u{e9}\n\u{1F600}"),
            ]))
        XCTAssertEqual(value["b"], .object([:]))
        XCTAssertEqual(try JSONParser.parse("9007199254740993"), .int(9_007_199_254_740_993), "integers stay exact")
    }

    func testRejectsMalformedInput() {
        for text in [
            "", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "tru", "\"\u{01}\"", "\"\\x\"", "{} x",
            "\"\\ud800\"", "{\"a\":1,\"a\":2}", "[" + String(repeating: "[", count: 100) + "]",
        ] {
            XCTAssertThrowsError(try JSONParser.parse(text), text)
        }
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0xff, 0x22]), "invalid UTF-8")
    }

    func testDuplicateKeysCanBeKeptForReporting() throws {
        let value = try JSONParser.parse(#"{"a":1,"a":2}"#, rejectDuplicateKeys: false)
        XCTAssertEqual(value.objectValue?.duplicateKeys, ["a"])
        XCTAssertEqual(value["a"], .int(1))
    }

    func testWriterRoundTripsAndEscapes() throws {
        let object: JSONValue = .object([
            "s": .string("q\"\\\u{01}é"), "n": .int(-3), "d": .double(0.5),
            "l": .array([.null, .bool(true)]),
        ])
        let text = object.serializedString
        XCTAssertEqual(text, #"{"s":"q\"\\\u0001é","n":-3,"d":0.5,"l":[null,true]}"#)
        XCTAssertEqual(try JSONParser.parse(text), object)
    }

    /// Found by the JSON fuzz target: an integral double was written as an integer and read back
    /// as `.int`, and an object with a repeated name was not equal to itself.
    func testDoublesStayDoublesAndRepeatedNamesCompareEqual() throws {
        for text in ["[2.0]", "[-0.0]", "[1e308]", "[123456789012345678901234567890]"] {
            let value = try JSONParser.parse(text)
            XCTAssertEqual(try JSONParser.parse(value.serializedBytes), value, text)
            if case .array(let items) = value { XCTAssertEqual(items.first.map { if case .double = $0 { true } else { false } }, true) }
        }
        let repeated = try JSONParser.parse(#"{"a":[2],"a":{"a":"x"}}"#, rejectDuplicateKeys: false)
        XCTAssertEqual(repeated, repeated)
        XCTAssertEqual(try JSONParser.parse(repeated.serializedBytes, rejectDuplicateKeys: false), repeated)
        XCTAssertNotEqual(try JSONParser.parse(#"{"a":{"a":"x"},"a":[2]}"#, rejectDuplicateKeys: false), repeated)
    }
}
