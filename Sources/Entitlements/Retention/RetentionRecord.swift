import Instants
package import JSON

/// One realtime request of Apple's and the answer Entitle gave, stored under Apple's
/// `requestIdentifier` (a retried request gets the same answer), and whether it saved the
/// subscription afterwards.
package struct RetentionRecord: Sendable, Equatable {
    package var requestIdentifier: String
    package var environment: String
    package var originalTransactionId: String
    package var appAccountToken: String?
    /// The product the customer was about to cancel, and their locale.
    package var productId: String
    package var locale: String
    package var answeredAt: Int64
    package var answer: RetentionAnswer
    /// The App Store `offerIdentifier` of an answered promotional offer.
    package var offerIdentifier: String?
    /// The rule that chose the answer (`default`: none did).
    package var rule: String
    /// Exactly what Apple was answered.
    package var response: JSONObject
    /// When the answer saved the subscription, and how (`offerRedeemed`, `productSwitched`,
    /// `autoRenewOn`).
    package var savedAt: Int64?
    package var savedBy: String?

    package init(
        requestIdentifier: String, environment: String, originalTransactionId: String, appAccountToken: String?, productId: String,
        locale: String, answeredAt: Int64, answer: RetentionAnswer, offerIdentifier: String?, rule: String, response: JSONObject
    ) {
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.appAccountToken = appAccountToken
        self.productId = productId
        self.locale = locale
        self.answeredAt = answeredAt
        self.answer = answer
        self.offerIdentifier = offerIdentifier
        self.rule = rule
        self.response = response
    }

    package var json: JSONObject {
        var object: JSONObject = [
            "requestIdentifier": .string(requestIdentifier), "environment": .string(environment),
            "originalTransactionId": .string(originalTransactionId), "productId": .string(productId), "locale": .string(locale),
            "kind": .string(answer.kind), "messageIdentifier": .string(answer.messageIdentifier), "rule": .string(rule),
            "response": .object(response),
        ]
        if let appAccountToken { object["appAccountToken"] = .string(appAccountToken) }
        Timestamps.set(&object, "answeredAt", answeredAt)
        switch answer {
        case .alternateProduct(_, let product, let plan):
            object["offeredProductId"] = .string(product)
            if let plan { object["billingPlanType"] = .string(plan) }
        case .promotionalOffer(_, let offerId):
            object["offerId"] = .string(offerId)
            if let offerIdentifier { object["offerIdentifier"] = .string(offerIdentifier) }
        case .message: break
        }
        Timestamps.set(&object, "savedAt", savedAt)
        if let savedBy { object["savedBy"] = .string(savedBy) }
        return object
    }

    package init?(stored json: JSONObject) {
        guard let id = json["requestIdentifier"]?.stringValue, let original = json["originalTransactionId"]?.stringValue,
            let message = json["messageIdentifier"]?.stringValue
        else { return nil }
        let answer: RetentionAnswer
        switch json["kind"]?.stringValue {
        case "alternateProduct":
            answer = .alternateProduct(
                messageIdentifier: message, productId: json["offeredProductId"]?.stringValue ?? "",
                billingPlanType: json["billingPlanType"]?.stringValue)
        case "promotionalOffer": answer = .promotionalOffer(messageIdentifier: message, offerId: json["offerId"]?.stringValue ?? "")
        default: answer = .message(messageIdentifier: message)
        }
        self.init(
            requestIdentifier: id, environment: json["environment"]?.stringValue ?? "", originalTransactionId: original,
            appAccountToken: json["appAccountToken"]?.stringValue, productId: json["productId"]?.stringValue ?? "",
            locale: json["locale"]?.stringValue ?? "", answeredAt: Milliseconds.stored(json["answeredAtMs"]) ?? 0, answer: answer,
            offerIdentifier: json["offerIdentifier"]?.stringValue, rule: json["rule"]?.stringValue ?? "",
            response: json["response"]?.objectValue ?? [:])
        savedAt = Milliseconds.stored(json["savedAtMs"])
        savedBy = json["savedBy"]?.stringValue
    }
}

/// Which answers a stored change shows to have saved their subscription, within the window after
/// each answer: the offered promotional offer redeemed (a new transaction with its
/// `offerIdentifier`), the offered product taken (a new transaction of it, or the renewal info
/// switching to it), or auto-renew turned back on. Pure; the writer records them and the event
/// rules tell them, from this one function.
package enum RetentionAttribution {
    package struct Save: Sendable, Equatable {
        package var record: RetentionRecord
        package var at: Int64
        package var how: String
    }

    package static func saves(_ change: FactChange) -> [Save] {
        guard let window = change.retentionWindow else { return [] }
        var saves: [Save] = []
        for after in change.after {
            let open = change.openRetention[after.originalTransactionId] ?? []
            guard !open.isEmpty else { continue }
            let before = change.before[after.originalTransactionId]
            let added = after.transactions.filter { record in
                !(before?.transactions.contains { $0.transactionId == record.transactionId } ?? false)
            }
            for record in open {
                func within(_ instant: Int64) -> Bool { instant >= record.answeredAt && instant <= record.answeredAt + window }
                var found: (Int64, String)?
                switch record.answer {
                case .promotionalOffer:
                    if let redeemed = added.first(where: {
                        $0.offerType == 2 && $0.offerIdentifier == record.offerIdentifier && within($0.purchaseDate)
                    }) {
                        found = (redeemed.purchaseDate, "offerRedeemed")
                    }
                case .alternateProduct(_, let product, _):
                    if let switched = added.first(where: { $0.productId == product && within($0.purchaseDate) }) {
                        found = (switched.purchaseDate, "productSwitched")
                    } else if let renewal = after.renewal, renewal.autoRenewProductId == product,
                        before?.renewal?.autoRenewProductId != product, within(renewal.signedDate)
                    {
                        found = (renewal.signedDate, "productSwitched")
                    }
                case .message: break
                }
                if found == nil, let renewal = after.renewal, renewal.autoRenewStatus == 1, before?.renewal?.autoRenewStatus == 0,
                    within(renewal.signedDate)
                {
                    found = (renewal.signedDate, "autoRenewOn")
                }
                if let (at, how) = found { saves.append(Save(record: record, at: at, how: how)) }
            }
        }
        return saves
    }
}

extension RetentionRecord {
    /// Why this answer may not be written beside `answered`, its subscription's committed answers
    /// (nil: it may): its request was answered already, or it offers while another offer is within
    /// the cooldown (two requests decided at once, each before the other was written).
    package func refusal(answered: [RetentionRecord], offerCooldown: Int64) -> ApplyOutcome? {
        if answered.contains(where: { $0.requestIdentifier == requestIdentifier }) { return .retentionAlreadyAnswered }
        guard case .promotionalOffer = answer else { return nil }
        let lastOffer = answered.filter(\.answer.isPromotionalOffer).map(\.answeredAt).max()
        guard let lastOffer, RetentionPolicy.offerCooling(lastOfferAt: lastOffer, now: answeredAt, cooldown: offerCooldown) else {
            return nil
        }
        return .retentionOfferCooling
    }
}
