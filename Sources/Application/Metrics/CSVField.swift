/// A field of a CSV file Entitle writes, per RFC 4180 and safe to open in a spreadsheet: text
/// from outside (a currency, a product) is quoted when it holds a comma, a quote or a line break
/// (doubling its quotes, so CR/LF cannot forge rows), and text that a spreadsheet would read as a
/// formula (`=`, `+`, `-`, `@`, tab, CR at its start) is prefixed with `'` (OWASP's advice).
/// Numbers Entitle formats itself are written as they are (a refund's `-9.990` stays a number).
package enum CSVField {
    package static func text(_ value: String) -> String {
        var field = value
        if let first = field.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { field = "'" + field }
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return field }
        var quoted = "\""
        for character in field {
            if character == "\"" { quoted.append("\"") }
            quoted.append(character)
        }
        return quoted + "\""
    }
}
