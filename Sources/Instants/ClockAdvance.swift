/// How far `POST /v1/test-store/clock` moves the clock: an ISO 8601 duration with calendar parts
/// (`P1M`, `P1Y2M`, `P3D`) and clock parts after `T` (`PT13H`, `P1DT30M`, `PT90S`). Months and
/// years are calendar ones (UTC), as the App Store counts a subscription's periods.
package struct ClockAdvance: Sendable, Equatable {
    package var calendar: ISO8601Duration?
    package var seconds: Int64 = 0

    package init?(_ text: String) {
        guard text.hasPrefix("P"), text.count > 1 else { return nil }
        let parts = text.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
        if parts[0] != "P" {
            guard let calendar = ISO8601Duration(String(parts[0])) else { return nil }
            self.calendar = calendar
        }
        guard parts.count == 2 else { return }
        var number = ""
        var designators = Array("HMS")[...]
        for character in parts[1] {
            if character.isASCII && character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Int64(number), value <= 1_000_000_000, let position = designators.firstIndex(of: character) else {
                return nil
            }
            designators = designators[(position + 1)...]
            number = ""
            seconds += value * (character == "H" ? 3600 : character == "M" ? 60 : 1)
        }
        guard number.isEmpty, parts[1].count > 0 else { return nil }
    }

    /// `start` moved by this much (epoch milliseconds); nil past the instants Entitle accepts.
    package func end(from start: Int64) -> Int64? {
        let afterCalendar = calendar.map { $0.end(from: start) } ?? start
        guard let afterCalendar else { return nil }
        let end = afterCalendar.addingReportingOverflow(seconds * 1000)
        guard !end.overflow, Milliseconds.range.contains(end.partialValue) else { return nil }
        return end.partialValue
    }
}
