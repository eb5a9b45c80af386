/// Where the app shows a paywall (`onboarding`, `settings`, `winback`): the offering it shows
/// by default (nil: none, explicitly), and targeting rules tried first, first match wins.
package struct Placement: Sendable, Equatable {
    package var id: String
    package var offering: String?
    package var rules: [TargetingRule]

    package init(id: String, offering: String?, rules: [TargetingRule] = []) {
        self.id = id
        self.offering = offering
        self.rules = rules
    }
}

/// "Customers who … see this offering" (nil: no paywall for them).
package struct TargetingRule: Sendable, Equatable {
    /// How the answer's `reason` names it (default: its position, `rules[0]`).
    package var name: String
    package var when: TargetingCondition
    package var offering: String?

    package init(name: String, when: TargetingCondition, offering: String?) {
        self.name = name
        self.when = when
        self.offering = offering
    }
}

/// Why the customer gets the offering they get.
package enum OfferingReason: Sendable, Equatable {
    /// A targeting rule matched.
    case rule(String)
    /// No rule matched: the placement's own offering.
    case `default`
    /// The placement shows nothing to this customer (its offering, or the matching rule's, is null).
    case none(rule: String?)
    /// The customer's variant of a running experiment.
    case experiment(String, variant: String)
    /// The variant a stopped experiment shipped, now the placement's own offering.
    case shipped(String)

    /// The answer's `reason.kind`.
    package var kind: String {
        switch self {
        case .rule: "rule"
        case .default: "default"
        case .none: "none"
        case .experiment: "experiment"
        case .shipped: "shipped"
        }
    }
}

extension Placement {
    /// The offering this placement shows the customer described by `context`, and why: the first
    /// rule that matches, else the placement's own.
    package func choose(for context: TargetingContext) -> (offering: String?, reason: OfferingReason) {
        for rule in rules where rule.when.matches(context) {
            return rule.offering.map { ($0, .rule(rule.name)) } ?? (nil, .none(rule: rule.name))
        }
        return offering.map { ($0, .default) } ?? (nil, .none(rule: nil))
    }
}
