import AppStore
import Instants
import JSON

/// What the developer would like the store to do with a refund request.
package enum RefundPreference: String, Sendable, CaseIterable {
    case grantFull = "GRANT_FULL"
    case grantProrated = "GRANT_PRORATED"
    case decline = "DECLINE"
    /// Send no preference: the store decides alone.
    case none = "NONE"
}

/// One rule of an app's refund policy: when every condition given holds, `prefer`.
package struct RefundRule: Sendable, Equatable {
    package var name: String?
    package var reasons: Set<String>?
    package var hoursSincePurchaseAtMost: Double?
    package var consumedAtLeast: Double?
    package var delivered: Bool?
    package var refundsInLast365DaysAtLeast: Int?
    /// `subscription`, `consumable`, `nonConsumable` or `nonRenewing`.
    package var productType: String?
    package var store: String?
    package var prefer: RefundPreference

    package init(
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

    package static let productTypes: Set<String> = ["subscription", "consumable", "nonConsumable", "nonRenewing"]
    package static let appleReasons: Set<String> = [
        "UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
    ]
}

/// Everything known of one refund request when it is answered.
package struct RefundCase: Sendable {
    package var request: RefundRequest
    /// `subscription`, `consumable`, `nonConsumable`, `nonRenewing` (nil: the purchase is unknown).
    package var productType: String?
    package var purchaseDate: Int64?
    package var now: Int64
    /// The app's usage records of this purchase, oldest first.
    package var usage: [UsageRecord]
    /// Refunds the customer received in the 365 days before `now`, of either store.
    package var refundsInLast365Days: Int
    package var override: RefundOverride?
    package var sampleContentProvided: Bool

    package init(
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
    package var consumedPercent: Double? { usage.last { $0.consumedPercent != nil }?.consumedPercent }
    package var delivery: UsageRecord? { usage.last { $0.delivered != nil } }
    package var delivered: Bool? { delivery?.delivered }

    /// The kind of product a transaction type is.
    package static func productType(ofAppleType type: String) -> String? {
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
package struct RefundDecision: Sendable, Equatable {
    package var preference: RefundPreference
    /// `override`, `rule <name or number>`, or `default` (no rule matched).
    package var decidedBy: String

    package init(preference: RefundPreference, decidedBy: String) {
        self.preference = preference
        self.decidedBy = decidedBy
    }
}

/// An app's refund policy (`apps[].refunds`): the customer's consent, and rules, first match wins.
package struct RefundPolicy: Sendable, Equatable {
    /// The app's terms obtain the customer's consent to share usage data: without it Entitle does
    /// not answer Apple (Apple requires `customerConsented`) and sends Google no usage events.
    package var customerConsent: Bool
    package var rules: [RefundRule]

    package init(customerConsent: Bool = false, rules: [RefundRule] = []) {
        self.customerConsent = customerConsent
        self.rules = rules
    }

    /// The override first, then the rules in order; `NONE` when none matches.
    package func decide(_ refund: RefundCase) -> RefundDecision {
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
