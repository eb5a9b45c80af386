import JSON

#if canImport(Glibc)
import Glibc
#endif

/// API.md's date convention: ISO 8601 UTC with milliseconds, plus the same instant in a sibling
/// `…Ms` member; absent dates are omitted.
public enum Timestamps {
    public static func iso(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        let remainder = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let prefix = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return prefix + "." + String(repeating: "0", count: 3 - String(remainder).count) + String(remainder) + "Z"
    }

    /// Adds `key` and `keyMs` when `milliseconds` is present (the names must be new in `object`).
    public static func set(_ object: inout JSONObject, _ key: String, _ milliseconds: Int64?) {
        guard let milliseconds else { return }
        object.append(key: key, value: .string(iso(milliseconds)))
        object.append(key: key + "Ms", value: .int(milliseconds))
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
