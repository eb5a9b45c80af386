import AppStore
import Instants
import JSON

/// What the developer would like the store to do with a refund request.
public enum RefundPreference: String, Sendable, CaseIterable {
    case grantFull = "GRANT_FULL"
    case grantProrated = "GRANT_PRORATED"
    case decline = "DECLINE"
    /// Send no preference: the store decides alone.
    case none = "NONE"
}

/// One rule of an app's refund policy: when every condition given holds, `prefer`.
public struct RefundRule: Sendable, Equatable {
    public var name: String?
    public var reasons: Set<String>?
    public var hoursSincePurchaseAtMost: Double?
    public var consumedAtLeast: Double?
    public var delivered: Bool?
    public var refundsInLast365DaysAtLeast: Int?
    /// `subscription`, `consumable`, `nonConsumable` or `nonRenewing`.
    public var productType: String?
    public var store: String?
    public var prefer: RefundPreference

    public init(
        name: String? = nil, reasons: Set<String>? = nil, hoursSincePurchaseAtMost: Double? = nil, consumedAtLeast: Double? = nil,
        delivered: Bool? = nil, refundsInLast365DaysAtLeast: Int? = nil, productType: String? = nil, store: String? = nil,
        prefer: RefundPreference
    ) {
        self.name = name
        self.reasons = reasons
        self.hoursSincePurchaseAtMost = hoursSincePurchaseAtMost
        self.consumedAtLeast = consumedAtLeast
        self.delivered = delivered
        self.refundsInLast365DaysAtLeast = refundsInLast365DaysAtLeast
        self.productType = productType
        self.store = store
        self.prefer = prefer
    }

    public static let productTypes: Set<String> = ["subscription", "consumable", "nonConsumable", "nonRenewing"]
    public static let appleReasons: Set<String> = [
        "UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
    ]
}

/// Everything known of one refund request when it is answered.
public struct RefundCase: Sendable {
    public var request: RefundRequest
    /// `subscription`, `consumable`, `nonConsumable`, `nonRenewing` (nil: the purchase is unknown).
    public var productType: String?
    public var purchaseDate: Int64?
    public var now: Int64
    /// The app's usage records of this purchase, oldest first.
    public var usage: [UsageRecord]
    /// Refunds the customer received in the 365 days before `now`, of either store.
    public var refundsInLast365Days: Int
    public var override: RefundOverride?
    public var sampleContentProvided: Bool

    public init(
        request: RefundRequest, productType: String?, purchaseDate: Int64?, now: Int64, usage: [UsageRecord],
        refundsInLast365Days: Int, override: RefundOverride?, sampleContentProvided: Bool
    ) {
        self.request = request
        self.productType = productType
        self.purchaseDate = purchaseDate
        self.now = now
        self.usage = usage
        self.refundsInLast365Days = refundsInLast365Days
        self.override = override
        self.sampleContentProvided = sampleContentProvided
    }

    /// The latest statement of each kind the app made: how much was used, whether it was delivered.
    public var consumedPercent: Double? { usage.last { $0.consumedPercent != nil }?.consumedPercent }
    public var delivery: UsageRecord? { usage.last { $0.delivered != nil } }
    public var delivered: Bool? { delivery?.delivered }

    /// The kind of product a transaction type is.
    public static func productType(ofAppleType type: String) -> String? {
        switch type {
        case ProductType.autoRenewable.rawValue: "subscription"
        case ProductType.consumable.rawValue: "consumable"
        case ProductType.nonConsumable.rawValue: "nonConsumable"
        case ProductType.nonRenewing.rawValue: "nonRenewing"
        default: nil
        }
    }
}

/// The decision for one request: what to prefer, and which rule (or the override) decided.
public struct RefundDecision: Sendable, Equatable {
    public var preference: RefundPreference
    /// `override`, `rule <name or number>`, or `default` (no rule matched).
    public var decidedBy: String

    public init(preference: RefundPreference, decidedBy: String) {
        self.preference = preference
        self.decidedBy = decidedBy
    }
}

/// An app's refund policy (`apps[].refunds`): the customer's consent, and rules, first match wins.
public struct RefundPolicy: Sendable, Equatable {
    /// The app's terms obtain the customer's consent to share usage data: without it Entitle does
    /// not answer Apple (Apple requires `customerConsented`) and sends Google no usage events.
    public var customerConsent: Bool
    public var rules: [RefundRule]

    public init(customerConsent: Bool = false, rules: [RefundRule] = []) {
        self.customerConsent = customerConsent
        self.rules = rules
    }

    /// The override first, then the rules in order; `NONE` when none matches.
    public func decide(_ refund: RefundCase) -> RefundDecision {
        switch refund.override?.override {
        case "ALWAYS_GRANT": return RefundDecision(preference: .grantFull, decidedBy: "override")
        case "ALWAYS_DECLINE": return RefundDecision(preference: .decline, decidedBy: "override")
        case "NO_PREFERENCE": return RefundDecision(preference: .none, decidedBy: "override")
        default: break
        }
        for (index, rule) in rules.enumerated() where Self.matches(rule, refund) {
            return RefundDecision(preference: rule.prefer, decidedBy: "rule \(rule.name ?? String(index + 1))")
        }
        return RefundDecision(preference: .none, decidedBy: "default")
    }

    /// Every condition the rule gives holds; one that cannot be judged (no purchase date, no
    /// usage recorded) does not.
    static func matches(_ rule: RefundRule, _ refund: RefundCase) -> Bool {
        if let reasons = rule.reasons, !reasons.contains(refund.request.reason) { return false }
        if let hours = rule.hoursSincePurchaseAtMost {
            guard let purchased = refund.purchaseDate, Double(refund.now - purchased) / 3_600_000 <= hours else { return false }
        }
        if let least = rule.consumedAtLeast {
            guard let consumed = refund.consumedPercent, consumed >= least else { return false }
        }
        if let delivered = rule.delivered, refund.delivered != delivered { return false }
        if let least = rule.refundsInLast365DaysAtLeast, refund.refundsInLast365Days < least { return false }
        if let type = rule.productType, refund.productType != type { return false }
        if let store = rule.store, refund.request.store != store { return false }
        return true
    }
}
