import Crypto
import Foundation
import Instants
package import JSON

/// The JSON type of one member of an App Store model (docs/APP_STORE.md §4.1).
package indirect enum FieldType: Sendable {
    case string
    case bool
    case int32
    case int64
    /// Epoch milliseconds, integer or fractional, possibly negative.
    case date
    /// A price in whole milliunits, within `Milliunits.priceRange`.
    case price
    /// An ISO 4217 code: three capital letters.
    case currency
    /// Canonical 8-4-4-4-12 text.
    case uuid
    /// An open enum with string raw values: any string decodes.
    case stringEnum
    /// An open enum with integer raw values: any integer decodes.
    case intEnum
    case object(ModelSchema)
    case array(FieldType)
}

/// Why a payload does not decode into its model: a member of the wrong JSON type, a malformed
/// UUID, or a missing required member.
package struct ModelDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    package let path: String
    package let problem: String
    package var description: String { "\(path): \(problem)" }
}

/// The members of one model and their types. Decoding validates a JSON object against it:
/// absent or `null` members are absent, unknown members are ignored, a type mismatch fails.
package struct ModelSchema: Sendable {
    package let name: String
    package let fields: [String: FieldType]
    package let required: Set<String>

    package init(_ name: String, required: Set<String> = [], _ fields: [String: FieldType]) {
        self.name = name
        self.fields = fields
        self.required = required
    }

    package func validate(_ object: JSONObject, path: String? = nil) throws(ModelDecodingError) {
        let base = path ?? name
        for key in required where object[key] == nil || object[key] == .null {
            throw ModelDecodingError(path: "\(base).\(key)", problem: "required member is missing")
        }
        for (key, value) in object.members {
            guard let type = fields[key], value != .null else { continue }
            try Self.check(value, as: type, path: "\(base).\(key)")
        }
    }

    /// The known members only, without `null`s (what Entitle writes back out).
    package func knownMembers(of object: JSONObject) -> JSONObject {
        var output = JSONObject()
        for (key, value) in object.members {
            guard let type = fields[key], value != .null else { continue }
            output[key] = Self.known(value, as: type)
        }
        return output
    }

    private static func known(_ value: JSONValue, as type: FieldType) -> JSONValue {
        switch (type, value) {
        case (.object(let schema), .object(let object)): return .object(schema.knownMembers(of: object))
        case (.array(let element), .array(let values)): return .array(values.map { known($0, as: element) })
        default: return value
        }
    }

    private static func check(_ value: JSONValue, as type: FieldType, path: String) throws(ModelDecodingError) {
        func mismatch(_ expected: String) -> ModelDecodingError {
            ModelDecodingError(path: path, problem: "expected \(expected), found \(value.typeName)")
        }
        switch type {
        case .string, .stringEnum:
            guard case .string = value else { throw mismatch("a string") }
        case .bool:
            guard case .bool = value else { throw mismatch("a boolean") }
        case .int32:
            guard case .int(let number) = value else { throw mismatch("an integer") }
            guard number >= Int64(Int32.min) && number <= Int64(Int32.max) else {
                throw ModelDecodingError(path: path, problem: "integer out of 32-bit range")
            }
        case .int64, .intEnum:
            guard case .int = value else { throw mismatch("an integer") }
        case .date:
            switch value {
            case .int, .double: break
            default: throw mismatch("a number of milliseconds")
            }
            // A date no one can mean (past year 9999, or 1e300) is refused here, with the payload,
            // rather than trapping wherever it is converted or added to.
            guard Milliseconds.truncating(value) != nil else {
                throw ModelDecodingError(path: path, problem: "date out of range (years 0 to 9999)")
            }
        case .price:
            guard case .int(let number) = value else { throw mismatch("an integer") }
            // A price no store charges (Int64.min, 1e18) is refused here, with the payload, so the
            // figures' arithmetic never meets it.
            guard Milliunits.price(number) != nil else {
                throw ModelDecodingError(path: path, problem: "price out of range (0 to \(Milliunits.priceRange.upperBound) milliunits)")
            }
        case .currency:
            guard case .string(let text) = value else { throw mismatch("a currency code") }
            guard CurrencyCode.isValid(text) else {
                throw ModelDecodingError(path: path, problem: "not a currency code (three capital letters, ISO 4217)")
            }
        case .uuid:
            guard case .string(let text) = value else { throw mismatch("a UUID string") }
            guard UUID.isCanonicalText(text) else { throw ModelDecodingError(path: path, problem: "not a UUID") }
        case .object(let schema):
            guard case .object(let object) = value else { throw mismatch("an object") }
            try schema.validate(object, path: path)
        case .array(let element):
            guard case .array(let values) = value else { throw mismatch("an array") }
            for (index, item) in values.enumerated() where item != .null {
                try check(item, as: element, path: "\(path)[\(index)]")
            }
        }
    }
}

/// A decoded App Store model: the validated JSON plus typed accessors.
package protocol AppStoreModel: Sendable {
    static var schema: ModelSchema { get }
    /// The payload as received (validated against `schema`).
    var json: JSONObject { get }
    init(validated json: JSONObject)
}

extension AppStoreModel {
    /// Validates `json` against the model's schema.
    package init(decoding json: JSONObject) throws(ModelDecodingError) {
        try Self.schema.validate(json)
        self.init(validated: json)
    }

    /// The known members, ready to send back out.
    package var knownJSON: JSONObject { Self.schema.knownMembers(of: json) }

    package func string(_ key: String) -> String? { json[key]?.stringValue }
    package func bool(_ key: String) -> Bool? { json[key]?.boolValue }
    /// An integer member, its range the schema's (`int32`, or any of Int64's for `int64` and open enums).
    package func int64(_ key: String) -> Int64? { json[key]?.integer(in: Int64.min...Int64.max) }
    /// Milliseconds, truncated to a whole millisecond (docs/APP_STORE.md §4.1).
    package func milliseconds(_ key: String) -> Int64? { Milliseconds.truncating(json[key]) }
    func object<Model: AppStoreModel>(_ key: String) -> Model? { json[key]?.objectValue.map(Model.init(validated:)) }
}
