/// The ISO 8601 instants callers and Google send, `2026-05-01T12:00:00Z`, with a fraction
/// (`.123456`, truncated to milliseconds) and an offset (`Z`, `+02:00`), read by hand: this is on
/// every request that names an instant and in every Google answer.
enum RFC3339 {
    /// Epoch milliseconds; nil for any other shape (or an impossible date: `2026-02-30`).
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
            let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var fraction: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, let digit = digit(bytes[index]) {
                if digits < 3 { fraction = fraction * 10 + digit }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { fraction *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"), let hours = number(bytes, index + 1, 2),
                let minutes = number(bytes, index + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default: return nil
        }
        guard index == bytes.count else { return nil }
        let date = CivilDate(year: year, month: month, day: day)
        guard CivilDate(daysSince1970: date.daysSince1970) == date else { return nil }
        let seconds = date.daysSince1970 * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + fraction
    }

    private static func digit(_ byte: UInt8) -> Int64? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int64(byte - UInt8(ascii: "0")) : nil
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for index in start..<start + count {
            guard let digit = digit(bytes[index]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}
