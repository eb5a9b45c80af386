package import JSON

/// An App Store Server Notification V2 payload (docs/APP_STORE.md §4.4).
package struct ResponseBodyV2DecodedPayload: AppStoreModel {
    package static let schema = ModelSchema(
        "ResponseBodyV2DecodedPayload",
        [
            "notificationType": .stringEnum, "subtype": .stringEnum, "notificationUUID": .string,
            "data": .object(NotificationData.schema), "version": .string, "signedDate": .date,
            "summary": .object(NotificationSummary.schema), "externalPurchaseToken": .object(ExternalPurchaseToken.schema),
            "appData": .object(AppData.schema),
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    package var notificationType: NotificationTypeV2? { string("notificationType").map(NotificationTypeV2.init(rawValue:)) }
    package var subtype: NotificationSubtype? { string("subtype").map(NotificationSubtype.init(rawValue:)) }
    package var notificationUUID: String? { string("notificationUUID") }
    package var version: String? { string("version") }
    package var signedDate: Int64? { milliseconds("signedDate") }
    package var data: NotificationData? { object("data") }
    package var summary: NotificationSummary? { object("summary") }
    package var externalPurchaseToken: ExternalPurchaseToken? { object("externalPurchaseToken") }
    package var appData: AppData? { object("appData") }

    /// Where bundle ID, app Apple ID and environment come from (docs/APP_STORE.md §3.8): the first of
    /// `data`, `summary`, `externalPurchaseToken`, `appData` that is present.
    package var identity: (bundleId: String?, appAppleId: Int64?, environment: String?) {
        if let data { return (data.bundleId, data.appAppleId, data.string("environment")) }
        if let summary { return (summary.string("bundleId"), summary.int64("appAppleId"), summary.string("environment")) }
        if let token = externalPurchaseToken {
            let id = token.string("externalPurchaseId") ?? ""
            return (token.string("bundleId"), token.int64("appAppleId"), id.hasPrefix("SANDBOX") ? "Sandbox" : "Production")
        }
        if let appData { return (appData.string("bundleId"), appData.int64("appAppleId"), appData.string("environment")) }
        return (nil, nil, nil)
    }
}

package struct NotificationData: AppStoreModel {
    package static let schema = ModelSchema(
        "NotificationData",
        [
            "environment": .stringEnum, "appAppleId": .int64, "bundleId": .string, "bundleVersion": .string,
            "signedTransactionInfo": .string, "signedRenewalInfo": .string, "status": .intEnum,
            "consumptionRequestReason": .stringEnum,
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    package var environment: AppStoreEnvironment? { string("environment").map(AppStoreEnvironment.init(rawValue:)) }
    package var appAppleId: Int64? { int64("appAppleId") }
    package var bundleId: String? { string("bundleId") }
    package var signedTransactionInfo: String? { string("signedTransactionInfo") }
    package var signedRenewalInfo: String? { string("signedRenewalInfo") }
    package var status: SubscriptionStatus? { int64("status").map(SubscriptionStatus.init(rawValue:)) }
    package var consumptionRequestReason: ConsumptionRequestReason? {
        string("consumptionRequestReason").map(ConsumptionRequestReason.init(rawValue:))
    }
}

package struct NotificationSummary: AppStoreModel {
    package static let schema = ModelSchema(
        "Summary",
        [
            "environment": .stringEnum, "appAppleId": .int64, "bundleId": .string, "productId": .string,
            "requestIdentifier": .string, "storefrontCountryCodes": .array(.string), "succeededCount": .int64,
            "failedCount": .int64,
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
}

package struct ExternalPurchaseToken: AppStoreModel {
    package static let schema = ModelSchema(
        "ExternalPurchaseToken",
        [
            "externalPurchaseId": .string, "tokenCreationDate": .int64, "appAppleId": .int64, "bundleId": .string,
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
}

package struct AppData: AppStoreModel {
    package static let schema = ModelSchema(
        "AppData",
        [
            "appAppleId": .int64, "bundleId": .string, "environment": .stringEnum, "signedAppTransactionInfo": .string,
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    package var signedAppTransactionInfo: String? { string("signedAppTransactionInfo") }
}
