/// Something an object's members are written into, in call order: the byte writer
/// (`JSONObjectWriter`, for event bodies and answers on hot paths, no tree) or a `JSONObject`
/// (a tree, for callers that read or extend it). One rendering function, generic over the
/// builder, serves both, so an answer and an event cannot disagree about a member.
///
/// Members are appended: each name must be new in its object (the renderers choose each entry
/// once before writing it).
package protocol JSONObjectBuilder {
    associatedtype List: JSONListBuilder where List.Object == Self

    mutating func set(_ key: String, _ value: String)
    mutating func set(_ key: String, _ value: Int64)
    mutating func set(_ key: String, _ value: Bool)
    mutating func set(_ key: String, _ value: Double)
    /// A member whose value is a JSON value as it is (a store's object passed on as sent).
    mutating func set(_ key: String, json value: JSONValue)
    /// A member whose value is an object written by `build`.
    mutating func object(_ key: String, _ build: (inout Self) -> Void)
    /// A member whose value is an array written by `build`.
    mutating func list(_ key: String, _ build: (inout List) -> Void)
}

/// The elements of an array, in call order.
package protocol JSONListBuilder {
    associatedtype Object: JSONObjectBuilder

    mutating func append(_ value: String)
    /// An element that is an object written by `build`.
    mutating func object(_ build: (inout Object) -> Void)
}

extension JSONObjectBuilder {
    /// Present only when `value` is.
    package mutating func set(_ key: String, ifPresent value: String?) { if let value { set(key, value) } }
    package mutating func set(_ key: String, ifPresent value: Int64?) { if let value { set(key, value) } }
    package mutating func set(_ key: String, ifPresent value: Bool?) { if let value { set(key, value) } }

    /// An array of strings.
    package mutating func set(_ key: String, strings: [String]) {
        list(key) { list in for value in strings { list.append(value) } }
    }
}

// MARK: - The tree

extension JSONObject: JSONObjectBuilder {
    package mutating func set(_ key: String, _ value: String) { append(key: key, value: .string(value)) }
    package mutating func set(_ key: String, _ value: Int64) { append(key: key, value: .int(value)) }
    package mutating func set(_ key: String, _ value: Bool) { append(key: key, value: .bool(value)) }
    package mutating func set(_ key: String, _ value: Double) { append(key: key, value: .double(value)) }
    package mutating func set(_ key: String, json value: JSONValue) { append(key: key, value: value) }

    package mutating func object(_ key: String, _ build: (inout JSONObject) -> Void) {
        var inner = JSONObject()
        build(&inner)
        append(key: key, value: .object(inner))
    }

    package mutating func list(_ key: String, _ build: (inout JSONArrayBuilder) -> Void) {
        var inner = JSONArrayBuilder()
        build(&inner)
        append(key: key, value: .array(inner.elements))
    }
}

/// An array being built as a tree.
package struct JSONArrayBuilder: JSONListBuilder {
    package private(set) var elements: [JSONValue] = []

    package init() {}

    package mutating func append(_ value: String) { elements.append(.string(value)) }

    package mutating func object(_ build: (inout JSONObject) -> Void) {
        var inner = JSONObject()
        build(&inner)
        elements.append(.object(inner))
    }
}
