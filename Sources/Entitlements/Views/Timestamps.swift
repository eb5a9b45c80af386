import Instants
package import JSON

/// The API's date convention: ISO 8601 UTC with milliseconds, plus the same instant in a sibling
/// `…Ms` member; absent dates are omitted.
package enum Timestamps {
    /// `2026-12-01T10:00:00.215Z`. Computed by hand (days to civil date, Hinnant's algorithm):
    /// every answer and event carries several of these, and `gmtime_r` + `strftime` cost more
    /// than the rest of formatting a subscriber. Always four digits of year, so the API reads
    /// back everything it writes (the C library wrote `999-12-31`): an instant outside
    /// `Milliseconds.range`, which none that entered can be, is written as the nearest edge.
    package static func iso(_ instant: Int64) -> String {
        let milliseconds = min(max(instant, Milliseconds.range.lowerBound), Milliseconds.range.upperBound)
        let seconds = milliseconds.floorDivided(by: 1000)
        let days = seconds.floorDivided(by: 86_400)
        let date = CivilDate(daysSince1970: days)
        let (year, month, day) = (date.year, date.month, date.day)
        let secondOfDay = seconds - days * 86_400
        var text = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, _ at: Int, _ width: Int) {
            var value = value
            for index in stride(from: at + width - 1, through: at, by: -1) {
                text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(year, 0, 4)
        text[4] = UInt8(ascii: "-")
        put(month, 5, 2)
        text[7] = UInt8(ascii: "-")
        put(day, 8, 2)
        text[10] = UInt8(ascii: "T")
        put(secondOfDay / 3600, 11, 2)
        text[13] = UInt8(ascii: ":")
        put(secondOfDay / 60 % 60, 14, 2)
        text[16] = UInt8(ascii: ":")
        put(secondOfDay % 60, 17, 2)
        text[19] = UInt8(ascii: ".")
        put(milliseconds - seconds * 1000, 20, 3)
        text[23] = UInt8(ascii: "Z")
        return String(decoding: text, as: UTF8.self)
    }

    /// Adds `key` and `keyMs` when `milliseconds` is present (the names must be new in `object`).
    package static func set<Object: JSONObjectBuilder>(_ object: inout Object, _ key: String, _ milliseconds: Int64?) {
        guard let milliseconds else { return }
        object.set(key, iso(milliseconds))
        object.set(key + "Ms", milliseconds)
    }
}
