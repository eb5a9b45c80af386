import JSON

/// An App Store Server Notification V2 payload (APPSTORE.md §4.4).
public struct ResponseBodyV2DecodedPayload: AppStoreModel {
    public static let schema = ModelSchema(
        "ResponseBodyV2DecodedPayload",
        [
            "notificationType": .stringEnum, "subtype": .stringEnum, "notificationUUID": .string,
            "data": .object(NotificationData.schema), "version": .string, "signedDate": .date,
            "summary": .object(NotificationSummary.schema), "externalPurchaseToken": .object(ExternalPurchaseToken.schema),
            "appData": .object(AppData.schema),
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    public var notificationType: NotificationTypeV2? { string("notificationType").map(NotificationTypeV2.init(rawValue:)) }
    public var subtype: NotificationSubtype? { string("subtype").map(NotificationSubtype.init(rawValue:)) }
    public var notificationUUID: String? { string("notificationUUID") }
    public var version: String? { string("version") }
    public var signedDate: Int64? { milliseconds("signedDate") }
    public var data: NotificationData? { object("data") }
    public var summary: NotificationSummary? { object("summary") }
    public var externalPurchaseToken: ExternalPurchaseToken? { object("externalPurchaseToken") }
    public var appData: AppData? { object("appData") }

    /// Where bundle ID, app Apple ID and environment come from (APPSTORE.md §3.8): the first of
    /// `data`, `summary`, `externalPurchaseToken`, `appData` that is present.
    public var identity: (bundleId: String?, appAppleId: Int64?, environment: String?) {
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

public struct NotificationData: AppStoreModel {
    public static let schema = ModelSchema(
        "NotificationData",
        [
            "environment": .stringEnum, "appAppleId": .int64, "bundleId": .string, "bundleVersion": .string,
            "signedTransactionInfo": .string, "signedRenewalInfo": .string, "status": .intEnum,
            "consumptionRequestReason": .stringEnum,
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    public var environment: AppStoreEnvironment? { string("environment").map(AppStoreEnvironment.init(rawValue:)) }
    public var appAppleId: Int64? { int64("appAppleId") }
    public var bundleId: String? { string("bundleId") }
    public var signedTransactionInfo: String? { string("signedTransactionInfo") }
    public var signedRenewalInfo: String? { string("signedRenewalInfo") }
    public var status: SubscriptionStatus? { int64("status").map(SubscriptionStatus.init(rawValue:)) }
    public var consumptionRequestReason: ConsumptionRequestReason? {
        string("consumptionRequestReason").map(ConsumptionRequestReason.init(rawValue:))
    }
}

public struct NotificationSummary: AppStoreModel {
    public static let schema = ModelSchema(
        "Summary",
        [
            "environment": .stringEnum, "appAppleId": .int64, "bundleId": .string, "productId": .string,
            "requestIdentifier": .string, "storefrontCountryCodes": .array(.string), "succeededCount": .int64,
            "failedCount": .int64,
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
}

public struct ExternalPurchaseToken: AppStoreModel {
    public static let schema = ModelSchema(
        "ExternalPurchaseToken",
        [
            "externalPurchaseId": .string, "tokenCreationDate": .int64, "appAppleId": .int64, "bundleId": .string,
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
}

public struct AppData: AppStoreModel {
    public static let schema = ModelSchema(
        "AppData",
        [
            "appAppleId": .int64, "bundleId": .string, "environment": .stringEnum, "signedAppTransactionInfo": .string,
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    public var signedAppTransactionInfo: String? { string("signedAppTransactionInfo") }
}
