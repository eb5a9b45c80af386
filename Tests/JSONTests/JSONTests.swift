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
}
