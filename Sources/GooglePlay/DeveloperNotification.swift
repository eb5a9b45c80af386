package import JSON

/// A real-time developer notification (the JSON of a Pub/Sub message's `data`): which kind it is,
/// its type under Google's name, and the purchase it names. Every kind and type is named, the ones
/// Google adds later too (by their member or number), so each can be stored and listed.
package struct DeveloperNotification: Sendable {
    package enum Kind: String, Sendable {
        case subscription, oneTimeProduct, voidedPurchase, test
        /// A customer asked for a refund and Google asks the developer (`pendingRefundReviewNotification`).
        case pendingRefundReview
        /// A kind this version does not read (Google adds them: refund reviews, …).
        case other
    }

    package var json: JSONObject
    package var kind: Kind
    /// `SUBSCRIPTION_RENEWED`, `ONE_TIME_PRODUCT_PURCHASED`, `VOIDED_PURCHASE`, `TEST_NOTIFICATION`;
    /// `SUBSCRIPTION_NOTIFICATION_TYPE_<n>` for a number Google adds; for another kind, its member
    /// (`pendingRefundReviewNotification`).
    package var typeName: String
    /// The subscription or one-time notification's `notificationType`.
    package var type: Int64?
    package var purchaseToken: String?
    /// `subscriptionId` (deprecated by Google, may be absent: the re-read names the product) or `sku`.
    package var productId: String?
    package var eventTime: Int64?
    /// A voided purchase's `productType` (1 subscription, 2 one-time) and `refundType` (1 full,
    /// 2 a quantity-based partial refund).
    package var voidedProductType: Int64?
    package var refundType: Int64?
    /// A pending refund review's `pendingRefundToken`, `orderId`, `refundReason` and the
    /// customer's `obfuscatedAccountId`.
    package var pendingRefundToken: String?
    package var orderId: String?
    package var refundReason: Int64?
    package var obfuscatedAccountId: String?

    package init(_ json: JSONObject) {
        self.json = json
        eventTime = PlayTime.instant(json["eventTimeMillis"])
        if json["testNotification"] != nil {
            kind = .test
            typeName = "TEST_NOTIFICATION"
        } else if let subscription = json["subscriptionNotification"]?.objectValue {
            kind = .subscription
            type = PlayTime.number(subscription["notificationType"], in: PlayTime.codes)
            typeName = Self.subscriptionTypes[type ?? -1] ?? "SUBSCRIPTION_NOTIFICATION_TYPE_\(type.map(String.init) ?? "?")"
            purchaseToken = subscription["purchaseToken"]?.stringValue
            productId = subscription["subscriptionId"]?.stringValue
        } else if let product = json["oneTimeProductNotification"]?.objectValue {
            kind = .oneTimeProduct
            type = PlayTime.number(product["notificationType"], in: PlayTime.codes)
            typeName = Self.oneTimeTypes[type ?? -1] ?? "ONE_TIME_PRODUCT_NOTIFICATION_TYPE_\(type.map(String.init) ?? "?")"
            purchaseToken = product["purchaseToken"]?.stringValue
            productId = product["sku"]?.stringValue
        } else if let voided = json["voidedPurchaseNotification"]?.objectValue {
            kind = .voidedPurchase
            typeName = "VOIDED_PURCHASE"
            purchaseToken = voided["purchaseToken"]?.stringValue
            voidedProductType = PlayTime.number(voided["productType"], in: PlayTime.codes)
            refundType = PlayTime.number(voided["refundType"], in: PlayTime.codes)
        } else if let review = json["pendingRefundReviewNotification"]?.objectValue {
            kind = .pendingRefundReview
            typeName = "PENDING_REFUND_REVIEW"
            pendingRefundToken = review["pendingRefundToken"]?.stringValue
            orderId = review["orderId"]?.stringValue
            refundReason = PlayTime.number(review["refundReason"], in: PlayTime.codes)
            obfuscatedAccountId = review["obfuscatedAccountId"]?.stringValue
        } else {
            kind = .other
            typeName = json.members.map(\.key).first { $0.hasSuffix("Notification") } ?? "UNKNOWN"
        }
    }

    /// Google's `SubscriptionNotification.notificationType` values (8 is deprecated but named).
    package static let subscriptionTypes: [Int64: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED",
        8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED",
        11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED", 13: "SUBSCRIPTION_EXPIRED",
        17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED", 19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
        20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]

    /// Google's `OneTimeProductNotification.notificationType` values.
    package static let oneTimeTypes: [Int64: String] = [1: "ONE_TIME_PRODUCT_PURCHASED", 2: "ONE_TIME_PRODUCT_CANCELED"]

    /// SUBSCRIPTION_REVOKED: Google's re-read says only EXPIRED; the notification is what tells a
    /// revocation (a refund that ends access) from an end of term.
    package var revokesSubscription: Bool { kind == .subscription && type == 12 }

    /// A voided purchase that refunded only some of a one-time purchase's units: the purchase
    /// stands, with fewer units (the re-read's `refundableQuantity`).
    package var isPartialRefund: Bool { kind == .voidedPurchase && refundType == 2 }
}
