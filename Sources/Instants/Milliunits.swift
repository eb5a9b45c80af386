/// Money as both stores carry it once read: whole milliunits of a currency (Apple's `price`; Google's
/// micros and `Money` converted). Every price enters through `price(_:)`, so the figures' sums
/// work on bounded numbers; they add with `Int64.addingSaturating` all the same, because a sum of
/// many bounded prices still is not.
package enum Milliunits {
    /// 0 to 10^13 milliunits: ten billion units of any currency, some forty times the highest price
    /// either store sells at in its weakest currency. A price outside is refused with its payload.
    package static let priceRange: ClosedRange<Int64> = 0...10_000_000_000_000

    /// `value` when it is a price Entitle accepts.
    package static func price(_ value: Int64) -> Int64? { priceRange.contains(value) ? value : nil }
}

/// ISO 4217 currency codes, as both stores write them: three capital ASCII letters.
package enum CurrencyCode {
    package static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        return bytes.count == 3 && bytes.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}

extension Int64 {
    /// `self + other`, held at `Int64.min` or `Int64.max` instead of trapping: sums of money and
    /// counts that no real data reaches, but stored or hostile data could.
    package func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self × other`, held at the bound of its sign instead of trapping.
    package func multipliedSaturating(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }

    /// `self += other`, saturating.
    package mutating func addSaturating(_ other: Int64) { self = addingSaturating(other) }

    /// `-self`, with `-Int64.min` held at `Int64.max`.
    package var negatedSaturating: Int64 { self == .min ? .max : -self }
}
