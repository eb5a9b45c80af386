import JSON

/// An app transaction (`signedAppTransactionInfo`, StoreKit `AppTransaction`, APPSTORE.md §4.5).
/// Its `receiptType` serves as the environment.
public struct AppTransaction: AppStoreModel {
    public static let schema = ModelSchema(
        "AppTransaction",
        [
            "receiptType": .stringEnum, "appAppleId": .int64, "bundleId": .string, "applicationVersion": .string,
            "versionExternalIdentifier": .int64, "receiptCreationDate": .date, "originalPurchaseDate": .date,
            "originalApplicationVersion": .string, "deviceVerification": .string, "deviceVerificationNonce": .uuid,
            "preorderDate": .date, "appTransactionId": .string, "originalPlatform": .stringEnum,
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    public var receiptType: AppStoreEnvironment? { string("receiptType").map(AppStoreEnvironment.init(rawValue:)) }
    public var appAppleId: Int64? { int64("appAppleId") }
    public var bundleId: String? { string("bundleId") }
    public var receiptCreationDate: Int64? { milliseconds("receiptCreationDate") }
    public var appTransactionId: String? { string("appTransactionId") }
    public var originalPlatform: PurchasePlatform? { string("originalPlatform").map(PurchasePlatform.init(rawValue:)) }
}

/// A Retention Messaging real-time request (APPSTORE.md §4.6): every member is required.
public struct DecodedRealtimeRequestBody: AppStoreModel {
    public static let schema = ModelSchema(
        "DecodedRealtimeRequestBody",
        required: [
            "originalTransactionId", "appAppleId", "productId", "userLocale", "requestIdentifier", "signedDate",
            "environment",
        ],
        [
            "originalTransactionId": .string, "appAppleId": .int64, "productId": .string, "userLocale": .string,
            "requestIdentifier": .uuid, "signedDate": .date, "environment": .stringEnum,
        ]
    )

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    public var appAppleId: Int64? { int64("appAppleId") }
    public var signedDate: Int64? { milliseconds("signedDate") }
}
