import JSON

/// Walks a JSON configuration and collects one line per problem instead of stopping at the
/// first, so that a user fixes a file in one pass.
struct ConfigurationReader {
    private(set) var problems: [String] = []

    mutating func problem(_ path: String, _ message: String) { problems.append("\(path): \(message)") }
    /// Problems already written with their paths (a nested section's).
    mutating func add(_ problems: [String]) { self.problems += problems }

    /// Reports members that are not in `allowed`, and repeated member names.
    mutating func checkMembers(_ object: JSONObject, allowed: Set<String>, path: String) {
        for key in object.duplicateKeys { problem(path, "duplicate key \"\(key)\"") }
        for key in object.keys where !allowed.contains(key) {
            problem(path, "unknown key \"\(key)\" (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    mutating func object(_ parent: JSONObject, _ key: String, path: String, required: Bool = false) -> JSONObject? {
        guard let value = parent[key] else {
            if required { problem(path, "missing \"\(key)\"") }
            return nil
        }
        guard let object = value.objectValue else {
            problem("\(path).\(key)", "expected an object, found \(value.typeName)")
            return nil
        }
        return object
    }

    mutating func string(_ parent: JSONObject, _ key: String, path: String, required: Bool = false) -> String? {
        guard let value = parent[key] else {
            if required { problem(path, "missing \"\(key)\"") }
            return nil
        }
        guard let string = value.stringValue, !string.isEmpty else {
            problem(
                "\(path).\(key)",
                value.stringValue == nil
                    ? "expected a string, found \(value.typeName)"
                    : "must not be empty")
            return nil
        }
        return string
    }

    mutating func integer(_ parent: JSONObject, _ key: String, path: String, range: ClosedRange<Int64>) -> Int64? {
        guard let value = parent[key] else { return nil }
        guard case .int(let number) = value else {
            problem("\(path).\(key)", "expected an integer, found \(value.typeName)")
            return nil
        }
        guard range.contains(number) else {
            problem("\(path).\(key)", "must be between \(range.lowerBound) and \(range.upperBound)")
            return nil
        }
        return number
    }

    /// A number in `range` (`above`: more than its lower bound); nil, with a problem, for
    /// anything else. Every configuration number is read here or by `integer`, so none reaches
    /// the server unbounded (a `burst` of 1e19 trapped at start-up).
    mutating func number(_ parent: JSONObject, _ key: String, path: String, range: ClosedRange<Double>, above: Bool = false) -> Double? {
        guard let value = parent[key] else { return nil }
        guard let number = value.number(in: range), !above || number > range.lowerBound else {
            let lower = above ? "more than \(Self.text(range.lowerBound))" : "at least \(Self.text(range.lowerBound))"
            problem("\(path).\(key)", "expected a number \(lower) and at most \(Self.text(range.upperBound))")
            return nil
        }
        return number
    }

    /// A number of seconds: more than 0, at most `maximum`.
    mutating func seconds(_ parent: JSONObject, _ key: String, path: String, maximum: Double) -> Double? {
        guard let value = parent[key] else { return nil }
        guard let seconds = value.number(in: 0...maximum), seconds > 0 else {
            problem("\(path).\(key)", "expected a number of seconds more than 0 and at most \(Self.text(maximum))")
            return nil
        }
        return seconds
    }

    /// `3600`, not `3600.0`.
    private static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    mutating func bool(_ parent: JSONObject, _ key: String, path: String) -> Bool? {
        guard let value = parent[key] else { return nil }
        guard let bool = value.boolValue else {
            problem("\(path).\(key)", "expected true or false, found \(value.typeName)")
            return nil
        }
        return bool
    }

    mutating func array(_ parent: JSONObject, _ key: String, path: String) -> [JSONValue]? {
        guard let value = parent[key] else { return nil }
        guard let array = value.arrayValue else {
            problem("\(path).\(key)", "expected an array, found \(value.typeName)")
            return nil
        }
        return array
    }

    mutating func stringArray(_ parent: JSONObject, _ key: String, path: String) -> [String]? {
        guard let elements = array(parent, key, path: path) else { return nil }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard let string = element.stringValue else {
                problem("\(path).\(key)[\(index)]", "expected a string, found \(element.typeName)")
                continue
            }
            strings.append(string)
        }
        return strings
    }
}
