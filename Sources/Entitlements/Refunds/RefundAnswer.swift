import Instants
package import JSON

/// The bodies of the answers to a refund request, made from a decision and the app's evidence.
/// Pure; each store's rules are kept here, in one place.
package enum RefundAnswer {
    /// Send Consumption Information v2 (`PUT /inApps/v2/transactions/consumption/{id}`); nil
    /// without the customer's consent (Apple requires `customerConsented: true`). Apple's rules:
    /// `consumptionPercentage` in milliunits, never for an auto-renewable subscription, 0 when
    /// the content was not delivered; with `GRANT_PRORATED` a one-time purchase's percentage must
    /// lie strictly between 0 and 100 000, else no preference is sent (the reason says why).
    package static func apple(_ decision: RefundDecision, _ refund: RefundCase, consent: Bool) -> (body: JSONObject, decidedBy: String)? {
        guard consent else { return nil }
        var body: JSONObject = [
            "customerConsented": true, "deliveryStatus": .string(deliveryStatus(refund)),
            "sampleContentProvided": .bool(refund.sampleContentProvided),
        ]
        let percentage = refund.productType == "subscription" ? nil : milliunits(refund)
        if let percentage { body["consumptionPercentage"] = .int(percentage) }
        var preference = decision.preference
        var decidedBy = decision.decidedBy
        if preference == .grantProrated, refund.productType != "subscription", !(percentage.map { $0 > 0 && $0 < 100_000 } ?? false) {
            preference = .none
            decidedBy += " (GRANT_PRORATED needs a consumption strictly between 0 and 100 %: no preference sent)"
        }
        if preference != .none { body["refundPreference"] = .string(preference.rawValue) }
        return (body, decidedBy)
    }

    /// `orders/{orderId}:reviewrefund`: the preference as Google names it, the consumption, and
    /// with the customer's consent the app's usage events (at most 1 000, the latest, each
    /// description at most 5 000 characters).
    package static func google(_ decision: RefundDecision, _ refund: RefundCase, consent: Bool) -> JSONObject {
        let preference: String =
            switch decision.preference {
            case .grantFull, .grantProrated: "APPROVE"
            case .decline: "DECLINE"
            case .none: "NEUTRAL"
            }
        var body: JSONObject = [
            "pendingRefundToken": .string(refund.request.pendingRefundToken ?? ""),
            "sampleContentProvided": .bool(refund.sampleContentProvided), "refundPreference": .string(preference),
        ]
        if let percentage = milliunits(refund) { body["consumptionPercentageMilliunits"] = .int(percentage) }
        if consent {
            let events = refund.usage.flatMap(\.events).sorted { $0.at < $1.at }.suffix(1000)
            if !events.isEmpty {
                body["consumptionUsageEvents"] = .array(
                    events.map { event in
                        var item: JSONObject = [
                            "consumptionItemDescription": .string(String(event.description.prefix(5000))),
                            "consumptionTime": .string(Timestamps.iso(event.at)),
                        ]
                        if let token = refund.request.appAccountToken { item["obfuscatedAccountId"] = .string(token) }
                        return .object(item)
                    })
            }
        }
        return body
    }

    /// `DELIVERED`, or `UNDELIVERED_<reason>` when the app said it was not delivered.
    static func deliveryStatus(_ refund: RefundCase) -> String {
        guard let record = refund.delivery, record.delivered == false else { return "DELIVERED" }
        return "UNDELIVERED_" + (record.undeliveredReason ?? "OTHER")
    }

    /// The share consumed, in milliunits (100 000 is all); 0 when not delivered; nil when unknown.
    static func milliunits(_ refund: RefundCase) -> Int64? {
        if refund.delivered == false { return 0 }
        return refund.consumedPercent.map { Int64((min(max($0, 0), 100) * 1000).rounded()) }
    }
}
