import Foundation
import JSON

/// Writes to the standard streams through `FileHandle` (Swift 6 on Linux rejects `stderr` globals).
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func json(_ value: JSONValue) { line(value.serializedString) }
}
