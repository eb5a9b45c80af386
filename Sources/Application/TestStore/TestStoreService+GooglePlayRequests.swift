package import Entitlements
package import Instants
package import JSON

/// What the test store's Google Play requests carry, each member checked.
extension TestStoreService {
    /// The body of `POST /v1/test-store/google/purchases`.
    package struct PlayPurchaseRequest: Sendable {
        package var app: String
        /// The Play product id (the catalog's `googlePlay.productId`).
        package var productId: String
        package var basePlanId: String?
        package var offer: SimulatedPlaySubscription.Offer?
        /// What the app set with `setObfuscatedAccountId`: Entitle's appAccountToken.
        package var obfuscatedAccountId: String?
        package var quantity: Int64 = 1
        /// The base plan's (or a unit's) price in milliunits, and the currency.
        package var price: Int64 = 9990
        package var currency = "USD"
        package var deliver = true

        /// `app`, `productId`, `basePlanId`, `offerId` with `offerPhase` (`{"type": "freeTrial",
        /// "period": "P1W"}` or `{"type": "introductoryPrice", "price", "cycles"}`; none: a
        /// developer-determined offer at the base price) and `offerTags`, `obfuscatedAccountId`,
        /// `quantity`, `price`, `currency`, `deliver`.
        package init(_ body: JSONObject) throws(ServiceError) {
            guard let app = try Self.text(body, "app"), let productId = try Self.text(body, "productId") else {
                throw .badRequest("\"app\" and \"productId\" are required")
            }
            self.app = app
            self.productId = productId
            basePlanId = try Self.text(body, "basePlanId")
            obfuscatedAccountId = try Self.text(body, "obfuscatedAccountId")
            if let account = obfuscatedAccountId, account.utf8.count > 64 {
                throw .badRequest("\"obfuscatedAccountId\" is at most 64 characters, as Google takes it")
            }
            if let value = body["quantity"] {
                guard let count = value.integer(in: 1...100) else { throw .badRequest("\"quantity\" is 1 to 100") }
                quantity = count
            }
            if let value = body["price"] { price = try Self.price(value) }
            if let value = body["currency"] {
                guard let code = value.stringValue, CurrencyCode.isValid(code) else {
                    throw .badRequest("\"currency\" is an ISO 4217 code")
                }
                currency = code
            }
            deliver = body["deliver"]?.boolValue ?? true
            offer = try Self.offer(body)
        }

        private static func offer(_ body: JSONObject) throws(ServiceError) -> SimulatedPlaySubscription.Offer? {
            guard let id = try text(body, "offerId") else {
                guard body["offerPhase"] == nil, body["offerTags"] == nil else {
                    throw .badRequest("\"offerPhase\" and \"offerTags\" belong to an offer: name its \"offerId\"")
                }
                return nil
            }
            guard let tags = (body["offerTags"]?.arrayValue ?? []).map({ $0.stringValue }) as? [String] else {
                throw .badRequest("\"offerTags\" is an array of strings")
            }
            guard let phase = body["offerPhase"] else {
                return .init(id: id, tags: tags, phase: nil, price: 0, period: nil, cycles: 0)
            }
            guard let object = phase.objectValue, let type = object["type"]?.stringValue else {
                throw .badRequest("\"offerPhase\" is {\"type\": \"freeTrial\" or \"introductoryPrice\", …}")
            }
            switch type {
            case "freeTrial":
                guard let period = ISO8601Duration(object["period"]?.stringValue ?? "P1W") else {
                    throw .badRequest("a free trial's \"period\" is an ISO 8601 duration such as P1W")
                }
                return .init(id: id, tags: tags, phase: type, price: 0, period: period, cycles: 1)
            case "introductoryPrice":
                guard let value = object["price"] else { throw .badRequest("an introductory price needs \"price\" (milliunits)") }
                guard let cycles = (object["cycles"] ?? .int(1)).integer(in: 1...52) else {
                    throw .badRequest("an introductory price's \"cycles\" is 1 to 52 billing periods")
                }
                return .init(id: id, tags: tags, phase: type, price: try price(value), period: nil, cycles: Int(cycles))
            default:
                throw .badRequest("\"offerPhase.type\" is freeTrial or introductoryPrice")
            }
        }

        static func text(_ body: JSONObject, _ name: String) throws(ServiceError) -> String? {
            guard let value = body[name] else { return nil }
            guard let text = value.stringValue, !text.isEmpty else { throw .badRequest("\"\(name)\" must be a non-empty string") }
            return text
        }

        static func price(_ value: JSONValue) throws(ServiceError) -> Int64 {
            guard let amount = value.integer(in: Milliunits.priceRange) else {
                throw .badRequest("\"price\" must be whole milliunits from 0 to \(Milliunits.priceRange.upperBound)")
            }
            return amount
        }
    }

    /// What can be done to a Google Play purchase.
    package enum PlayAction: String, Sendable, CaseIterable {
        case cancel, restart, failRenewal = "fail-renewal", recover, pause, resume, revoke, refund
        case priceStepUp = "price-step-up", consentPriceStepUp = "consent-price-step-up", replace
        case requestRefund = "request-refund", consume
    }

    /// What a Google action's body may add: `gracePeriodDays` (fail-renewal), `duration` (pause),
    /// `price` (price-step-up, replace), `productId`, `basePlanId` and `replacementMode`
    /// (replace), `quantity` (refund of a one-time product), `outcome` and `reason`
    /// (request-refund), and whether notifications are delivered.
    package struct PlayActionOptions: Sendable {
        package var gracePeriodDays: Int?
        package var duration: ISO8601Duration?
        package var price: Int64?
        package var productId: String?
        package var basePlanId: String?
        package var replacementMode: String?
        package var quantity: Int64?
        package var outcome: String?
        package var refundReason: Int64?
        package var deliver = true

        package init(_ body: JSONObject) throws(ServiceError) {
            if let value = body["gracePeriodDays"] {
                guard let days = value.integer(in: 0...30) else { throw .badRequest("\"gracePeriodDays\" is 0 to 30") }
                gracePeriodDays = Int(days)
            }
            if let value = body["duration"] {
                guard let length = value.stringValue.flatMap(ISO8601Duration.init) else {
                    throw .badRequest("\"duration\" is an ISO 8601 duration such as P1M")
                }
                duration = length
            }
            if let value = body["price"] { price = try PlayPurchaseRequest.price(value) }
            productId = try PlayPurchaseRequest.text(body, "productId")
            basePlanId = try PlayPurchaseRequest.text(body, "basePlanId")
            replacementMode = try PlayPurchaseRequest.text(body, "replacementMode")
            outcome = try PlayPurchaseRequest.text(body, "outcome")
            if let value = body["quantity"] {
                guard let count = value.integer(in: 1...100) else { throw .badRequest("\"quantity\" is 1 to 100") }
                quantity = count
            }
            if let value = body["reason"] {
                guard let code = value.integer(in: 0...20) else { throw .badRequest("\"reason\" is Google's refund reason code (0 to 20)") }
                refundReason = code
            }
            deliver = body["deliver"]?.boolValue ?? true
        }
    }
}
