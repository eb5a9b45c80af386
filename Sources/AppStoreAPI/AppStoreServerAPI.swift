package import JSON

/// The App Store Server API and Retention Messaging API calls Entitle's use cases make, for one
/// app and one environment: `AppStoreServerAPIClient` makes them over HTTPS; a use case receives
/// this port, so its tests give it a fake and the test store can stand in for Apple.
package protocol AppStoreServerAPI: Sendable {
    var environment: String { get }

    // Transactions and subscriptions
    func getAllTransactionHistory(
        _ transactionId: String, since revision: String?, query: [(String, String)]
    ) async throws(AppStoreAPIError) -> (signedTransactions: [String], revision: String?)
    func getAllSubscriptionStatuses(_ transactionId: String, status: [Int64]) async throws(AppStoreAPIError) -> StatusResponse
    func lookUpOrderId(_ orderId: String) async throws(AppStoreAPIError) -> OrderLookupResponse
    func setAppAccountToken(_ originalTransactionId: String, appAccountToken: String) async throws(AppStoreAPIError)
    func finishTransaction(_ transactionId: String) async throws(AppStoreAPIError)
    func sendConsumptionInformation(_ transactionId: String, _ request: JSONObject) async throws(AppStoreAPIError)

    // Notifications
    func getNotificationHistory(
        startDate: Int64, endDate: Int64, paginationToken: String?, onlyFailures: Bool
    ) async throws(AppStoreAPIError) -> NotificationHistoryResponse
    func requestTestNotification() async throws(AppStoreAPIError) -> SendTestNotificationResponse
    func getTestNotificationStatus(_ token: String) async throws(AppStoreAPIError) -> CheckTestNotificationResponse

    // Retention Messaging
    func uploadRetentionImage(_ imageIdentifier: String, png: [UInt8], size: String) async throws(AppStoreAPIError)
    func retentionImages() async throws(AppStoreAPIError) -> JSONObject
    func deleteRetentionImage(_ imageIdentifier: String) async throws(AppStoreAPIError)
    func uploadRetentionMessage(_ messageIdentifier: String, _ body: JSONObject) async throws(AppStoreAPIError)
    func retentionMessages() async throws(AppStoreAPIError) -> JSONObject
    func deleteRetentionMessage(_ messageIdentifier: String) async throws(AppStoreAPIError)
    func setDefaultRetentionMessage(productId: String, locale: String, messageIdentifier: String) async throws(AppStoreAPIError)
    func defaultRetentionMessage(productId: String, locale: String) async throws(AppStoreAPIError) -> JSONObject
    func deleteDefaultRetentionMessage(productId: String, locale: String) async throws(AppStoreAPIError)
    func setRealtimeURL(_ url: String) async throws(AppStoreAPIError)
    func realtimeURL() async throws(AppStoreAPIError) -> JSONObject
    func deleteRealtimeURL() async throws(AppStoreAPIError)
    func startRetentionPerformanceTest(originalTransactionId: String) async throws(AppStoreAPIError) -> JSONObject
    func retentionPerformanceTestResult(_ requestId: String) async throws(AppStoreAPIError) -> JSONObject
}

extension AppStoreServerAPI {
    /// Every page of the history from `revision` on, with no query.
    package func getAllTransactionHistory(
        _ transactionId: String, since revision: String? = nil
    ) async throws(AppStoreAPIError) -> (signedTransactions: [String], revision: String?) {
        try await getAllTransactionHistory(transactionId, since: revision, query: [])
    }

    package func getAllSubscriptionStatuses(_ transactionId: String) async throws(AppStoreAPIError) -> StatusResponse {
        try await getAllSubscriptionStatuses(transactionId, status: [])
    }

    package func getNotificationHistory(
        startDate: Int64, endDate: Int64, paginationToken: String? = nil
    ) async throws(AppStoreAPIError) -> NotificationHistoryResponse {
        try await getNotificationHistory(startDate: startDate, endDate: endDate, paginationToken: paginationToken, onlyFailures: false)
    }
}

extension AppStoreServerAPIClient: AppStoreServerAPI {}
