import Instants
import JSON

/// One period of a Google Play subscription: the order Google charged for it, from its start to
/// its expiry, at the plan's price (nothing for a free trial). Google's answer names only the
/// latest order, so Entitle keeps the periods it has seen (`PlayPurchaseDetails.periods`); the
/// business figures count them as they count Apple's transactions.
package struct PlayPeriod: Sendable, Equatable {
    package var orderId: String
    package var start: Int64
    package var end: Int64
    package var priceMilliunits: Int64
    package var currency: String
    package var isTrial: Bool

    package init(orderId: String, start: Int64, end: Int64, priceMilliunits: Int64, currency: String, isTrial: Bool) {
        self.orderId = orderId
        self.start = start
        self.end = end
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.isTrial = isTrial
    }

    /// `earlier` with `read`'s period: a new order begins where the last period ended (or, the
    /// first, at the purchase's start); the same order again moves its end to the read's expiry
    /// (a grace period, a deferral). A read without an order, an expiry or a price adds nothing.
    /// A renewal whose read was missed is counted in the next one's period (documented).
    package static func adding(_ read: PlayPurchase, to earlier: [PlayPeriod]) -> [PlayPeriod] {
        guard read.kind == .subscription, let orderId = read.orderId, let end = read.expiryTime,
            let currency = read.details.recurringPriceCurrency, let price = read.details.recurringPrice
        else { return earlier }
        var periods = earlier
        let isTrial = read.details.offerPhase == "freeTrial"
        if let index = periods.lastIndex(where: { $0.orderId == orderId }) {
            periods[index].end = max(periods[index].start, end)
            return periods
        }
        let start = min(periods.last?.end ?? read.startTime, end)
        periods.append(
            PlayPeriod(orderId: orderId, start: start, end: end, priceMilliunits: isTrial ? 0 : price, currency: currency, isTrial: isTrial)
        )
        return periods
    }

    var json: JSONObject {
        [
            "orderId": .string(orderId), "start": .int(start), "end": .int(end), "price": .int(priceMilliunits),
            "currency": .string(currency), "trial": .bool(isTrial),
        ]
    }

    init?(json: JSONObject) {
        guard let orderId = json["orderId"]?.stringValue, let start = Milliseconds.stored(json["start"]),
            let end = Milliseconds.stored(json["end"]), let price = json["price"]?.integer(in: Milliunits.priceRange),
            let currency = json["currency"]?.stringValue
        else { return nil }
        self.init(
            orderId: orderId, start: start, end: end, priceMilliunits: price, currency: currency, isTrial: json["trial"]?.boolValue ?? false
        )
    }
}
