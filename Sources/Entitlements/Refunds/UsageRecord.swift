import Instants
package import JSON

/// What a customer did with a purchase, as the app's server says (`POST …/usage`): the evidence a
/// refund review is answered from. Only the app knows it; it is stored as a fact and never leaves
/// the developer's servers except in the answer to the store that asked.
package struct UsageRecord: Sendable, Equatable {
    /// A moment of use the app recorded (`consumptionUsageEvents` on Google Play).
    package struct Event: Sendable, Equatable {
        package var at: Int64
        package var description: String

        package init(at: Int64, description: String) {
            self.at = at
            self.description = description
        }
    }

    /// Why the content was not delivered.
    package static let undeliveredReasons: Set<String> = ["QUALITY_ISSUE", "WRONG_ITEM", "SERVER_OUTAGE", "OTHER"]

    package var id: String
    package var appAccountToken: String
    /// The purchase it is about: an App Store `transactionId` or a Play `purchaseToken`.
    package var transactionId: String?
    package var purchaseToken: String?
    /// 0–100: how much of a consumable or non-consumable was used.
    package var consumedPercent: Double?
    package var delivered: Bool?
    /// When `delivered` is false: `QUALITY_ISSUE`, `WRONG_ITEM`, `SERVER_OUTAGE` or `OTHER`.
    package var undeliveredReason: String?
    package var events: [Event]
    package var recordedAt: Int64
    /// The key that recorded it.
    package var recordedBy: String

    package init(
        id: String, appAccountToken: String, transactionId: String?, purchaseToken: String?, consumedPercent: Double?,
        delivered: Bool?, undeliveredReason: String?, events: [Event], recordedAt: Int64, recordedBy: String
    ) {
        self.id = id
        self.appAccountToken = appAccountToken
        self.transactionId = transactionId
        self.purchaseToken = purchaseToken
        self.consumedPercent = consumedPercent
        self.delivered = delivered
        self.undeliveredReason = undeliveredReason
        self.events = events
        self.recordedAt = recordedAt
        self.recordedBy = recordedBy
    }

    /// Whether it is about the purchase a store asks about.
    package func concerns(transactionId: String?, purchaseToken: String?) -> Bool {
        (transactionId != nil && self.transactionId == transactionId) || (purchaseToken != nil && self.purchaseToken == purchaseToken)
    }

    /// As stored and answered (`at` as ISO text beside `atMs`, as everywhere).
    package func write<Object: JSONObjectBuilder>(into object: inout Object) {
        object.set("id", id)
        object.set("appAccountToken", appAccountToken)
        object.set("transactionId", ifPresent: transactionId)
        object.set("purchaseToken", ifPresent: purchaseToken)
        if let consumedPercent {
            // A whole percent as the integer it was sent as (30, not 30.0).
            if consumedPercent == consumedPercent.rounded() {
                object.set("consumedPercent", Int64(consumedPercent))
            } else {
                object.set("consumedPercent", consumedPercent)
            }
        }
        object.set("delivered", ifPresent: delivered)
        object.set("reason", ifPresent: undeliveredReason)
        object.list("events") { list in
            for event in events {
                list.object { item in
                    Timestamps.set(&item, "at", event.at)
                    item.set("description", event.description)
                }
            }
        }
        Timestamps.set(&object, "recordedAt", recordedAt)
        object.set("recordedBy", recordedBy)
    }

    package var json: JSONObject {
        var object = JSONObject()
        write(into: &object)
        return object
    }

    /// From `json` (the stored text).
    package init?(stored json: JSONObject) {
        guard let id = json["id"]?.stringValue, let token = json["appAccountToken"]?.stringValue else { return nil }
        self.init(
            id: id, appAccountToken: token, transactionId: json["transactionId"]?.stringValue,
            purchaseToken: json["purchaseToken"]?.stringValue, consumedPercent: json["consumedPercent"]?.number(in: 0...100),
            delivered: json["delivered"]?.boolValue, undeliveredReason: json["reason"]?.stringValue,
            events: (json["events"]?.arrayValue ?? []).compactMap { item in
                guard let at = Milliseconds.stored(item["atMs"]), let description = item["description"]?.stringValue else { return nil }
                return Event(at: at, description: description)
            }, recordedAt: Milliseconds.stored(json["recordedAtMs"]) ?? 0, recordedBy: json["recordedBy"]?.stringValue ?? "")
    }
}

/// Support's standing instruction for one customer's refund reviews, recorded with who and why.
package struct RefundOverride: Sendable, Equatable {
    package static let choices: Set<String> = ["ALWAYS_GRANT", "ALWAYS_DECLINE", "NO_PREFERENCE"]

    package var appAccountToken: String
    /// `ALWAYS_GRANT`, `ALWAYS_DECLINE` or `NO_PREFERENCE`.
    package var override: String
    package var reason: String?
    package var setBy: String
    package var setAt: Int64

    package init(appAccountToken: String, override: String, reason: String?, setBy: String, setAt: Int64) {
        self.appAccountToken = appAccountToken
        self.override = override
        self.reason = reason
        self.setBy = setBy
        self.setAt = setAt
    }

    package var json: JSONObject {
        var object: JSONObject = ["appAccountToken": .string(appAccountToken), "override": .string(override)]
        if let reason { object["reason"] = .string(reason) }
        object["setBy"] = .string(setBy)
        Timestamps.set(&object, "setAt", setAt)
        return object
    }

    package init?(stored json: JSONObject) {
        guard let token = json["appAccountToken"]?.stringValue, let override = json["override"]?.stringValue else { return nil }
        self.init(
            appAccountToken: token, override: override, reason: json["reason"]?.stringValue, setBy: json["setBy"]?.stringValue ?? "",
            setAt: Milliseconds.stored(json["setAtMs"]) ?? 0)
    }
}
