package import Entitlements
import Instants
package import JSON

/// The `offer` of a test-store purchase (the API's and a scenario's), checked for its shape; what
/// the App Store checks of it (its identifier, signature and the customer's eligibility) is
/// `AppStoreOfferCheck`'s.
package struct TestStoreOffer: Sendable {
    /// The four kinds StoreKit 2 buys with, and Apple's `offerType` for each.
    package enum Kind: String, Sendable, CaseIterable {
        case introductory, promotional, offerCode, winBack

        var offerType: Int64 {
            switch self {
            case .introductory: 1
            case .promotional: 2
            case .offerCode: 3
            case .winBack: 4
            }
        }
    }

    /// What proves a promotional offer is the developer's: the v1 signature
    /// (`promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`) or the JWS
    /// (`promotionalOffer(_:compactJWS:)`).
    package enum Signature: Sendable {
        case v1(keyIdentifier: String, nonce: String, timestamp: Int64, signature: String)
        case jws(String)
    }

    package var kind: Kind
    /// How it prices the first period(s), as the transaction shows it.
    package var pricing: SimulatedAppleSubscription.Offer
    /// A promotional offer's signature.
    package var signature: Signature?

    /// `"offer"`: `type` (introductory, promotional, offerCode, winBack), `id` (the offer's
    /// identifier, or the offer code's; required but for an introductory offer), `discountType`
    /// `FREE_TRIAL` or `PAY_UP_FRONT` (one `period` of its own, `P1W` say; the subscription's
    /// period when absent) or `PAY_AS_YOU_GO` (`periods` of the subscription's), `price` in
    /// milliunits; a promotional offer adds `jws`, or `keyIdentifier`, `nonce`, `timestamp` and
    /// `signature`.
    package static func parse(_ value: JSONValue?) throws(ServiceError) -> TestStoreOffer? {
        guard let value, value != .null else { return nil }
        guard let object = value.objectValue else { throw .badRequest("\"offer\" must be an object") }
        guard let kind = object["type"]?.stringValue.flatMap(Kind.init(rawValue:)) else {
            throw .badRequest("an offer's \"type\" is one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let identifier = object["id"]?.stringValue
        guard kind == .introductory || !(identifier ?? "").isEmpty else {
            throw refused("missingOfferParameters", "a \(kind.rawValue) offer needs its \"id\"")
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
        let pricing = SimulatedAppleSubscription.Offer(
            type: kind.offerType, identifier: identifier, discountType: discount, price: price,
            periods: discount == "PAY_AS_YOU_GO" ? Int(periods) : 1, period: period)
        return TestStoreOffer(kind: kind, pricing: pricing, signature: kind == .promotional ? try signature(object) : nil)
    }

    private static func signature(_ object: JSONObject) throws(ServiceError) -> Signature {
        if let jws = object["jws"] {
            guard let text = jws.stringValue, !text.isEmpty else { throw .badRequest("\"jws\" must be a compact JWS") }
            return .jws(text)
        }
        guard let keyIdentifier = object["keyIdentifier"]?.stringValue, let nonce = object["nonce"]?.stringValue,
            let signature = object["signature"]?.stringValue, let timestamp = object["timestamp"]
        else {
            throw refused(
                "missingOfferParameters",
                "a promotional offer needs \"jws\", or \"keyIdentifier\", \"nonce\", \"timestamp\" and \"signature\"")
        }
        guard let milliseconds = timestamp.integer(in: Milliseconds.range) else {
            throw .badRequest("\"timestamp\" is whole milliseconds since 1970")
        }
        return .v1(keyIdentifier: keyIdentifier, nonce: nonce, timestamp: milliseconds, signature: signature)
    }

    /// The App Store's refusal of an offer: 422 `OFFER_REFUSED`, with StoreKit's
    /// `Product.PurchaseError` case as `storeKitError` (what the app would be told).
    package static func refused(_ storeKitError: String, _ why: String) -> ServiceError {
        ServiceError(
            status: 422, code: "OFFER_REFUSED", message: "\(storeKitError): \(why)", details: ["storeKitError": .string(storeKitError)])
    }
}
