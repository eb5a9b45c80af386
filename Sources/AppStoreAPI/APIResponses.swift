package import AppStore
package import JSON

/// The response bodies of the App Store Server API (docs/APP_STORE.md §4.9), validated like the
/// signed payloads: unknown members ignored, unknown enum values kept, type mismatches fail.
enum ResponseSchemas {
    static let sendAttempt = ModelSchema("SendAttemptItem", ["attemptDate": .date, "sendAttemptResult": .stringEnum])
    static let lastTransaction = ModelSchema(
        "LastTransactionsItem",
        [
            "status": .intEnum, "originalTransactionId": .string, "signedTransactionInfo": .string, "signedRenewalInfo": .string,
        ])
    static let groupItem = ModelSchema(
        "SubscriptionGroupIdentifierItem",
        [
            "subscriptionGroupIdentifier": .string, "lastTransactions": .array(.object(lastTransaction)),
        ])
    static let notificationItem = ModelSchema(
        "NotificationHistoryResponseItem",
        [
            "signedPayload": .string, "sendAttempts": .array(.object(sendAttempt)),
        ])
}

package struct HistoryResponse: AppStoreModel {
    package static let schema = ModelSchema(
        "HistoryResponse",
        [
            "revision": .string, "hasMore": .bool, "bundleId": .string, "appAppleId": .int64, "environment": .stringEnum,
            "signedTransactions": .array(.string),
        ])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var revision: String? { string("revision") }
    package var hasMore: Bool { bool("hasMore") ?? false }
    package var signedTransactions: [String] { json["signedTransactions"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    package var environment: String? { string("environment") }
}

package struct RefundHistoryResponse: AppStoreModel {
    package static let schema = ModelSchema(
        "RefundHistoryResponse",
        [
            "signedTransactions": .array(.string), "revision": .string, "hasMore": .bool,
        ])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var revision: String? { string("revision") }
    package var hasMore: Bool { bool("hasMore") ?? false }
    package var signedTransactions: [String] { json["signedTransactions"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
}

package struct StatusResponse: AppStoreModel {
    package static let schema = ModelSchema(
        "StatusResponse",
        [
            "environment": .stringEnum, "bundleId": .string, "appAppleId": .int64, "data": .array(.object(ResponseSchemas.groupItem)),
        ])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    /// Every (group, status, signed transaction, signed renewal info) of the response.
    package var lastTransactions: [(group: String?, status: Int64?, signedTransactionInfo: String?, signedRenewalInfo: String?)] {
        (json["data"]?.arrayValue ?? []).flatMap { group in
            (group["lastTransactions"]?.arrayValue ?? []).map { item in
                (
                    group["subscriptionGroupIdentifier"]?.stringValue, item["status"]?.integer(in: Int64(Int32.min)...Int64(Int32.max)),
                    item["signedTransactionInfo"]?.stringValue, item["signedRenewalInfo"]?.stringValue
                )
            }
        }
    }
}

package struct NotificationHistoryResponse: AppStoreModel {
    package static let schema = ModelSchema(
        "NotificationHistoryResponse",
        [
            "paginationToken": .string, "hasMore": .bool, "notificationHistory": .array(.object(ResponseSchemas.notificationItem)),
        ])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var paginationToken: String? { string("paginationToken") }
    package var hasMore: Bool { bool("hasMore") ?? false }
    package var signedPayloads: [String] { json["notificationHistory"]?.arrayValue?.compactMap { $0["signedPayload"]?.stringValue } ?? [] }
}

package struct TransactionInfoResponse: AppStoreModel {
    package static let schema = ModelSchema("TransactionInfoResponse", ["signedTransactionInfo": .string])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var signedTransactionInfo: String? { string("signedTransactionInfo") }
}

package struct AppTransactionInfoResponse: AppStoreModel {
    package static let schema = ModelSchema("AppTransactionInfoResponse", ["signedAppTransactionInfo": .string])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var signedAppTransactionInfo: String? { string("signedAppTransactionInfo") }
}

package struct OrderLookupResponse: AppStoreModel {
    package static let schema = ModelSchema("OrderLookupResponse", ["status": .intEnum, "signedTransactions": .array(.string)])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    /// 0 valid, 1 invalid.
    package var status: Int64? { int64("status") }
    package var signedTransactions: [String] { json["signedTransactions"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
}

package struct SendTestNotificationResponse: AppStoreModel {
    package static let schema = ModelSchema("SendTestNotificationResponse", ["testNotificationToken": .string])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var testNotificationToken: String? { string("testNotificationToken") }
}

package struct CheckTestNotificationResponse: AppStoreModel {
    package static let schema = ModelSchema(
        "CheckTestNotificationResponse",
        [
            "signedPayload": .string, "sendAttempts": .array(.object(ResponseSchemas.sendAttempt)),
        ])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var signedPayload: String? { string("signedPayload") }
    /// `SUCCESS` when Apple's server reached the notification URL.
    package var sendAttemptResults: [String] { json["sendAttempts"]?.arrayValue?.compactMap { $0["sendAttemptResult"]?.stringValue } ?? [] }
}

package struct ExtendRenewalDateResponse: AppStoreModel {
    package static let schema = ModelSchema(
        "ExtendRenewalDateResponse",
        [
            "originalTransactionId": .string, "webOrderLineItemId": .string, "success": .bool, "effectiveDate": .date,
        ])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var success: Bool { bool("success") ?? false }
    package var effectiveDate: Int64? { milliseconds("effectiveDate") }
}

package struct MassExtendRenewalDateResponse: AppStoreModel {
    package static let schema = ModelSchema("MassExtendRenewalDateResponse", ["requestIdentifier": .string])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var requestIdentifier: String? { string("requestIdentifier") }
}

package struct MassExtendRenewalDateStatusResponse: AppStoreModel {
    package static let schema = ModelSchema(
        "MassExtendRenewalDateStatusResponse",
        [
            "requestIdentifier": .string, "complete": .bool, "completeDate": .date, "succeededCount": .int64, "failedCount": .int64,
        ])
    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }
    package var complete: Bool { bool("complete") ?? false }
}
