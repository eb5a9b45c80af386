/// Apple's enums are open: a value this version does not know still decodes, keeps its raw value
/// and is written back unchanged (docs/APP_STORE.md §4.1, P-24). Each type lists the values it knows.
package protocol OpenEnum: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue: Hashable & Sendable {
    static var knownValues: [RawValue] { get }
}

extension OpenEnum {
    package var isKnown: Bool { Self.knownValues.contains(rawValue) }
    package var description: String { "\(rawValue)" }
}

package struct AppStoreEnvironment: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let sandbox = Self(rawValue: "Sandbox")
    package static let production = Self(rawValue: "Production")
    package static let xcode = Self(rawValue: "Xcode")
    package static let localTesting = Self(rawValue: "LocalTesting")
    package static let knownValues = ["Sandbox", "Production", "Xcode", "LocalTesting"]

    /// Production and Sandbox data is signed by Apple; Xcode and LocalTesting data is unsigned by
    /// design (StoreKit testing), so only its identity can be checked.
    package var isSigned: Bool { self == .production || self == .sandbox }
    /// Whether the App Store Server API serves this environment.
    package var hasServerAPI: Bool { isSigned }
    /// All four, in the order answers list them (Production first).
    package static let all: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting]
}

package struct NotificationTypeV2: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = [
        "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED",
        "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED", "CONSUMPTION_REQUEST",
        "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED", "EXTERNAL_PURCHASE_TOKEN",
        "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
    ]
}

package struct NotificationSubtype: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = [
        "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY",
        "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED", "BILLING_RECOVERY",
        "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED",
    ]
}

package struct ProductType: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let autoRenewable = Self(rawValue: "Auto-Renewable Subscription")
    package static let nonConsumable = Self(rawValue: "Non-Consumable")
    package static let consumable = Self(rawValue: "Consumable")
    package static let nonRenewing = Self(rawValue: "Non-Renewing Subscription")
    package static let knownValues = ["Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription"]
}

package struct InAppOwnershipType: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = ["FAMILY_SHARED", "PURCHASED"]
}

package struct TransactionReason: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = ["PURCHASE", "RENEWAL"]
}

/// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
package struct OfferType: OpenEnum {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }
    package static let knownValues: [Int64] = [1, 2, 3, 4]
}

package struct OfferDiscountType: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = ["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME"]
}

/// 0 another reason, 1 an issue in the app.
package struct RevocationReason: OpenEnum {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }
    package static let knownValues: [Int64] = [0, 1]
}

package struct RevocationType: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = ["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"]
}

/// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
package struct SubscriptionStatus: OpenEnum {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }
    package static let knownValues: [Int64] = [1, 2, 3, 4, 5]
}

/// 1 cancelled, 2 billing error, 3 no consent to a price increase, 4 product unavailable, 5 other.
package struct ExpirationIntent: OpenEnum {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }
    package static let knownValues: [Int64] = [1, 2, 3, 4, 5]
}

/// 0 off, 1 on.
package struct AutoRenewStatus: OpenEnum {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }
    package static let knownValues: [Int64] = [0, 1]
}

/// 0 not responded, 1 consented or notified.
package struct PriceIncreaseStatus: OpenEnum {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }
    package static let knownValues: [Int64] = [0, 1]
}

package struct BillingPlanType: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = ["BILLED_UPFRONT", "MONTHLY"]
}

package struct PurchasePlatform: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = ["iOS", "macOS", "tvOS", "visionOS"]
}

package struct ConsumptionRequestReason: OpenEnum {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package static let knownValues = ["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER"]
}
