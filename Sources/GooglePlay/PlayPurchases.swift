import Foundation
import Instants
package import JSON

/// `purchases.subscriptionsv2.get`'s answer, read into what Entitle needs; `json` keeps Google's
/// whole answer for the history.
package struct SubscriptionPurchaseV2: Sendable {
    package struct LineItem: Sendable, Equatable {
        package var productId: String
        package var expiryTime: Int64?
        package var autoRenewEnabled: Bool?
        package var basePlanId: String?
        package var offerId: String?
        package var offerTags: [String]
        /// The line item's last successful order (`GPA.…`): Google's replacement for the
        /// purchase-wide, deprecated `latestOrderId`.
        package var latestSuccessfulOrderId: String?
        /// The member `offerPhase` holds (`freeTrial`, `introductoryPrice`, `basePrice`,
        /// `prorationPeriod`, or a newer one), and for a proration period its
        /// `originalOfferPhaseType`.
        package var offerPhase: String?
        package var prorationOfPhase: String?
        /// Google's objects, as sent: a pending plan change, what this item replaced, and the
        /// auto-renewing plan's price change and price step-up.
        package var deferredItemReplacement: JSONObject?
        package var itemReplacement: JSONObject?
        package var priceChangeDetails: JSONObject?
        package var priceStepUpConsentDetails: JSONObject?
        /// `autoRenewingPlan.recurringPrice` (Google's Money: `currencyCode`, `units`, `nanos`) in
        /// milliunits: what each renewal of the plan charges.
        package var recurringPrice: PlayMoney?
    }

    package var json: JSONObject
    package var subscriptionState: String
    package var startTime: Int64?
    package var lineItems: [LineItem]
    package var linkedPurchaseToken: String?
    /// Deprecated by Google (`lineItems[].latestSuccessfulOrderId` replaces it); read only when a
    /// line item has no order of its own.
    package var latestOrderId: String?
    /// Bought by a license tester: a test purchase, Entitle's Sandbox.
    package var isTestPurchase: Bool
    package var isAcknowledged: Bool
    package var obfuscatedExternalAccountId: String?
    /// The order Google keeps trying to charge, in grace or on hold: `pendingOrderId` of
    /// `inGracePeriodStateContext` or `onHoldStateContext`, at their top or one object down.
    package var pendingOrderId: String?
    /// `outOfAppPurchaseContext`: a resubscription made outside the app (the Play Store) names
    /// the lapsed purchase it continues.
    package var expiredPurchaseToken: String?
    /// The lapsed purchase's `obfuscatedExternalAccountId`, which Google names beside it.
    package var expiredObfuscatedExternalAccountId: String?

    package init(json: JSONObject) throws(GooglePlayAPIError) {
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
                priceStepUpConsentDetails: plan?["priceStepUpConsentDetails"]?.objectValue,
                recurringPrice: PlayMoney(plan?["recurringPrice"]?.objectValue))
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
package struct ProductPurchaseV2: Sendable {
    /// One of `productLineItem[]`, with its `productOfferDetails`.
    package struct LineItem: Sendable, Equatable {
        package var productId: String
        package var purchaseOptionId: String?
        package var offerId: String?
        package var quantity: Int64?
        /// The units not refunded yet.
        package var refundableQuantity: Int64?
        package var consumptionState: String?
    }

    package var json: JSONObject
    package var lineItems: [LineItem]
    /// `purchaseStateContext.purchaseState`: `PURCHASED`, `CANCELLED`, `PENDING`, as sent.
    package var purchaseState: String
    package var purchaseTime: Int64?
    package var orderId: String?
    /// `testPurchaseContext` present: a license tester's purchase.
    package var isTestPurchase: Bool
    package var isAcknowledged: Bool
    package var obfuscatedExternalAccountId: String?

    package init(json: JSONObject) throws(GooglePlayAPIError) {
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
                quantity: PlayTime.number(offer?["quantity"], in: PlayTime.quantities),
                refundableQuantity: PlayTime.number(offer?["refundableQuantity"], in: PlayTime.quantities),
                consumptionState: offer?["consumptionState"]?.stringValue)
        }
        purchaseTime = json["purchaseCompletionTime"]?.stringValue.flatMap(Milliseconds.parse)
        orderId = json["orderId"]?.stringValue
        isTestPurchase = json["testPurchaseContext"] != nil
        isAcknowledged = json["acknowledgementState"]?.stringValue == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
        obfuscatedExternalAccountId = json["obfuscatedExternalAccountId"]?.stringValue
    }
}

/// `orders.get`'s answer, the part the figures need: `total`, what the buyer paid (as Apple's
/// `price` is the customer's price).
package struct PlayOrder: Sendable {
    package var total: PlayMoney?

    package init(json: JSONObject) { total = PlayMoney(json["total"]?.objectValue) }
}

/// Google's Money (`{"currencyCode": "EUR", "units": "4", "nanos": 990000000}`: 4.99 EUR), in
/// milliunits (Apple's unit, so that both stores' prices add up).
package struct PlayMoney: Sendable, Equatable {
    package var milliunits: Int64
    package var currency: String

    /// Nil without a currency code, or for a price outside `Milliunits.priceRange`.
    package init?(_ money: JSONObject?) {
        guard let money, let currency = money["currencyCode"]?.stringValue, CurrencyCode.isValid(currency) else { return nil }
        let maximumUnits = Milliunits.priceRange.upperBound / 1000
        guard let units = PlayTime.number(money["units"], in: 0...maximumUnits) ?? (money["units"] == nil ? 0 : nil),
            let nanos = PlayTime.number(money["nanos"], in: 0...999_999_999) ?? (money["nanos"] == nil ? 0 : nil),
            let price = Milliunits.price(units * 1000 + nanos / 1_000_000)
        else { return nil }
        milliunits = price
        self.currency = currency
    }
}

/// One entry of `purchases.voidedpurchases.list`.
package struct VoidedPurchase: Sendable, Equatable {
    package var purchaseToken: String
    package var orderId: String?
    package var voidedTime: Int64
    package var voidedReason: Int64?

    package init(purchaseToken: String, orderId: String?, voidedTime: Int64, voidedReason: Int64?) {
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.voidedTime = voidedTime
        self.voidedReason = voidedReason
    }
}

/// Google's times: RFC 3339 text (`2024-05-01T12:00:00.123Z`) or milliseconds as a string.
package enum PlayTime {
    /// Numbers Google sends as strings (`"1714564800000"`) or as numbers, checked against the
    /// range the caller accepts.
    package static func number(_ value: JSONValue?, in range: ClosedRange<Int64>) -> Int64? {
        guard let value else { return nil }
        if let text = value.stringValue { return Int64(text).flatMap { range.contains($0) ? $0 : nil } }
        return value.integer(in: range)
    }

    /// Google's enumeration codes (notification types, reasons): small non-negative numbers.
    package static let codes: ClosedRange<Int64> = 0...Int64(Int32.max)
    /// A purchase's units.
    package static let quantities: ClosedRange<Int64> = 0...Int64(Int32.max)

    /// A time in epoch milliseconds sent as a number or a string; nil when out of range.
    package static func instant(_ value: JSONValue?) -> Int64? { number(value, in: Milliseconds.range) }
}
