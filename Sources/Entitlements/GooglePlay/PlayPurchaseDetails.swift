import Instants
package import JSON

/// What Google's answers of 2025–26 add to a purchase (`subscriptionsv2`, `productsv2`), kept
/// under Google's member names and values and shown as Google says them. Entitle reads meaning
/// into a few, named where they are used: the phase's period type, the next product, the units
/// still owned, the price increase to consent to, the customer of an out-of-app resubscription.
package struct PlayPurchaseDetails: Sendable, Equatable {
    // A subscription's.
    /// The line item's `offerPhase`: `freeTrial`, `introductoryPrice`, `basePrice`,
    /// `prorationPeriod`, or a phase Google adds.
    package var offerPhase: String?
    /// For `prorationPeriod`: the phase it prorates (`originalOfferPhaseType`).
    package var prorationOfPhase: String?
    /// The order Google is still trying to charge, in grace or on hold
    /// (`inGracePeriodStateContext` / `onHoldStateContext`).
    package var pendingOrderId: String?
    /// A pending change of plan (`deferredItemReplacement`), and what this purchase replaced
    /// (`itemReplacement`), as Google sent them.
    package var deferredItemReplacement: JSONObject?
    package var itemReplacement: JSONObject?
    /// The auto-renewing plan's `priceChangeDetails` and `priceStepUpConsentDetails`, as sent.
    package var priceChangeDetails: JSONObject?
    package var priceStepUpConsentDetails: JSONObject?
    /// `outOfAppPurchaseContext.expiredPurchaseToken`: the lapsed purchase this one resubscribed,
    /// outside the app (its customer is this one's).
    package var expiredPurchaseToken: String?
    /// The plan's `autoRenewingPlan.recurringPrice`, in milliunits of `recurringPriceCurrency`.
    package var recurringPrice: Int64?
    package var recurringPriceCurrency: String?
    /// Entitle's own record, not Google's: the subscription's periods, one per order Google
    /// charged, as its reads showed them (each read names only the latest order).
    package var periods: [PlayPeriod] = []

    // A one-time product's (`productLineItem[].productOfferDetails`).
    package var purchaseOptionId: String?
    package var quantity: Int64?
    /// The units not refunded (Google lowers it for a quantity-based partial refund).
    package var refundableQuantity: Int64?
    /// A one-time product's price: its order's `total` (Orders API), in milliunits of `priceCurrency`.
    package var price: Int64?
    package var priceCurrency: String?
    /// `CONSUMPTION_STATE_YET_TO_BE_CONSUMED` or `CONSUMPTION_STATE_CONSUMED`.
    package var consumptionState: String?

    package init() {}

    package var isEmpty: Bool { self == PlayPurchaseDetails() }

    /// Entitle's period type for the phase: `TRIAL`, `INTRO` or `NORMAL` (a proration period is
    /// its original phase's); nil when Google named no phase.
    package var periodType: String? {
        switch offerPhase {
        case nil: nil
        case "freeTrial": "TRIAL"
        case "introductoryPrice": "INTRO"
        case "prorationPeriod": Self.periodType(ofOriginalPhase: prorationOfPhase)
        default: "NORMAL"
        }
    }

    /// `originalOfferPhaseType` is Google's enum (`FREE_TRIAL`, `INTRODUCTORY`, `BASE`, …).
    private static func periodType(ofOriginalPhase phase: String?) -> String {
        switch phase?.uppercased() {
        case let phase? where phase.contains("FREE_TRIAL") || phase.contains("FREETRIAL"): "TRIAL"
        case let phase? where phase.contains("INTRODUCTORY"): "INTRO"
        default: "NORMAL"
        }
    }

    /// The units the customer still owns of a one-time product: those not refunded.
    package var entitledQuantity: Int64? { refundableQuantity ?? quantity }

    /// The product the subscription changes to at its next renewal.
    package var nextProductId: String? { deferredItemReplacement?["productId"]?.stringValue }

    /// A price increase the customer has to accept before it applies, waiting for them: a price
    /// step-up whose consent is `PENDING`, or an opt-in `PRICE_INCREASE` still `OUTSTANDING`.
    package var pendingPriceIncrease: PendingPriceIncrease? {
        if let stepUp = priceStepUpConsentDetails, stepUp["state"]?.stringValue == "PENDING" {
            return PendingPriceIncrease(
                consentDeadline: stepUp["consentDeadlineTime"]?.stringValue.flatMap(Milliseconds.parse),
                newPrice: stepUp["newPrice"]?.objectValue, kind: "PRICE_STEP_UP")
        }
        if let change = priceChangeDetails, change["priceChangeMode"]?.stringValue == "PRICE_INCREASE",
            change["priceChangeState"]?.stringValue == "OUTSTANDING"
        {
            return PendingPriceIncrease(consentDeadline: nil, newPrice: change["newPrice"]?.objectValue, kind: "PRICE_INCREASE")
        }
        return nil
    }

    /// Google's members, for storage and for the answers (the same names in both).
    package func write<Object: JSONObjectBuilder>(into object: inout Object) {
        object.set("offerPhase", ifPresent: offerPhase)
        object.set("prorationOfPhase", ifPresent: prorationOfPhase)
        object.set("pendingOrderId", ifPresent: pendingOrderId)
        if let deferredItemReplacement { object.set("deferredItemReplacement", json: .object(deferredItemReplacement)) }
        if let itemReplacement { object.set("itemReplacement", json: .object(itemReplacement)) }
        if let priceChangeDetails { object.set("priceChangeDetails", json: .object(priceChangeDetails)) }
        if let priceStepUpConsentDetails { object.set("priceStepUpConsentDetails", json: .object(priceStepUpConsentDetails)) }
        object.set("expiredPurchaseToken", ifPresent: expiredPurchaseToken)
        object.set("recurringPrice", ifPresent: recurringPrice)
        object.set("recurringPriceCurrency", ifPresent: recurringPriceCurrency)
        if !periods.isEmpty { object.set("periods", json: .array(periods.map { .object($0.json) })) }
        object.set("purchaseOptionId", ifPresent: purchaseOptionId)
        object.set("quantity", ifPresent: quantity)
        object.set("refundableQuantity", ifPresent: refundableQuantity)
        object.set("consumptionState", ifPresent: consumptionState)
        object.set("price", ifPresent: price)
        object.set("priceCurrency", ifPresent: priceCurrency)
    }

    /// From what `write` wrote.
    package init(stored json: JSONObject) {
        offerPhase = json["offerPhase"]?.stringValue
        prorationOfPhase = json["prorationOfPhase"]?.stringValue
        pendingOrderId = json["pendingOrderId"]?.stringValue
        deferredItemReplacement = json["deferredItemReplacement"]?.objectValue
        itemReplacement = json["itemReplacement"]?.objectValue
        priceChangeDetails = json["priceChangeDetails"]?.objectValue
        priceStepUpConsentDetails = json["priceStepUpConsentDetails"]?.objectValue
        expiredPurchaseToken = json["expiredPurchaseToken"]?.stringValue
        recurringPrice = json["recurringPrice"]?.integer(in: Milliunits.priceRange)
        recurringPriceCurrency = json["recurringPriceCurrency"]?.stringValue
        periods = json["periods"]?.arrayValue?.compactMap { $0.objectValue.flatMap(PlayPeriod.init(json:)) } ?? []
        purchaseOptionId = json["purchaseOptionId"]?.stringValue
        quantity = json["quantity"]?.integer(in: 0...Int64(Int32.max))
        refundableQuantity = json["refundableQuantity"]?.integer(in: 0...Int64(Int32.max))
        consumptionState = json["consumptionState"]?.stringValue
        price = json["price"]?.integer(in: Milliunits.priceRange)
        priceCurrency = json["priceCurrency"]?.stringValue
    }

    /// As stored: JSON text, nil when there is nothing.
    package var storedText: String? {
        guard !isEmpty else { return nil }
        var writer = JSONObjectWriter(capacity: 256)
        write(into: &writer)
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    /// From what `storedText` wrote (none, or damaged: no details).
    package init(storedText text: String?) {
        guard let json = JSONParser.storedObject(text) else {
            self.init()
            return
        }
        self.init(stored: json)
    }
}

/// A price increase waiting for the customer's consent.
package struct PendingPriceIncrease: Sendable, Equatable {
    /// Google's `consentDeadlineTime`, epoch milliseconds, when it gave one.
    package var consentDeadline: Int64?
    /// Google's `newPrice` (`currencyCode`, `units`, `nanos`).
    package var newPrice: JSONObject?
    /// `PRICE_STEP_UP` (consent by a deadline) or `PRICE_INCREASE` (an opt-in price change).
    package var kind: String
}
