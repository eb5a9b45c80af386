package import Entitlements
import Instants
package import JSON

/// The `offer` of a test-store purchase (the API's and a scenario's), checked.
package enum TestStoreOffer {
    /// `"offer"`: an introductory offer: `discountType` `FREE_TRIAL` or `PAY_UP_FRONT` (one
    /// `period` of its own, `P1W` say; the subscription's period when absent) or `PAY_AS_YOU_GO`
    /// (`periods` of the subscription's), `price` in milliunits, `id` its identifier.
    package static func parse(_ value: JSONValue?) throws(ServiceError) -> SimulatedAppleSubscription.Offer? {
        guard let value, value != .null else { return nil }
        guard let object = value.objectValue else { throw .badRequest("\"offer\" must be an object") }
        guard object["type"]?.stringValue == "introductory" else {
            throw ServiceError(
                status: 422, code: "OFFER_NOT_SUPPORTED",
                message: "the test store sells introductory offers so far (\"type\": \"introductory\")")
        }
        let discount = object["discountType"]?.stringValue ?? "FREE_TRIAL"
        guard ["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT"].contains(discount) else {
            throw .badRequest("\"discountType\" must be FREE_TRIAL, PAY_AS_YOU_GO or PAY_UP_FRONT")
        }
        guard let periods = object["periods"].map({ $0.integer(in: 1...120) }) ?? 1,
            let price = object["price"].map({ $0.integer(in: Milliunits.priceRange) }) ?? 0
        else { throw .badRequest("an offer's \"periods\" must be 1 to 120 and its \"price\" whole milliunits") }
        guard discount != "FREE_TRIAL" || price == 0 else { throw .badRequest("a free trial's price is 0") }
        var period: ISO8601Duration?
        if let text = object["period"]?.stringValue {
            guard discount != "PAY_AS_YOU_GO", let parsed = ISO8601Duration(text) else {
                throw .badRequest("\"period\" is an ISO 8601 duration (P1W, P1M) of a free trial or pay up front")
            }
            period = parsed
        }
        return SimulatedAppleSubscription.Offer(
            type: 1, identifier: object["id"]?.stringValue, discountType: discount, price: price,
            periods: discount == "PAY_AS_YOU_GO" ? Int(periods) : 1, period: period)
    }
}
