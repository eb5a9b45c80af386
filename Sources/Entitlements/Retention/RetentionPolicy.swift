import Instants

/// What the cancellation page shows, as Apple's realtime answer names it.
package enum RetentionAnswer: Sendable, Equatable {
    case message(messageIdentifier: String)
    case alternateProduct(messageIdentifier: String, productId: String, billingPlanType: String?)
    /// A catalog offer (`offerId`), signed for the customer when they may have it.
    case promotionalOffer(messageIdentifier: String, offerId: String)

    package var kind: String {
        switch self {
        case .message: "message"
        case .alternateProduct: "alternateProduct"
        case .promotionalOffer: "promotionalOffer"
        }
    }

    package var messageIdentifier: String {
        switch self {
        case .message(let id), .alternateProduct(let id, _, _), .promotionalOffer(let id, _): id
        }
    }

    package var isPromotionalOffer: Bool { if case .promotionalOffer = self { true } else { false } }
}

/// One rule of an app's retention policy: when every condition given holds, `answer`.
package struct RetentionRule: Sendable, Equatable {
    package var name: String?
    package var productIds: Set<String>?
    package var inTrial: Bool?
    package var monthsSubscribedAtLeast: Double?
    package var billingIssue: Bool?
    package var autoRenewOff: Bool?
    /// `en-US`, or a language (`en`) that covers its regions.
    package var locales: Set<String>?
    package var redeemedOfferBefore: Bool?
    package var answer: RetentionAnswer

    package init(
        name: String? = nil, productIds: Set<String>? = nil, inTrial: Bool? = nil, monthsSubscribedAtLeast: Double? = nil,
        billingIssue: Bool? = nil, autoRenewOff: Bool? = nil, locales: Set<String>? = nil, redeemedOfferBefore: Bool? = nil,
        answer: RetentionAnswer
    ) {
        self.name = name
        self.productIds = productIds
        self.inTrial = inTrial
        self.monthsSubscribedAtLeast = monthsSubscribedAtLeast
        self.billingIssue = billingIssue
        self.autoRenewOff = autoRenewOff
        self.locales = locales
        self.redeemedOfferBefore = redeemedOfferBefore
        self.answer = answer
    }
}

/// What is known of the customer when Apple asks.
package struct RetentionCase: Sendable {
    /// The subscription as it stands now (nil: Entitle has none stored).
    package var subscription: SubscriptionState?
    /// Its transactions (for offers redeemed before).
    package var transactions: [TransactionRecord]
    package var productId: String
    package var locale: String
    package var now: Int64
    /// When a promotional offer was last answered to this subscription.
    package var lastOfferAt: Int64?

    package init(
        subscription: SubscriptionState?, transactions: [TransactionRecord], productId: String, locale: String, now: Int64,
        lastOfferAt: Int64?
    ) {
        self.subscription = subscription
        self.transactions = transactions
        self.productId = productId
        self.locale = locale
        self.now = now
        self.lastOfferAt = lastOfferAt
    }
}

/// The decision: the answer and the rule that chose it (`default` when none did).
package struct RetentionDecision: Sendable, Equatable {
    package var answer: RetentionAnswer
    package var rule: String

    package init(answer: RetentionAnswer, rule: String) {
        self.answer = answer
        self.rule = rule
    }
}

/// An app's retention policy (`apps[].retention`): ordered rules, first match wins, else the
/// default message. A promotional offer is answered only to a subscription Entitle knows whose
/// customer its catalog rule admits, and not to the same subscription again within
/// `offerCooldownDays`; otherwise the next rule.
package struct RetentionPolicy: Sendable, Equatable {
    package var defaultMessage: String
    package var offerCooldownDays: Int
    /// How long after an answer a save is attributed to it.
    package var saveWindowDays: Int
    package var rules: [RetentionRule]

    package init(defaultMessage: String, offerCooldownDays: Int = 30, saveWindowDays: Int = 7, rules: [RetentionRule] = []) {
        self.defaultMessage = defaultMessage
        self.offerCooldownDays = offerCooldownDays
        self.saveWindowDays = saveWindowDays
        self.rules = rules
    }

    /// `offerCooldownDays` in milliseconds.
    package var offerCooldown: Int64 { Int64(offerCooldownDays) * 86_400_000 }

    /// Whether an offer answered at `lastOfferAt` keeps another from being answered at `now`
    /// (the one cooldown rule: the policy's decision and the writer's check both ask it).
    package static func offerCooling(lastOfferAt: Int64, now: Int64, cooldown: Int64) -> Bool { now - lastOfferAt < cooldown }

    /// `offerEligible`: whether the customer passes the catalog offer's eligibility rule.
    package func decide(_ retention: RetentionCase, offerEligible: (String) -> Bool) -> RetentionDecision {
        for (index, rule) in rules.enumerated() where Self.matches(rule, retention) {
            if case .promotionalOffer(_, let offerId) = rule.answer {
                // An offer's eligibility and cooldown are judged on the subscription: one Entitle
                // has not stored gets none, whatever else the rule names (a product alone matched).
                guard retention.subscription != nil else { continue }
                let cooling = retention.lastOfferAt.map { Self.offerCooling(lastOfferAt: $0, now: retention.now, cooldown: offerCooldown) }
                guard cooling != true, offerEligible(offerId) else { continue }
            }
            return RetentionDecision(answer: rule.answer, rule: rule.name ?? String(index + 1))
        }
        return RetentionDecision(answer: .message(messageIdentifier: defaultMessage), rule: "default")
    }

    static func matches(_ rule: RetentionRule, _ retention: RetentionCase) -> Bool {
        let subscription = retention.subscription
        // A condition on the subscription cannot be judged without one: it does not hold.
        let asksSubscription = [rule.inTrial, rule.billingIssue, rule.autoRenewOff, rule.redeemedOfferBefore].contains { $0 != nil }
        if subscription == nil && (asksSubscription || rule.monthsSubscribedAtLeast != nil) { return false }
        if let products = rule.productIds, !products.contains(retention.productId) { return false }
        if let inTrial = rule.inTrial, (subscription?.periodType == "TRIAL") != inTrial { return false }
        if let months = rule.monthsSubscribedAtLeast {
            guard let start = subscription?.originalPurchaseDate, Double(retention.now - start) / averageMonth >= months else {
                return false
            }
        }
        if let issue = rule.billingIssue, (subscription?.billingIssueDetectedAt != nil) != issue { return false }
        if let off = rule.autoRenewOff, (subscription.map { !$0.willRenew } ?? false) != off { return false }
        if let locales = rule.locales {
            let language = retention.locale.split(separator: "-").first.map(String.init) ?? retention.locale
            guard locales.contains(retention.locale) || locales.contains(language) else { return false }
        }
        if let redeemed = rule.redeemedOfferBefore, retention.transactions.contains(where: { $0.offerType == 2 }) != redeemed {
            return false
        }
        return true
    }

    /// 365.25 days / 12, in milliseconds.
    static let averageMonth = 365.25 / 12 * 86_400_000
}
