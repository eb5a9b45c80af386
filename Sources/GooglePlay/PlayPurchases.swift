import Foundation
import Instants
import JSON

/// `purchases.subscriptionsv2.get`'s answer, read into what Entitle needs; `json` keeps Google's
/// whole answer for the history.
public struct SubscriptionPurchaseV2: Sendable {
    public struct LineItem: Sendable, Equatable {
        public var productId: String
        public var expiryTime: Int64?
        public var autoRenewEnabled: Bool?
        public var basePlanId: String?
        public var offerId: String?
        public var offerTags: [String]
        /// The line item's last successful order (`GPA.…`): Google's replacement for the
        /// purchase-wide, deprecated `latestOrderId`.
        public var latestSuccessfulOrderId: String?
    }

    public var json: JSONObject
    public var subscriptionState: String
    public var startTime: Int64?
    public var lineItems: [LineItem]
    public var linkedPurchaseToken: String?
    /// Deprecated by Google (`lineItems[].latestSuccessfulOrderId` replaces it); read only when a
    /// line item has no order of its own.
    public var latestOrderId: String?
    /// Bought by a license tester: a test purchase, Entitle's Sandbox.
    public var isTestPurchase: Bool
    public var isAcknowledged: Bool
    public var obfuscatedExternalAccountId: String?

    public init(json: JSONObject) throws(GooglePlayAPIError) {
        guard let state = json["subscriptionState"]?.stringValue else { throw .decoding("no subscriptionState") }
        let items = json["lineItems"]?.arrayValue?.compactMap(\.objectValue) ?? []
        guard !items.isEmpty else { throw .decoding("no lineItems") }
        self.json = json
        subscriptionState = state
        startTime = json["startTime"]?.stringValue.flatMap(Milliseconds.parse)
        lineItems = try items.map { item throws(GooglePlayAPIError) in
            guard let product = item["productId"]?.stringValue else { throw .decoding("a line item without productId") }
            let offer = item["offerDetails"]?.objectValue
            return LineItem(
                productId: product, expiryTime: item["expiryTime"]?.stringValue.flatMap(Milliseconds.parse),
                autoRenewEnabled: item["autoRenewingPlan"]?["autoRenewEnabled"]?.boolValue,
                basePlanId: offer?["basePlanId"]?.stringValue, offerId: offer?["offerId"]?.stringValue,
                offerTags: offer?["offerTags"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                latestSuccessfulOrderId: item["latestSuccessfulOrderId"]?.stringValue)
        }
        linkedPurchaseToken = json["linkedPurchaseToken"]?.stringValue
        latestOrderId = json["latestOrderId"]?.stringValue
        isTestPurchase = json["testPurchase"] != nil
        isAcknowledged = json["acknowledgementState"]?.stringValue == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
        obfuscatedExternalAccountId = json["externalAccountIdentifiers"]?["obfuscatedExternalAccountId"]?.stringValue
    }
}

/// `purchases.products.get`'s answer (a one-time product).
public struct ProductPurchase: Sendable {
    public var json: JSONObject
    public var purchaseTime: Int64?
    /// 0 purchased, 1 canceled, 2 pending.
    public var purchaseState: Int64
    public var orderId: String?
    /// `purchaseType` 0: a license tester's.
    public var isTestPurchase: Bool
    public var isAcknowledged: Bool
    public var obfuscatedExternalAccountId: String?

    public init(json: JSONObject) throws(GooglePlayAPIError) {
        guard let state = json["purchaseState"]?.int64Value else { throw .decoding("no purchaseState") }
        self.json = json
        purchaseState = state
        purchaseTime = PlayTime.instant(json["purchaseTimeMillis"])
        orderId = json["orderId"]?.stringValue
        isTestPurchase = PlayTime.number(json["purchaseType"]) == 0
        isAcknowledged = PlayTime.number(json["acknowledgementState"]) == 1
        obfuscatedExternalAccountId = json["obfuscatedExternalAccountId"]?.stringValue
    }
}

/// One entry of `purchases.voidedpurchases.list`.
public struct VoidedPurchase: Sendable, Equatable {
    public var purchaseToken: String
    public var orderId: String?
    public var voidedTime: Int64
    public var voidedReason: Int64?
}

/// Google's times: RFC 3339 text (`2024-05-01T12:00:00.123Z`) or milliseconds as a string.
public enum PlayTime {
    /// Numbers Google sends as strings (`"1714564800000"`) or as numbers.
    public static func number(_ value: JSONValue?) -> Int64? { value?.int64Value ?? value?.stringValue.flatMap { Int64($0) } }

    /// A time in epoch milliseconds sent as a number or a string; nil when out of range.
    public static func instant(_ value: JSONValue?) -> Int64? { number(value).flatMap(Milliseconds.checked) }
}
