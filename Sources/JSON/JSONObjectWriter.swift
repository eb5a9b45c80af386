/// Writes one JSON object straight into bytes, compactly and members in call order, with no
/// tree in between: event bodies are written inside the write transaction, and a tree of enums,
/// strings and arrays per member cost more than the rest of the event.
///
/// Nested objects and arrays write into the same buffer (it is handed to the nested writer and
/// back, never copied).
package struct JSONObjectWriter: JSONObjectBuilder, ContinuingWriter {
    fileprivate static let closing = UInt8(ascii: "}")
    fileprivate var bytes: [UInt8]
    fileprivate var isEmpty = true

    package init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Continues in `bytes`, which the caller hands over.
    fileprivate init(continuing bytes: inout [UInt8]) {
        self.bytes = []
        swap(&self.bytes, &bytes)
        self.bytes.append(UInt8(ascii: "{"))
    }

    /// The finished object.
    package consuming func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    package mutating func set(_ key: String, _ value: String) {
        member(key)
        JSONValue.writeString(value, into: &bytes)
    }

    package mutating func set(_ key: String, _ value: Int64) {
        member(key)
        JSONObjectWriter.writeInteger(value, into: &bytes)
    }

    package mutating func set(_ key: String, _ value: Bool) {
        member(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    package mutating func set(_ key: String, _ value: Double) {
        member(key)
        JSONValue.double(value).write(into: &bytes)
    }

    package mutating func set(_ key: String, json value: JSONValue) {
        member(key)
        value.write(into: &bytes)
    }

    /// A member whose value is JSON already serialized (one object embedded in several events).
    package mutating func set(_ key: String, serialized json: [UInt8]) {
        member(key)
        bytes.append(contentsOf: json)
    }

    package mutating func object(_ key: String, _ build: (inout JSONObjectWriter) -> Void) {
        member(key)
        writeNested(into: &bytes, build)
    }

    package mutating func list(_ key: String, _ build: (inout JSONListWriter) -> Void) {
        member(key)
        writeNested(into: &bytes, build)
    }

    private mutating func member(_ key: String) {
        if isEmpty { isEmpty = false } else { bytes.append(UInt8(ascii: ",")) }
        JSONValue.writeString(key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Decimal digits without an intermediate `String`.
    static func writeInteger(_ value: Int64, into output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes; a UInt64 has at most 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: buffer[index...])
        }
    }
}

/// The elements of an array inside a `JSONObjectWriter`.
package struct JSONListWriter: JSONListBuilder, ContinuingWriter {
    fileprivate static let closing = UInt8(ascii: "]")
    fileprivate var bytes: [UInt8]
    private var isEmpty = true

    fileprivate init(continuing bytes: inout [UInt8]) {
        self.bytes = []
        swap(&self.bytes, &bytes)
        self.bytes.append(UInt8(ascii: "["))
    }

    package mutating func append(_ value: String) {
        separate()
        JSONValue.writeString(value, into: &bytes)
    }

    package mutating func object(_ build: (inout JSONObjectWriter) -> Void) {
        separate()
        writeNested(into: &bytes, build)
    }

    private mutating func separate() {
        if isEmpty { isEmpty = false } else { bytes.append(UInt8(ascii: ",")) }
    }
}

/// A writer of a nested object or array: it continues in the buffer it is handed.
private protocol ContinuingWriter {
    init(continuing bytes: inout [UInt8])
    var bytes: [UInt8] { get set }
    static var closing: UInt8 { get }
}

/// Writes a nested value through a writer of its kind; the buffer moves to it and back, closed.
private func writeNested<Writer: ContinuingWriter>(into bytes: inout [UInt8], _ build: (inout Writer) -> Void) {
    var inner = Writer(continuing: &bytes)
    build(&inner)
    inner.bytes.append(Writer.closing)
    swap(&bytes, &inner.bytes)
}
