import AppStore
import AppStoreAPI
import JSON
import Synchronization
import TestSupport

/// The App Store Server API port as a test sets it up: it records Send Consumption Information and
/// uploaded retention messages, answers the subscription statuses, transaction history and
/// notification history it was given, and refuses every other call (the use cases under test
/// make none).
final class RecordingAppStore: AppStoreServerAPI, Sendable {
    struct Answers {
        var statuses: [JSONValue] = []
        var history: [String] = []
        var notifications: [String] = []
    }

    let environment = "Sandbox"
    let consumption = LockedList<(String, JSONObject)>()
    let uploadedMessages = LockedList<(String, JSONObject)>()
    let answers = Mutex(Answers())

    private func refused() -> AppStoreAPIError {
        .api(status: 500, code: nil, message: "not part of this test", retryAfter: nil, environment: environment)
    }

    func sendConsumptionInformation(_ transactionId: String, _ request: JSONObject) throws(AppStoreAPIError) {
        consumption.append((transactionId, request))
    }

    func getAllTransactionHistory(
        _ transactionId: String, since revision: String?, query: [(String, String)]
    ) throws(AppStoreAPIError) -> (signedTransactions: [String], revision: String?) {
        (answers.withLock { $0.history }, "revision-1")
    }
    func getAllSubscriptionStatuses(_ transactionId: String, status: [Int64]) throws(AppStoreAPIError) -> StatusResponse {
        let groups = answers.withLock { $0.statuses }
        guard !groups.isEmpty else { throw refused() }
        return StatusResponse(validated: ["environment": "Sandbox", "bundleId": "com.example.app", "data": .array(groups)])
    }
    func lookUpOrderId(_ orderId: String) throws(AppStoreAPIError) -> OrderLookupResponse { throw refused() }
    func setAppAccountToken(_ originalTransactionId: String, appAccountToken: String) throws(AppStoreAPIError) { throw refused() }
    func finishTransaction(_ transactionId: String) throws(AppStoreAPIError) { throw refused() }
    func getNotificationHistory(
        startDate: Int64, endDate: Int64, paginationToken: String?, onlyFailures: Bool
    ) throws(AppStoreAPIError) -> NotificationHistoryResponse {
        let payloads = answers.withLock { $0.notifications }
        return NotificationHistoryResponse(
            validated: ["hasMore": false, "notificationHistory": .array(payloads.map { .object(["signedPayload": .string($0)]) })])
    }
    func requestTestNotification() throws(AppStoreAPIError) -> SendTestNotificationResponse { throw refused() }
    func getTestNotificationStatus(_ token: String) throws(AppStoreAPIError) -> CheckTestNotificationResponse { throw refused() }
    func uploadRetentionImage(_ imageIdentifier: String, png: [UInt8], size: String) throws(AppStoreAPIError) { throw refused() }
    func retentionImages() throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func deleteRetentionImage(_ imageIdentifier: String) throws(AppStoreAPIError) { throw refused() }
    func uploadRetentionMessage(_ messageIdentifier: String, _ body: JSONObject) throws(AppStoreAPIError) {
        uploadedMessages.append((messageIdentifier, body))
    }
    /// Apple's list: each uploaded message, pending review.
    func retentionMessages() throws(AppStoreAPIError) -> JSONObject {
        [
            "messageIdentifiers": .array(
                uploadedMessages.all.map { .object(["messageIdentifier": .string($0.0), "messageState": "PENDING"]) })
        ]
    }
    func deleteRetentionMessage(_ messageIdentifier: String) throws(AppStoreAPIError) { throw refused() }
    func setDefaultRetentionMessage(productId: String, locale: String, messageIdentifier: String) throws(AppStoreAPIError) {
        throw refused()
    }
    func defaultRetentionMessage(productId: String, locale: String) throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func deleteDefaultRetentionMessage(productId: String, locale: String) throws(AppStoreAPIError) { throw refused() }
    func setRealtimeURL(_ url: String) throws(AppStoreAPIError) { throw refused() }
    func realtimeURL() throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func deleteRealtimeURL() throws(AppStoreAPIError) { throw refused() }
    func startRetentionPerformanceTest(originalTransactionId: String) throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func retentionPerformanceTestResult(_ requestId: String) throws(AppStoreAPIError) -> JSONObject { throw refused() }
}
