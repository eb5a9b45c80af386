import Foundation
package import JSON

/// A configuration section declared once: each member's key, environment variable, type, range
/// and where its value goes. The file's parse, the environment's overrides, the members
/// `check-config` accepts and the list docs/CONFIGURATION.md must hold all come from it (a test
/// compares the doc with it), so a member is added in one place.
package struct ConfigurationSection<Settings>: Sendable {
    package enum Kind: Sendable {
        case text
        case integer(ClosedRange<Int64>)
        /// A number in the range (above its lower bound when `above`).
        case number(ClosedRange<Double>, above: Bool)
        /// Seconds in (0, maximum].
        case seconds(maximum: Double)
        case flag
        /// An object, handed whole to the member (a nested section parses it).
        case object
        /// A path resolved against the configuration's folder, not checked (a file to create).
        case path
        /// A file, resolved against the configuration's folder, that must be readable.
        case file
        /// A file (resolved the same way) whose content is a secret of at least this many bytes:
        /// the value is its content, never its path.
        case secretFile(minimumBytes: Int)
    }

    package enum Value {
        case text(String)
        case integer(Int64)
        case number(Double)
        case seconds(Double)
        case flag(Bool)
        case object(JSONObject)
        case bytes([UInt8])
    }

    package struct Member: Sendable {
        package let key: String
        /// The environment variable that overrides the file's value, when there is one.
        package let environment: String?
        package let kind: Kind
        /// Puts the value in place; a value the kind cannot judge alone (a URL's scheme, a nested
        /// object) is refused by throwing `ConfigurationValueError`, reported at the member's path.
        let assign: @Sendable (inout Settings, Value) throws -> Void

        package init(
            _ key: String, environment: String? = nil, _ kind: Kind, assign: @escaping @Sendable (inout Settings, Value) throws -> Void
        ) {
            self.key = key
            self.environment = environment
            self.kind = kind
            self.assign = assign
        }
    }

    package let path: String
    package let members: [Member]

    package init(_ path: String, _ members: [Member]) {
        self.path = path
        self.members = members
    }

    /// The section's object from the file: unknown members refused, each known one read by its kind.
    func parse(_ object: JSONObject?, folder: String = "", into settings: inout Settings, reader: inout ConfigurationReader) {
        guard let object else { return }
        reader.checkMembers(object, allowed: Set(members.map(\.key)), path: path)
        for member in members {
            let memberPath = "\(path).\(member.key)"
            let value: Value?
            switch member.kind {
            case .text: value = reader.string(object, member.key, path: path).map(Value.text)
            case .path: value = reader.string(object, member.key, path: path).map { .text(ConfigurationLoader.resolve($0, in: folder)) }
            case .file, .secretFile:
                value = reader.string(object, member.key, path: path).flatMap {
                    Self.file($0, member.kind, folder: folder, at: memberPath, reader: &reader)
                }
            case .integer(let range): value = reader.integer(object, member.key, path: path, range: range).map(Value.integer)
            case .number(let range, let above):
                value = reader.number(object, member.key, path: path, range: range, above: above).map(Value.number)
            case .seconds(let maximum): value = reader.seconds(object, member.key, path: path, maximum: maximum).map(Value.seconds)
            case .flag: value = reader.bool(object, member.key, path: path).map(Value.flag)
            case .object: value = reader.object(object, member.key, path: path).map(Value.object)
            }
            if let value { assign(member, value, to: &settings, at: memberPath, reader: &reader) }
        }
    }

    private func assign(_ member: Member, _ value: Value, to settings: inout Settings, at path: String, reader: inout ConfigurationReader) {
        do { try member.assign(&settings, value) } catch let error as ConfigurationValueError where !error.nested.isEmpty {
            reader.add(error.nested)
        } catch {
            reader.problem(path, "\(error)")
        }
    }

    /// A file member's value: its resolved path (`.file`, which must be readable) or its content
    /// (`.secretFile`, at least its minimum).
    private static func file(_ name: String, _ kind: Kind, folder: String, at path: String, reader: inout ConfigurationReader) -> Value? {
        let resolved = ConfigurationLoader.resolve(name, in: folder)
        switch kind {
        case .secretFile(let minimum):
            guard let data = FileManager.default.contents(atPath: resolved) else {
                reader.problem(path, "cannot read \(resolved)")
                return nil
            }
            guard data.count >= minimum else {
                reader.problem(path, "\(resolved) must hold at least \(minimum) bytes (openssl rand -out FILE \(minimum))")
                return nil
            }
            return .bytes(Array(data))
        default:
            guard FileManager.default.isReadableFile(atPath: resolved) else {
                reader.problem(path, "cannot read \(resolved)")
                return nil
            }
            return .text(resolved)
        }
    }

    /// The environment's overrides, read with the same kinds and ranges as the file's members
    /// (an empty variable is no override; a path is resolved against the configuration's folder).
    func applyOverrides(
        _ environment: [String: String], folder: String = "", into settings: inout Settings, reader: inout ConfigurationReader
    ) {
        for member in members {
            guard let name = member.environment, let text = environment[name], !text.isEmpty else { continue }
            let value: Value
            switch member.kind {
            case .text: value = .text(text)
            case .path: value = .text(ConfigurationLoader.resolve(text, in: folder))
            case .file, .secretFile:
                guard let file = Self.file(text, member.kind, folder: folder, at: name, reader: &reader) else { continue }
                value = file
            case .object:
                reader.problem(name, "an object member takes no environment override")
                continue
            case .integer(let range):
                guard let number = Int64(text), range.contains(number) else {
                    reader.problem(name, "expected an integer between \(range.lowerBound) and \(range.upperBound)")
                    continue
                }
                value = .integer(number)
            case .number(let range, let above):
                guard let number = Double(text), range.contains(number), !above || number > range.lowerBound else {
                    reader.problem(name, "expected a number in \(range)")
                    continue
                }
                value = .number(number)
            case .seconds(let maximum):
                guard let seconds = Double(text), seconds > 0, seconds <= maximum else {
                    reader.problem(name, "expected seconds above 0 and at most \(maximum)")
                    continue
                }
                value = .seconds(seconds)
            case .flag:
                guard let flag = ["true": true, "false": false][text] else {
                    reader.problem(name, "expected true or false")
                    continue
                }
                value = .flag(flag)
            }
            assign(member, value, to: &settings, at: name, reader: &reader)
        }
    }
}

/// A member's value refused by the member itself (what its kind cannot judge alone): one message
/// for the member's path, or the problems of a nested section, each with its own path.
package struct ConfigurationValueError: Error, CustomStringConvertible {
    package let description: String
    let nested: [String]
    package init(_ description: String) {
        self.description = description
        nested = []
    }
    init(nested problems: [String]) {
        description = problems.joined(separator: "; ")
        nested = problems
    }
}

extension ConfigurationSection.Value {
    var text: String? { if case .text(let text) = self { text } else { nil } }
    var integer: Int? { if case .integer(let number) = self { Int(number) } else { nil } }
    var number: Double? { if case .number(let number) = self { number } else { nil } }
    var seconds: Double? { if case .seconds(let seconds) = self { seconds } else { nil } }
    var object: JSONObject? { if case .object(let object) = self { object } else { nil } }
    var flag: Bool? { if case .flag(let flag) = self { flag } else { nil } }
    var bytes: [UInt8]? { if case .bytes(let bytes) = self { bytes } else { nil } }
}
