import Foundation
import JSON

/// A configuration section declared once: each member's key, environment variable, type, range
/// and where its value goes. The file's parse, the environment's overrides, the members
/// `check-config` accepts and the list docs/CONFIGURATION.md must hold all come from it (a test
/// compares the doc with it), so a member is added in one place.
package struct ConfigurationSection<Settings>: Sendable {
    package enum Kind: Sendable {
        case text
        case integer(ClosedRange<Int64>)
        /// Seconds in (0, maximum].
        case seconds(maximum: Double)
        case flag
        /// A file, resolved against the configuration's folder, that must be readable.
        case file
        /// A file (resolved the same way) whose content is a secret of at least this many bytes:
        /// the value is its content, never its path.
        case secretFile(minimumBytes: Int)
    }

    package enum Value {
        case text(String)
        case integer(Int64)
        case seconds(Double)
        case flag(Bool)
        case bytes([UInt8])
    }

    package struct Member: Sendable {
        package let key: String
        /// The environment variable that overrides the file's value, when there is one.
        package let environment: String?
        package let kind: Kind
        let assign: @Sendable (inout Settings, Value) -> Void

        package init(
            _ key: String, environment: String? = nil, _ kind: Kind, assign: @escaping @Sendable (inout Settings, Value) -> Void
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
            let value: Value?
            switch member.kind {
            case .text: value = reader.string(object, member.key, path: path).map(Value.text)
            case .file:
                value = reader.string(object, member.key, path: path).flatMap { file in
                    let resolved = ConfigurationLoader.resolve(file, in: folder)
                    guard FileManager.default.isReadableFile(atPath: resolved) else {
                        reader.problem("\(path).\(member.key)", "cannot read \(resolved)")
                        return nil
                    }
                    return .text(resolved)
                }
            case .secretFile(let minimum):
                value = reader.string(object, member.key, path: path).flatMap { file in
                    let resolved = ConfigurationLoader.resolve(file, in: folder)
                    guard let data = FileManager.default.contents(atPath: resolved) else {
                        reader.problem("\(path).\(member.key)", "cannot read \(resolved)")
                        return nil
                    }
                    guard data.count >= minimum else {
                        reader.problem(
                            "\(path).\(member.key)", "\(resolved) must hold at least \(minimum) bytes (openssl rand -out FILE \(minimum))")
                        return nil
                    }
                    return .bytes(Array(data))
                }
            case .integer(let range): value = reader.integer(object, member.key, path: path, range: range).map(Value.integer)
            case .seconds(let maximum): value = reader.seconds(object, member.key, path: path, maximum: maximum).map(Value.seconds)
            case .flag: value = reader.bool(object, member.key, path: path).map(Value.flag)
            }
            if let value { member.assign(&settings, value) }
        }
    }

    /// The environment's overrides, read with the same kinds and ranges as the file's members
    /// (an empty variable is no override).
    func applyOverrides(_ environment: [String: String], into settings: inout Settings, reader: inout ConfigurationReader) {
        for member in members {
            guard let name = member.environment, let text = environment[name], !text.isEmpty else { continue }
            switch member.kind {
            case .text: member.assign(&settings, .text(text))
            case .file, .secretFile:
                // A file is named in the configuration (resolved against its folder), not by an
                // environment variable: no declared file member has one.
                reader.problem(name, "a file member takes no environment override")
            case .integer(let range):
                guard let number = Int64(text), range.contains(number) else {
                    reader.problem(name, "expected an integer between \(range.lowerBound) and \(range.upperBound)")
                    continue
                }
                member.assign(&settings, .integer(number))
            case .seconds(let maximum):
                guard let seconds = Double(text), seconds > 0, seconds <= maximum else {
                    reader.problem(name, "expected seconds above 0 and at most \(maximum)")
                    continue
                }
                member.assign(&settings, .seconds(seconds))
            case .flag:
                guard let flag = ["true": true, "false": false][text] else {
                    reader.problem(name, "expected true or false")
                    continue
                }
                member.assign(&settings, .flag(flag))
            }
        }
    }
}

extension ConfigurationSection.Value {
    var text: String? { if case .text(let text) = self { text } else { nil } }
    var integer: Int? { if case .integer(let number) = self { Int(number) } else { nil } }
    var seconds: Double? { if case .seconds(let seconds) = self { seconds } else { nil } }
    var flag: Bool? { if case .flag(let flag) = self { flag } else { nil } }
    var bytes: [UInt8]? { if case .bytes(let bytes) = self { bytes } else { nil } }
}
