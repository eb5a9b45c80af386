import AppStore
import JSON

/// The response bodies of the App Store Server API (APPSTORE.md §4.9), validated like the
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

public struct HistoryResponse: AppStoreModel {
    public static let schema = ModelSchema(
        "HistoryResponse",
        [
            "revision": .string, "hasMore": .bool, "bundleId": .string, "appAppleId": .int64, "environment": .stringEnum,
            "signedTransactions": .array(.string),
        ])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var revision: String? { string("revision") }
    public var hasMore: Bool { bool("hasMore") ?? false }
    public var signedTransactions: [String] { json["signedTransactions"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    public var environment: String? { string("environment") }
}

public struct RefundHistoryResponse: AppStoreModel {
    public static let schema = ModelSchema(
        "RefundHistoryResponse",
        [
            "signedTransactions": .array(.string), "revision": .string, "hasMore": .bool,
        ])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var revision: String? { string("revision") }
    public var hasMore: Bool { bool("hasMore") ?? false }
    public var signedTransactions: [String] { json["signedTransactions"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
}

public struct StatusResponse: AppStoreModel {
    public static let schema = ModelSchema(
        "StatusResponse",
        [
            "environment": .stringEnum, "bundleId": .string, "appAppleId": .int64, "data": .array(.object(ResponseSchemas.groupItem)),
        ])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    /// Every (group, status, signed transaction, signed renewal info) of the response.
    public var lastTransactions: [(group: String?, status: Int64?, signedTransactionInfo: String?, signedRenewalInfo: String?)] {
        (json["data"]?.arrayValue ?? []).flatMap { group in
            (group["lastTransactions"]?.arrayValue ?? []).map { item in
                (
                    group["subscriptionGroupIdentifier"]?.stringValue, item["status"]?.int64Value,
                    item["signedTransactionInfo"]?.stringValue, item["signedRenewalInfo"]?.stringValue
                )
            }
        }
    }
}

public struct NotificationHistoryResponse: AppStoreModel {
    public static let schema = ModelSchema(
        "NotificationHistoryResponse",
        [
            "paginationToken": .string, "hasMore": .bool, "notificationHistory": .array(.object(ResponseSchemas.notificationItem)),
        ])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var paginationToken: String? { string("paginationToken") }
    public var hasMore: Bool { bool("hasMore") ?? false }
    public var signedPayloads: [String] { json["notificationHistory"]?.arrayValue?.compactMap { $0["signedPayload"]?.stringValue } ?? [] }
}

public struct TransactionInfoResponse: AppStoreModel {
    public static let schema = ModelSchema("TransactionInfoResponse", ["signedTransactionInfo": .string])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var signedTransactionInfo: String? { string("signedTransactionInfo") }
}

public struct AppTransactionInfoResponse: AppStoreModel {
    public static let schema = ModelSchema("AppTransactionInfoResponse", ["signedAppTransactionInfo": .string])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var signedAppTransactionInfo: String? { string("signedAppTransactionInfo") }
}

public struct OrderLookupResponse: AppStoreModel {
    public static let schema = ModelSchema("OrderLookupResponse", ["status": .intEnum, "signedTransactions": .array(.string)])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    /// 0 valid, 1 invalid.
    public var status: Int64? { int64("status") }
    public var signedTransactions: [String] { json["signedTransactions"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
}

public struct SendTestNotificationResponse: AppStoreModel {
    public static let schema = ModelSchema("SendTestNotificationResponse", ["testNotificationToken": .string])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var testNotificationToken: String? { string("testNotificationToken") }
}

public struct CheckTestNotificationResponse: AppStoreModel {
    public static let schema = ModelSchema(
        "CheckTestNotificationResponse",
        [
            "signedPayload": .string, "sendAttempts": .array(.object(ResponseSchemas.sendAttempt)),
        ])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var signedPayload: String? { string("signedPayload") }
    /// `SUCCESS` when Apple's server reached the notification URL.
    public var sendAttemptResults: [String] { json["sendAttempts"]?.arrayValue?.compactMap { $0["sendAttemptResult"]?.stringValue } ?? [] }
}

public struct ExtendRenewalDateResponse: AppStoreModel {
    public static let schema = ModelSchema(
        "ExtendRenewalDateResponse",
        [
            "originalTransactionId": .string, "webOrderLineItemId": .string, "success": .bool, "effectiveDate": .date,
        ])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var success: Bool { bool("success") ?? false }
    public var effectiveDate: Int64? { milliseconds("effectiveDate") }
}

public struct MassExtendRenewalDateResponse: AppStoreModel {
    public static let schema = ModelSchema("MassExtendRenewalDateResponse", ["requestIdentifier": .string])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var requestIdentifier: String? { string("requestIdentifier") }
}

public struct MassExtendRenewalDateStatusResponse: AppStoreModel {
    public static let schema = ModelSchema(
        "MassExtendRenewalDateStatusResponse",
        [
            "requestIdentifier": .string, "complete": .bool, "completeDate": .date, "succeededCount": .int64, "failedCount": .int64,
        ])
    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }
    public var complete: Bool { bool("complete") ?? false }
}
