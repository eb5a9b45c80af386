/// A JSON document as a Swift value.
///
/// Integers and fractional numbers are kept apart so that epoch milliseconds and transaction
/// identifiers survive exactly, and objects keep their member order so output is deterministic.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object that remembers member order. Objects here are small, so lookup is a linear scan.
package struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    package private(set) var members: [(key: String, value: JSONValue)]

    package init() { members = [] }

    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = elements.map { (key: $0.0, value: $0.1) }
    }

    package init(_ members: [(key: String, value: JSONValue)]) { self.members = members }

    package var keys: [String] { members.map(\.key) }

    /// Appends a member whose name is known to be new, skipping the lookup (builders of answers;
    /// the parser has checked its own). Appending an existing name would duplicate it.
    package mutating func append(key: String, value: JSONValue) { members.append((key: key, value: value)) }

    /// Keeps a repeated member name, for callers that report duplicates themselves.
    mutating func appendDuplicate(key: String, value: JSONValue) { members.append((key: key, value: value)) }

    /// Member names that occur more than once, in order of their second occurrence.
    package var duplicateKeys: [String] {
        var seen = Set<String>()
        return members.compactMap { seen.insert($0.key).inserted ? nil : $0.key }
    }
    package var isEmpty: Bool { members.isEmpty }

    package subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key: key, value: newValue))
            }
        }
    }

    /// The same members whatever their order; a repeated name (kept by a lenient parse) must
    /// carry the same values in the same order on both sides.
    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        if lhs.duplicateKeys.isEmpty && rhs.duplicateKeys.isEmpty {
            return lhs.members.allSatisfy { member in rhs[member.key] == member.value }
        }
        func grouped(_ object: JSONObject) -> [String: [JSONValue]] {
            object.members.reduce(into: [:]) { groups, member in groups[member.key, default: []].append(member.value) }
        }
        return grouped(lhs) == grouped(rhs)
    }
}

// MARK: - Typed views

extension JSONValue {
    package var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    package var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    package var objectValue: JSONObject? { if case .object(let value) = self { value } else { nil } }
    package var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }

    /// An integer, also from a fractional number with no fractional part.
    package var int64Value: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.2e18: return Int64(value)
        default: return nil
        }
    }

    /// The one checked conversion of a whole number from outside (a request, a signed payload, a
    /// stored row, a configuration file): the integer when it lies in `range`, nil for anything
    /// else (not a number, a fraction, beyond the range). Callers state the range they accept.
    package func integer(in range: ClosedRange<Int64>) -> Int64? {
        guard let value = int64Value, range.contains(value) else { return nil }
        return value
    }

    /// The checked conversion of any number from outside: finite and in `range`, or nil.
    package func number(in range: ClosedRange<Double>) -> Double? {
        guard let value = doubleValue, value.isFinite, range.contains(value) else { return nil }
        return value
    }

    /// Any number as a Double.
    package var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The JSON type name, for error messages ("expected a string, found a number").
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    package subscript(key: String) -> JSONValue? { objectValue?[key] }
}
