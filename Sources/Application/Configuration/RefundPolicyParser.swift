import Entitlements
import JSON

/// `apps[].refunds`: the customer's consent and the rules refund reviews are answered by, and
/// `retrySeconds`, the first retry of an answer a store could not take (nil: the default).
enum RefundPolicyParser {
    static func parse(
        _ object: JSONObject?, path: String, reader: inout ConfigurationReader
    ) -> (policy: RefundPolicy, retrySeconds: Double?) {
        guard let object else { return (RefundPolicy(), nil) }
        reader.checkMembers(object, allowed: ["customerConsent", "rules", "retrySeconds"], path: path)
        let retrySeconds = reader.seconds(object, "retrySeconds", path: path, maximum: 3600)
        var policy = RefundPolicy(customerConsent: reader.bool(object, "customerConsent", path: path) ?? false)
        for (index, value) in (reader.array(object, "rules", path: path) ?? []).enumerated() {
            let rulePath = "\(path).rules[\(index)]"
            guard let rule = value.objectValue else {
                reader.problem(rulePath, "expected an object, found \(value.typeName)")
                continue
            }
            if let parsed = parseRule(rule, path: rulePath, reader: &reader) { policy.rules.append(parsed) }
        }
        return (policy, retrySeconds)
    }

    private static func parseRule(_ object: JSONObject, path: String, reader: inout ConfigurationReader) -> RefundRule? {
        reader.checkMembers(object, allowed: ["name", "when", "prefer"], path: path)
        guard let preferText = reader.string(object, "prefer", path: path, required: true) else { return nil }
        guard let prefer = RefundPreference(rawValue: preferText) else {
            reader.problem("\(path).prefer", "unknown preference \"\(preferText)\" (GRANT_FULL, GRANT_PRORATED, DECLINE, NONE)")
            return nil
        }
        var rule = RefundRule(name: reader.string(object, "name", path: path), prefer: prefer)
        guard let when = reader.object(object, "when", path: path) else { return rule }
        let whenPath = "\(path).when"
        reader.checkMembers(
            when,
            allowed: [
                "reason", "hoursSincePurchaseAtMost", "consumedAtLeast", "delivered", "refundsInLast365DaysAtLeast", "productType",
                "store",
            ], path: whenPath)
        if let reason = when["reason"] {
            // One reason or a list; Google's reasons are its numbers, written as text.
            let reasons = reason.stringValue.map { [$0] } ?? reason.arrayValue?.compactMap(\.stringValue)
            if let reasons, !reasons.isEmpty {
                rule.reasons = Set(reasons)
            } else {
                reader.problem("\(whenPath).reason", "expected a reason or a list of them")
            }
        }
        // A century of hours; a percentage.
        for (key, keyPath, maximum) in [
            ("hoursSincePurchaseAtMost", \RefundRule.hoursSincePurchaseAtMost, 876_600.0), ("consumedAtLeast", \.consumedAtLeast, 100),
        ] {
            if let number = reader.number(when, key, path: whenPath, range: 0...maximum) { rule[keyPath: keyPath] = number }
        }
        rule.delivered = reader.bool(when, "delivered", path: whenPath)
        rule.refundsInLast365DaysAtLeast = reader.integer(when, "refundsInLast365DaysAtLeast", path: whenPath, range: 0...100_000).map {
            Int($0)
        }
        if let type = reader.string(when, "productType", path: whenPath) {
            if RefundRule.productTypes.contains(type) {
                rule.productType = type
            } else {
                reader.problem(
                    "\(whenPath).productType", "unknown product type \"\(type)\" (subscription, consumable, nonConsumable, nonRenewing)")
            }
        }
        if let store = reader.string(when, "store", path: whenPath) {
            if ["app_store", "play_store"].contains(store) {
                rule.store = store
            } else {
                reader.problem("\(whenPath).store", "unknown store \"\(store)\" (app_store, play_store)")
            }
        }
        return rule
    }
}
