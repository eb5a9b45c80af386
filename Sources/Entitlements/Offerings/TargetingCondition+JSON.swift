package import JSON

/// A rule's `when` as JSON: read from the configuration and from an experiment's audience, and
/// written back (stored experiments, the admin API), by the one reader below.
extension TargetingCondition {
    /// Why a `when` was refused: the member (a path below the condition) and what was wrong.
    package struct Problem: Error, Equatable {
        package var member: String?
        package var message: String
    }

    package static let members: Set<String> = [
        "store", "country", "platform", "environment", "state", "appVersionAtLeast", "appVersionBelow", "daysSinceFirstSeenAtLeast",
        "daysSinceFirstSeenBelow", "attributes",
    ]

    /// Every member given checked; an unknown one is refused, so a misspelt condition cannot match
    /// everyone. Each list member is one string or a non-empty list of them.
    package init(json object: JSONObject) throws(Problem) {
        self.init()
        if let unknown = object.members.map(\.key).first(where: { !Self.members.contains($0) }) {
            throw Problem(member: unknown, message: "unknown condition (\(Self.members.sorted().joined(separator: ", ")))")
        }
        stores = try Self.strings(object, "store", allowed: ["appStore", "googlePlay"])
        countries = try Self.strings(object, "country").map { Set($0.map { $0.uppercased() }) }
        platforms = try Self.strings(object, "platform")
        environments = try Self.strings(object, "environment")
        states = try Self.strings(object, "state", allowed: Set(CustomerLifecycle.allCases.map(\.rawValue))).map {
            Set($0.compactMap(CustomerLifecycle.init(rawValue:)))
        }
        appVersionAtLeast = try Self.string(object, "appVersionAtLeast")
        appVersionBelow = try Self.string(object, "appVersionBelow")
        daysSinceFirstSeenAtLeast = try Self.days(object, "daysSinceFirstSeenAtLeast", 0...36_500)
        daysSinceFirstSeenBelow = try Self.days(object, "daysSinceFirstSeenBelow", 1...36_500)
        if let value = object["attributes"] {
            guard let attributes = value.objectValue else { throw Problem(member: "attributes", message: "expected an object") }
            for (name, listed) in attributes.members {
                guard CustomerAttribute.isValidName(name) else {
                    throw Problem(
                        member: "attributes.\(name)", message: "not an attribute name (1 to 64 of letters, digits, '_', '.', '-', '$')")
                }
                self.attributes[name] = try Self.strings(attributes, name, path: "attributes.\(name)") ?? []
            }
        }
    }

    /// The condition as JSON, lists sorted (what `init(json:)` reads back to the same condition).
    package var json: JSONObject {
        var object = JSONObject()
        func list(_ key: String, _ values: Set<String>?) {
            if let values { object[key] = .array(values.sorted().map(JSONValue.string)) }
        }
        list("store", stores)
        list("country", countries)
        list("platform", platforms)
        list("environment", environments)
        list("state", states.map { Set($0.map(\.rawValue)) })
        if let appVersionAtLeast { object["appVersionAtLeast"] = .string(appVersionAtLeast) }
        if let appVersionBelow { object["appVersionBelow"] = .string(appVersionBelow) }
        if let days = daysSinceFirstSeenAtLeast { object["daysSinceFirstSeenAtLeast"] = .int(days) }
        if let days = daysSinceFirstSeenBelow { object["daysSinceFirstSeenBelow"] = .int(days) }
        if !attributes.isEmpty {
            object["attributes"] = .object(
                JSONObject(
                    attributes.sorted { $0.key < $1.key }.map {
                        (key: $0.key, value: JSONValue.array($0.value.sorted().map(JSONValue.string)))
                    }))
        }
        return object
    }

    private static func string(_ object: JSONObject, _ key: String) throws(Problem) -> String? {
        guard let value = object[key] else { return nil }
        guard let text = value.stringValue, (1...64).contains(text.utf8.count) else {
            throw Problem(member: key, message: "expected a string of 1 to 64 bytes")
        }
        return text
    }

    private static func days(_ object: JSONObject, _ key: String, _ range: ClosedRange<Int64>) throws(Problem) -> Int64? {
        guard let value = object[key] else { return nil }
        guard let days = value.integer(in: range) else {
            throw Problem(member: key, message: "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return days
    }

    private static func strings(
        _ object: JSONObject, _ key: String, path: String? = nil, allowed: Set<String>? = nil
    ) throws(Problem) -> Set<String>? {
        guard let value = object[key] else { return nil }
        let member = path ?? key
        let values: [String]
        if let one = value.stringValue {
            values = [one]
        } else if let many = value.arrayValue, !many.isEmpty, many.allSatisfy({ $0.stringValue != nil }) {
            values = many.compactMap(\.stringValue)
        } else {
            throw Problem(member: member, message: "expected a string or a non-empty list of strings")
        }
        if let allowed, let unknown = values.first(where: { !allowed.contains($0) }) {
            throw Problem(member: member, message: "unknown value \"\(unknown)\" (\(allowed.sorted().joined(separator: ", ")))")
        }
        return Set(values)
    }
}
