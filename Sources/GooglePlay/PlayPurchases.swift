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
        /// The member `offerPhase` holds (`freeTrial`, `introductoryPrice`, `basePrice`,
        /// `prorationPeriod`, or a newer one), and for a proration period its
        /// `originalOfferPhaseType`.
        public var offerPhase: String?
        public var prorationOfPhase: String?
        /// Google's objects, as sent: a pending plan change, what this item replaced, and the
        /// auto-renewing plan's price change and price step-up.
        public var deferredItemReplacement: JSONObject?
        public var itemReplacement: JSONObject?
        public var priceChangeDetails: JSONObject?
        public var priceStepUpConsentDetails: JSONObject?
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
    /// The order Google keeps trying to charge, in grace or on hold: `pendingOrderId` of
    /// `inGracePeriodStateContext` or `onHoldStateContext`, at their top or one object down.
    public var pendingOrderId: String?
    /// `outOfAppPurchaseContext`: a resubscription made outside the app (the Play Store) names
    /// the lapsed purchase it continues.
    public var expiredPurchaseToken: String?
    /// The lapsed purchase's `obfuscatedExternalAccountId`, which Google names beside it.
    public var expiredObfuscatedExternalAccountId: String?

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
            let plan = item["autoRenewingPlan"]?.objectValue
            let phase = item["offerPhase"]?.objectValue?.members.first
            return LineItem(
                productId: product, expiryTime: item["expiryTime"]?.stringValue.flatMap(Milliseconds.parse),
                autoRenewEnabled: plan?["autoRenewEnabled"]?.boolValue,
                basePlanId: offer?["basePlanId"]?.stringValue, offerId: offer?["offerId"]?.stringValue,
                offerTags: offer?["offerTags"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                latestSuccessfulOrderId: item["latestSuccessfulOrderId"]?.stringValue, offerPhase: phase?.key,
                prorationOfPhase: phase?.value["originalOfferPhaseType"]?.stringValue,
                deferredItemReplacement: item["deferredItemReplacement"]?.objectValue,
                itemReplacement: item["itemReplacement"]?.objectValue,
                priceChangeDetails: plan?["priceChangeDetails"]?.objectValue,
                priceStepUpConsentDetails: plan?["priceStepUpConsentDetails"]?.objectValue)
        }
        linkedPurchaseToken = json["linkedPurchaseToken"]?.stringValue
        latestOrderId = json["latestOrderId"]?.stringValue
        isTestPurchase = json["testPurchase"] != nil
        isAcknowledged = json["acknowledgementState"]?.stringValue == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
        obfuscatedExternalAccountId = json["externalAccountIdentifiers"]?["obfuscatedExternalAccountId"]?.stringValue
        pendingOrderId =
            ["inGracePeriodStateContext", "onHoldStateContext"].lazy.compactMap { json[$0]?.objectValue }
            .compactMap { context in
                context["pendingOrderId"]?.stringValue
                    ?? context.members.lazy.compactMap { $0.value["pendingOrderId"]?.stringValue }.first
            }.first
        let outOfApp = json["outOfAppPurchaseContext"]?.objectValue
        expiredPurchaseToken = outOfApp?["expiredPurchaseToken"]?.stringValue
        expiredObfuscatedExternalAccountId =
            outOfApp?["expiredExternalAccountIdentifiers"]?["obfuscatedExternalAccountId"]?.stringValue
    }
}

/// `purchases.productsv2.getproductpurchasev2`'s answer (a one-time product: Google's
/// replacement of `purchases.products.get`, with purchase options and quantities).
public struct ProductPurchaseV2: Sendable {
    /// One of `productLineItem[]`, with its `productOfferDetails`.
    public struct LineItem: Sendable, Equatable {
        public var productId: String
        public var purchaseOptionId: String?
        public var offerId: String?
        public var quantity: Int64?
        /// The units not refunded yet.
        public var refundableQuantity: Int64?
        public var consumptionState: String?
    }

    public var json: JSONObject
    public var lineItems: [LineItem]
    /// `purchaseStateContext.purchaseState`: `PURCHASED`, `CANCELLED`, `PENDING`, as sent.
    public var purchaseState: String
    public var purchaseTime: Int64?
    public var orderId: String?
    /// `testPurchaseContext` present: a license tester's purchase.
    public var isTestPurchase: Bool
    public var isAcknowledged: Bool
    public var obfuscatedExternalAccountId: String?

    public init(json: JSONObject) throws(GooglePlayAPIError) {
        guard let state = json["purchaseStateContext"]?["purchaseState"]?.stringValue else {
            throw .decoding("no purchaseStateContext.purchaseState")
        }
        let items = json["productLineItem"]?.arrayValue?.compactMap(\.objectValue) ?? []
        guard !items.isEmpty else { throw .decoding("no productLineItem") }
        self.json = json
        purchaseState = state
        lineItems = try items.map { item throws(GooglePlayAPIError) in
            guard let product = item["productId"]?.stringValue else { throw .decoding("a line item without productId") }
            let offer = item["productOfferDetails"]?.objectValue
            return LineItem(
                productId: product, purchaseOptionId: offer?["purchaseOptionId"]?.stringValue, offerId: offer?["offerId"]?.stringValue,
                quantity: PlayTime.number(offer?["quantity"]), refundableQuantity: PlayTime.number(offer?["refundableQuantity"]),
                consumptionState: offer?["consumptionState"]?.stringValue)
        }
        purchaseTime = json["purchaseCompletionTime"]?.stringValue.flatMap(Milliseconds.parse)
        orderId = json["orderId"]?.stringValue
        isTestPurchase = json["testPurchaseContext"] != nil
        isAcknowledged = json["acknowledgementState"]?.stringValue == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
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
