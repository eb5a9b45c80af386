import JSON
import XCTest

/// The byte writer against the tree: the same build, written both ways, gives the same bytes.
final class JSONObjectWriterTests: XCTestCase {
    /// Every kind of member, nesting, escapes and the integers' edges.
    private func build<Object: JSONObjectBuilder>(_ object: inout Object) {
        object.set("text", "quote \" backslash \\ newline \n tab \t control \u{01} é 😀")
        object.set("zero", Int64(0))
        object.set("negative", Int64(-1))
        object.set("min", Int64.min)
        object.set("max", Int64.max)
        object.set("yes", true)
        object.set("no", false)
        object.set("price", 1.99)
        object.set("whole", 2.0)
        object.set("absent", ifPresent: nil as String?)
        object.set("present", ifPresent: "here")
        object.object("empty") { _ in }
        object.object("nested") { inner in
            inner.set("a", "b")
            inner.object("deeper") { $0.set("n", Int64(42)) }
        }
        object.set("strings", strings: ["x", "y\"z"])
        object.set("none", strings: [])
        object.list("objects") { list in
            list.object { $0.set("i", Int64(1)) }
            list.object { _ in }
            list.append("plain")
        }
    }

    func testWritesExactlyWhatTheTreeSerializes() throws {
        var tree = JSONObject()
        build(&tree)
        var writer = JSONObjectWriter(capacity: 8)
        build(&writer)
        let bytes = writer.finish()
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), JSONValue.object(tree).serializedString)
        XCTAssertEqual(try JSONParser.parse(bytes), .object(tree), "and it parses back to the tree")
        XCTAssertEqual(try JSONParser.parse(bytes)["min"], .int(Int64.min))
    }

    func testEmbedsSerializedJSONAsItIs() throws {
        var inner = JSONObjectWriter()
        inner.set("isActive", true)
        let serialized = inner.finish()
        var outer = JSONObjectWriter()
        outer.set("id", "e1")
        outer.set("subscriber", serialized: serialized)
        outer.set("after", Int64(7))
        XCTAssertEqual(String(decoding: outer.finish(), as: UTF8.self), #"{"id":"e1","subscriber":{"isActive":true},"after":7}"#)
        XCTAssertEqual(String(decoding: JSONObjectWriter().finish(), as: UTF8.self), "{}")
    }
}
