import Foundation

/// An ISO 8601 duration of whole years, months, weeks and days (`P1M`, `P1Y`, `P2W`, `P3D`,
/// `P1Y6M`), the length of a non-renewing subscription. Months and years are calendar months and
/// years (UTC), as the App Store counts them.
package struct ISO8601Duration: Sendable, Equatable {
    package var years = 0, months = 0, weeks = 0, days = 0

    package init?(_ text: String) {
        guard text.hasPrefix("P"), text.count > 1 else { return nil }
        var number = ""
        // Each designator at most once, in ISO 8601's order (`P1M1M` and `P1D1Y` are not durations).
        var designators = Array("YMWD")[...]
        for character in text.dropFirst() {
            if character.isASCII && character.isNumber {
                number.append(character)
                continue
            }
            // Each part is bounded (10,000 years in months) so the calendar arithmetic stays in range.
            guard let value = Int(number), value <= Self.maximumPart, let position = designators.firstIndex(of: character) else {
                return nil
            }
            designators = designators[(position + 1)...]
            number = ""
            switch character {
            case "Y": years = value
            case "M": months = value
            case "W": weeks = value
            default: days = value
            }
        }
        guard number.isEmpty else { return nil }
    }

    private static let maximumPart = 120_000

    /// `start` plus this duration, both epoch milliseconds; nil when the end lies outside the
    /// instants Entitle accepts (`Milliseconds.range`).
    package func end(from start: Int64) -> Int64? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: years, month: months, day: weeks * 7 + days)
        guard let end = calendar.date(byAdding: components, to: Milliseconds.date(start)) else { return nil }
        return Milliseconds.truncating((end.timeIntervalSince1970 * 1000).rounded())
    }
}
