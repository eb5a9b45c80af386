import Entitlements
import JSON

/// `apps[].retention`: the answers to Apple's realtime retention requests.
enum RetentionPolicyParser {
    static func parse(
        _ object: JSONObject?, products: [String: CatalogProduct], offers: [String: OfferConfiguration], appAppleId: Int64?,
        path: String, reader: inout ConfigurationReader
    ) -> RetentionPolicy? {
        guard let object else { return nil }
        reader.checkMembers(object, allowed: ["defaultMessage", "offerCooldownDays", "saveWindowDays", "rules"], path: path)
        if appAppleId == nil { reader.problem(path, "Apple's realtime requests name the app by appAppleId: set the app's appAppleId") }
        guard let defaultMessage = reader.string(object, "defaultMessage", path: path, required: true) else { return nil }
        var policy = RetentionPolicy(defaultMessage: defaultMessage)
        if let days = reader.integer(object, "offerCooldownDays", path: path, range: 0...3650) { policy.offerCooldownDays = Int(days) }
        if let days = reader.integer(object, "saveWindowDays", path: path, range: 1...365) { policy.saveWindowDays = Int(days) }
        for (index, value) in (reader.array(object, "rules", path: path) ?? []).enumerated() {
            let rulePath = "\(path).rules[\(index)]"
            guard let rule = value.objectValue else {
                reader.problem(rulePath, "expected an object, found \(value.typeName)")
                continue
            }
            if let parsed = parseRule(rule, products: products, offers: offers, path: rulePath, reader: &reader) {
                policy.rules.append(parsed)
            }
        }
        return policy
    }

    private static func parseRule(
        _ object: JSONObject, products: [String: CatalogProduct], offers: [String: OfferConfiguration], path: String,
        reader: inout ConfigurationReader
    ) -> RetentionRule? {
        reader.checkMembers(object, allowed: ["name", "when", "answer"], path: path)
        guard let answerObject = reader.object(object, "answer", path: path, required: true),
            let answer = parseAnswer(answerObject, products: products, offers: offers, path: "\(path).answer", reader: &reader)
        else { return nil }
        var rule = RetentionRule(name: reader.string(object, "name", path: path), answer: answer)
        guard let when = reader.object(object, "when", path: path) else { return rule }
        let whenPath = "\(path).when"
        reader.checkMembers(
            when,
            allowed: ["productId", "inTrial", "monthsSubscribedAtLeast", "billingIssue", "autoRenewOff", "locale", "redeemedOfferBefore"],
            path: whenPath)
        rule.productIds = oneOrMany(when["productId"], "\(whenPath).productId", reader: &reader)
        rule.locales = oneOrMany(when["locale"], "\(whenPath).locale", reader: &reader)
        rule.inTrial = reader.bool(when, "inTrial", path: whenPath)
        rule.billingIssue = reader.bool(when, "billingIssue", path: whenPath)
        rule.autoRenewOff = reader.bool(when, "autoRenewOff", path: whenPath)
        rule.redeemedOfferBefore = reader.bool(when, "redeemedOfferBefore", path: whenPath)
        if let months = reader.number(when, "monthsSubscribedAtLeast", path: whenPath, range: 0...1200) {
            rule.monthsSubscribedAtLeast = months
        }
        return rule
    }

    /// Exactly one of `message`, `alternateProduct`, `promotionalOffer`; an offer must be in the catalog.
    private static func parseAnswer(
        _ object: JSONObject, products: [String: CatalogProduct], offers: [String: OfferConfiguration], path: String,
        reader: inout ConfigurationReader
    ) -> RetentionAnswer? {
        reader.checkMembers(object, allowed: ["message", "alternateProduct", "promotionalOffer"], path: path)
        guard object.members.count == 1 else {
            reader.problem(path, "give exactly one of message, alternateProduct, promotionalOffer")
            return nil
        }
        if let message = object["message"] {
            guard let id = message.stringValue, !id.isEmpty else {
                reader.problem("\(path).message", "expected a messageIdentifier")
                return nil
            }
            return .message(messageIdentifier: id)
        }
        if let alternate = reader.object(object, "alternateProduct", path: path) {
            let alternatePath = "\(path).alternateProduct"
            reader.checkMembers(alternate, allowed: ["messageIdentifier", "productId", "billingPlanType"], path: alternatePath)
            guard let message = reader.string(alternate, "messageIdentifier", path: alternatePath, required: true),
                let product = reader.string(alternate, "productId", path: alternatePath, required: true)
            else { return nil }
            if products[product]?.subscriptionGroup == nil {
                reader.problem("\(alternatePath).productId", "\"\(product)\" is not a subscription of the catalog")
            }
            return .alternateProduct(
                messageIdentifier: message, productId: product,
                billingPlanType: reader.string(alternate, "billingPlanType", path: alternatePath))
        }
        if let offer = reader.object(object, "promotionalOffer", path: path) {
            let offerPath = "\(path).promotionalOffer"
            reader.checkMembers(offer, allowed: ["messageIdentifier", "offerId"], path: offerPath)
            guard let message = reader.string(offer, "messageIdentifier", path: offerPath, required: true),
                let offerId = reader.string(offer, "offerId", path: offerPath, required: true)
            else { return nil }
            if offers[offerId] == nil { reader.problem("\(offerPath).offerId", "\"\(offerId)\" is not in the offer catalog") }
            return .promotionalOffer(messageIdentifier: message, offerId: offerId)
        }
        return nil
    }

    private static func oneOrMany(_ value: JSONValue?, _ path: String, reader: inout ConfigurationReader) -> Set<String>? {
        guard let value else { return nil }
        let values = value.stringValue.map { [$0] } ?? value.arrayValue?.compactMap(\.stringValue)
        guard let values, !values.isEmpty else {
            reader.problem(path, "expected a string or a list of them")
            return nil
        }
        return Set(values)
    }
}
