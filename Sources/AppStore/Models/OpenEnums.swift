/// Apple's enums are open: a value this version does not know still decodes, keeps its raw value
/// and is written back unchanged (APPSTORE.md §4.1, P-24). Each type lists the values it knows.
public protocol OpenEnum: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue: Hashable & Sendable {
    static var knownValues: [RawValue] { get }
}

extension OpenEnum {
    public var isKnown: Bool { Self.knownValues.contains(rawValue) }
    public var description: String { "\(rawValue)" }
}

public struct AppStoreEnvironment: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let sandbox = Self(rawValue: "Sandbox")
    public static let production = Self(rawValue: "Production")
    public static let xcode = Self(rawValue: "Xcode")
    public static let localTesting = Self(rawValue: "LocalTesting")
    public static let knownValues = ["Sandbox", "Production", "Xcode", "LocalTesting"]

    /// Production and Sandbox data is signed by Apple; Xcode and LocalTesting data is unsigned by
    /// design (StoreKit testing), so only its identity can be checked.
    public var isSigned: Bool { self == .production || self == .sandbox }
    /// Whether the App Store Server API serves this environment.
    public var hasServerAPI: Bool { isSigned }
    /// All four, in the order answers list them (Production first).
    public static let all: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting]
}

public struct NotificationTypeV2: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = [
        "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED",
        "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED", "CONSUMPTION_REQUEST",
        "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED", "EXTERNAL_PURCHASE_TOKEN",
        "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
    ]
}

public struct NotificationSubtype: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = [
        "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY",
        "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED", "BILLING_RECOVERY",
        "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED",
    ]
}

public struct ProductType: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let autoRenewable = Self(rawValue: "Auto-Renewable Subscription")
    public static let nonConsumable = Self(rawValue: "Non-Consumable")
    public static let consumable = Self(rawValue: "Consumable")
    public static let nonRenewing = Self(rawValue: "Non-Renewing Subscription")
    public static let knownValues = ["Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription"]
}

public struct InAppOwnershipType: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = ["FAMILY_SHARED", "PURCHASED"]
}

public struct TransactionReason: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = ["PURCHASE", "RENEWAL"]
}

/// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
public struct OfferType: OpenEnum {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let knownValues: [Int64] = [1, 2, 3, 4]
}

public struct OfferDiscountType: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = ["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME"]
}

/// 0 another reason, 1 an issue in the app.
public struct RevocationReason: OpenEnum {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let knownValues: [Int64] = [0, 1]
}

public struct RevocationType: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = ["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"]
}

/// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
public struct SubscriptionStatus: OpenEnum {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let knownValues: [Int64] = [1, 2, 3, 4, 5]
}

/// 1 cancelled, 2 billing error, 3 no consent to a price increase, 4 product unavailable, 5 other.
public struct ExpirationIntent: OpenEnum {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let knownValues: [Int64] = [1, 2, 3, 4, 5]
}

/// 0 off, 1 on.
public struct AutoRenewStatus: OpenEnum {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let knownValues: [Int64] = [0, 1]
}

/// 0 not responded, 1 consented or notified.
public struct PriceIncreaseStatus: OpenEnum {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let knownValues: [Int64] = [0, 1]
}

public struct BillingPlanType: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = ["BILLED_UPFRONT", "MONTHLY"]
}

public struct PurchasePlatform: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = ["iOS", "macOS", "tvOS", "visionOS"]
}

public struct ConsumptionRequestReason: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let knownValues = ["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER"]
}
