package import JSON

/// An app transaction (`signedAppTransactionInfo`, StoreKit `AppTransaction`, docs/APP_STORE.md §4.5).
/// Its `receiptType` serves as the environment.
package struct AppTransaction: AppStoreModel {
    package static let schema = ModelSchema(
        "AppTransaction",
        [
            "receiptType": .stringEnum, "appAppleId": .int64, "bundleId": .string, "applicationVersion": .string,
            "versionExternalIdentifier": .int64, "receiptCreationDate": .date, "originalPurchaseDate": .date,
            "originalApplicationVersion": .string, "deviceVerification": .string, "deviceVerificationNonce": .uuid,
            "preorderDate": .date, "appTransactionId": .string, "originalPlatform": .stringEnum,
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    package var receiptType: AppStoreEnvironment? { string("receiptType").map(AppStoreEnvironment.init(rawValue:)) }
    package var appAppleId: Int64? { int64("appAppleId") }
    package var bundleId: String? { string("bundleId") }
    package var receiptCreationDate: Int64? { milliseconds("receiptCreationDate") }
    package var appTransactionId: String? { string("appTransactionId") }
    package var originalPlatform: PurchasePlatform? { string("originalPlatform").map(PurchasePlatform.init(rawValue:)) }
}

/// A Retention Messaging real-time request (docs/APP_STORE.md §4.6): every member is required.
package struct DecodedRealtimeRequestBody: AppStoreModel {
    package static let schema = ModelSchema(
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

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    package var appAppleId: Int64? { int64("appAppleId") }
    package var signedDate: Int64? { milliseconds("signedDate") }
}
