/// The ids an app names its offerings, packages, placements, experiments and variants with: 1 to
/// 64 of letters, digits, `_`, `-` and `.` (they go into URLs, the console and CSV unescaped).
package enum Identifier {
    package static let rule = "1 to 64 of letters, digits, '_', '-' and '.'"

    package static func isValid(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                    || byte == 0x5F || byte == 0x2D || byte == 0x2E
            }
    }
}
