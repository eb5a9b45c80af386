package import AppStore
package import Entitlements
package import Instants
package import JSON

/// What the test store's requests carry (the API's bodies and a scenario's steps), each member
/// checked, and how a step taken reads in answers.
extension TestStoreService {
    /// One step taken, as answers list it.
    /// One step taken, as answers list it: the notification, when, what it names, and whether
    /// Entitle's route took it (`status`: what it answered; absent when not delivered).
    package struct Happened: Sendable {
        package var json: JSONObject

        init(_ step: AppleStoreSimulation.Step, delivered: Bool, status: Int?) {
            json = [
                "notification": .string(step.name), "originalTransactionId": .string(step.originalTransactionId),
                "transactionId": step.transaction["transactionId"] ?? .null, "delivered": .bool(delivered),
            ]
            if let id = step.transaction["transactionId"]?.stringValue { json["orderId"] = .string(TestStoreService.orderId(of: id)) }
            finish(at: step.at, status: status)
        }

        init(_ step: PlayStoreSimulation.Step, delivered: Bool, status: Int?) {
            json = ["notification": .string(step.name), "purchaseToken": .string(step.purchaseToken), "delivered": .bool(delivered)]
            if let order = step.order?.id ?? step.voided?.orderId ?? step.body["orderId"]?.stringValue { json["orderId"] = .string(order) }
            finish(at: step.at, status: status)
        }

        private mutating func finish(at: Int64, status: Int?) {
            Timestamps.set(&json, "at", at)
            if let status { json["status"] = .int(Int64(status)) }
        }
    }

    /// The request of `POST /v1/test-store/apple/purchases`.
    package struct Purchase: Sendable {
        package var app: String
        package var appAccountToken: String?
        package var productId: String
        package var environment: AppStoreEnvironment
        package var price: Int64
        package var currency: String
        package var offer: TestStoreOffer?
        package var deliver: Bool
        /// A one-time product's kind and quantity (the catalog does not say consumable or not).
        package var kind = SimulatedApplePurchase.Kind.nonConsumable
        package var quantity = 1
        /// `FAMILY_SHARED`: the customer has the subscription through Family Sharing.
        package var ownership = "PURCHASED"
        /// Ask to Buy: the purchase waits for a parent's approval.
        package var askToBuy = false

        package init(
            app: String, appAccountToken: String?, productId: String, environment: AppStoreEnvironment, price: Int64,
            currency: String, offer: TestStoreOffer?, deliver: Bool
        ) {
            self.app = app
            self.appAccountToken = appAccountToken
            self.productId = productId
            self.environment = environment
            self.price = price
            self.currency = currency
            self.offer = offer
            self.deliver = deliver
        }

        /// A purchase body (the API's and a scenario's step): `productId`, `environment`,
        /// `price`, `currency`, `offer`, `type`, `quantity`, `deliver`, each checked.
        package init(_ body: JSONObject, app: String, appAccountToken: String?) throws(ServiceError) {
            guard let productId = body["productId"]?.stringValue, !productId.isEmpty else {
                throw .badRequest("missing field \"productId\"")
            }
            guard let price = body["price"].map({ $0.integer(in: Milliunits.priceRange) }) ?? 9990 else {
                throw .badRequest("\"price\" must be whole milliunits from 0 to \(Milliunits.priceRange.upperBound)")
            }
            guard body["currency"].map({ $0.stringValue != nil }) ?? true, body["environment"].map({ $0.stringValue != nil }) ?? true
            else { throw .badRequest("\"currency\" and \"environment\" are strings") }
            self.init(
                app: app, appAccountToken: appAccountToken, productId: productId,
                environment: AppStoreEnvironment(rawValue: body["environment"]?.stringValue ?? "Sandbox"), price: price,
                currency: body["currency"]?.stringValue ?? "USD", offer: try TestStoreOffer.parse(body["offer"]),
                deliver: body["deliver"]?.boolValue ?? true)
            if let type = body["type"] {
                guard let kind = type.stringValue.flatMap(SimulatedApplePurchase.Kind.init(rawValue:)) else {
                    throw .badRequest("\"type\" of a one-time product is Consumable or Non-Consumable")
                }
                self.kind = kind
            }
            if let ownership = body["inAppOwnershipType"] {
                guard let name = ownership.stringValue, ["PURCHASED", "FAMILY_SHARED"].contains(name) else {
                    throw .badRequest("\"inAppOwnershipType\" is PURCHASED or FAMILY_SHARED")
                }
                self.ownership = name
            }
            askToBuy = body["askToBuy"]?.boolValue ?? false
            if let quantity = body["quantity"] {
                guard let count = quantity.integer(in: 1...10) else { throw .badRequest("\"quantity\" is 1 to 10") }
                self.quantity = Int(count)
            }
        }
    }

    package enum Action: String, Sendable, CaseIterable {
        case cancel, resume, failRenewal = "fail-renewal", recover, refund, requestRefund = "request-refund"
        case upgrade, downgrade, crossgrade, priceIncrease = "price-increase", revokeFamily = "revoke-family"
        case openCancelSheet = "open-cancel-sheet"
    }

    /// What an action's body may add: `gracePeriod` (fail-renewal), `outcome` and `reason`
    /// (request-refund), `percentage` (a partial refund, milliunits of a percent), `productId`,
    /// `price` and `atRenewal` (plan changes; `price` alone for a price increase), `consent`
    /// (price-increase), `locale` (open-cancel-sheet), and whether notifications are delivered.
    package struct ActionOptions: Sendable {
        package var gracePeriod = false
        package var refundGranted = true
        package var reason = "UNINTENDED_PURCHASE"
        package var percentage: Int64?
        package var productId: String?
        package var price: Int64?
        package var atRenewal: Bool?
        package var consent = true
        package var locale = "en-US"
        package var deliver = true

        package init() {}

        /// From the body of an action (or a scenario's step).
        package init(_ body: JSONObject) throws(ServiceError) {
            gracePeriod = body["gracePeriod"]?.boolValue ?? false
            deliver = body["deliver"]?.boolValue ?? true
            atRenewal = body["atRenewal"]?.boolValue
            consent = body["consent"]?.boolValue ?? true
            if let outcome = body["outcome"] {
                guard let name = outcome.stringValue, ["REFUND", "REFUND_DECLINED"].contains(name) else {
                    throw .badRequest("\"outcome\" is REFUND or REFUND_DECLINED")
                }
                refundGranted = name == "REFUND"
            }
            for (name, keyPath) in [("reason", \ActionOptions.reason), ("locale", \.locale)] {
                guard let value = body[name] else { continue }
                guard let text = value.stringValue, !text.isEmpty else { throw .badRequest("\"\(name)\" must be a string") }
                self[keyPath: keyPath] = text
            }
            if let product = body["productId"] {
                guard let text = product.stringValue, !text.isEmpty else { throw .badRequest("\"productId\" must be a string") }
                productId = text
            }
            if let value = body["percentage"] {
                guard let amount = value.integer(in: 1...99_999) else {
                    throw .badRequest("\"percentage\" of a partial refund is 1 to 99999 milliunits of a percent (50000 is half)")
                }
                percentage = amount
            }
            if let value = body["price"] {
                guard let amount = value.integer(in: Milliunits.priceRange) else {
                    throw .badRequest("\"price\" must be whole milliunits from 0 to \(Milliunits.priceRange.upperBound)")
                }
                price = amount
            }
        }
    }
}
