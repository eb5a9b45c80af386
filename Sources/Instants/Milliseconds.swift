package import Foundation
package import JSON

/// Epoch milliseconds: the unit of every App Store date, every Google Play time and every stored
/// instant. Every conversion goes through here, so none can trap.
///
/// Instants Entitle accepts lie in years 0 to 9999 (what ISO 8601 writes with four digits). Any
/// two of them add or subtract without overflow, so the rules may do plain arithmetic on
/// instants once they have entered through `checked`, `truncating` or `parse`; what lies outside
/// is refused at the edge (a 400 for a request, an invalid payload for signed data).
package enum Milliseconds {
    /// Foundation's `Date.distantPast` (0000-12-30T00:00:00Z, which Apple's own signed data uses
    /// for "no date", e.g. an Xcode app transaction's originalPurchaseDate) ... 9999-12-31T23:59:59.999Z.
    package static let range: ClosedRange<Int64> = -62_135_769_600_000...253_402_300_799_999

    /// `value` when it is an instant Entitle accepts.
    package static func checked(_ value: Int64) -> Int64? { range.contains(value) ? value : nil }

    /// A number of milliseconds as JSON carries it (Apple's dates may have a fraction), truncated
    /// to a whole millisecond; nil when it is not finite or out of range.
    package static func truncating(_ value: Double) -> Int64? {
        guard value.isFinite, value >= Double(range.lowerBound), value < Double(range.upperBound) + 1 else { return nil }
        return Int64(value.rounded(.towardZero))
    }

    /// The instant of `date`, rounded down to a millisecond and clamped to `range`: total, for
    /// dates the process makes itself (the clock, a calendar computation).
    package static func since1970(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard !value.isNaN else { return 0 }
        return Int64(min(max(value, Double(range.lowerBound)), Double(range.upperBound)))
    }

    /// The clock, in milliseconds.
    package static var now: Int64 { since1970(Date()) }

    package static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// A number of milliseconds in JSON (Apple's dates may have a fraction), truncated; nil for
    /// anything else or an instant out of range.
    package static func truncating(_ value: JSONValue?) -> Int64? {
        value?.number(in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude).flatMap(truncating)
    }

    /// A stored instant (an `…Ms` member Entitle wrote): a whole number in `range`, or nil.
    package static func stored(_ value: JSONValue?) -> Int64? { value?.integer(in: range) }

    /// An instant in JSON as callers write it: epoch milliseconds (a whole number) or the text
    /// `parse` reads; nil for anything else or an instant out of range.
    package static func instant(_ value: JSONValue) -> Int64? {
        if let text = value.stringValue { return parse(text) }
        return value.integer(in: range)
    }

    /// An instant as callers write it: epoch milliseconds (an integer) or ISO 8601 with an offset (RFC 3339),
    /// with or without fractional seconds; nil for anything else or an instant out of range.
    package static func parse(_ text: String) -> Int64? {
        if let number = Int64(text) { return checked(number) }
        guard text.utf8.count <= 64, let instant = RFC3339.milliseconds(text) else { return nil }
        return checked(instant)
    }
}
