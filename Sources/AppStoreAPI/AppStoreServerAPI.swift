package import JSON

/// The App Store Server API and Retention Messaging API calls Entitle's use cases make, for one
/// app and one environment: `AppStoreServerAPIClient` makes them over HTTPS; a use case receives
/// this port, so its tests give it a fake and the test store can stand in for Apple.
package protocol AppStoreServerAPI: Sendable {
    var environment: String { get }

    // Transactions and subscriptions
    func getAllTransactionHistory(
        _ transactionId: String, since revision: String?, query: [(String, String)]
    ) throws(AppStoreAPIError) -> (signedTransactions: [String], revision: String?)
    func getAllSubscriptionStatuses(_ transactionId: String, status: [Int64]) throws(AppStoreAPIError) -> StatusResponse
    func lookUpOrderId(_ orderId: String) throws(AppStoreAPIError) -> OrderLookupResponse
    func setAppAccountToken(_ originalTransactionId: String, appAccountToken: String) throws(AppStoreAPIError)
    func finishTransaction(_ transactionId: String) throws(AppStoreAPIError)
    func sendConsumptionInformation(_ transactionId: String, _ request: JSONObject) throws(AppStoreAPIError)

    // Notifications
    func getNotificationHistory(
        startDate: Int64, endDate: Int64, paginationToken: String?, onlyFailures: Bool
    ) throws(AppStoreAPIError) -> NotificationHistoryResponse
    func requestTestNotification() throws(AppStoreAPIError) -> SendTestNotificationResponse
    func getTestNotificationStatus(_ token: String) throws(AppStoreAPIError) -> CheckTestNotificationResponse

    // Retention Messaging
    func uploadRetentionImage(_ imageIdentifier: String, png: [UInt8], size: String) throws(AppStoreAPIError)
    func retentionImages() throws(AppStoreAPIError) -> JSONObject
    func deleteRetentionImage(_ imageIdentifier: String) throws(AppStoreAPIError)
    func uploadRetentionMessage(_ messageIdentifier: String, _ body: JSONObject) throws(AppStoreAPIError)
    func retentionMessages() throws(AppStoreAPIError) -> JSONObject
    func deleteRetentionMessage(_ messageIdentifier: String) throws(AppStoreAPIError)
    func setDefaultRetentionMessage(productId: String, locale: String, messageIdentifier: String) throws(AppStoreAPIError)
    func defaultRetentionMessage(productId: String, locale: String) throws(AppStoreAPIError) -> JSONObject
    func deleteDefaultRetentionMessage(productId: String, locale: String) throws(AppStoreAPIError)
    func setRealtimeURL(_ url: String) throws(AppStoreAPIError)
    func realtimeURL() throws(AppStoreAPIError) -> JSONObject
    func deleteRealtimeURL() throws(AppStoreAPIError)
    func startRetentionPerformanceTest(originalTransactionId: String) throws(AppStoreAPIError) -> JSONObject
    func retentionPerformanceTestResult(_ requestId: String) throws(AppStoreAPIError) -> JSONObject
}

extension AppStoreServerAPI {
    /// Every page of the history from `revision` on, with no query.
    package func getAllTransactionHistory(
        _ transactionId: String, since revision: String? = nil
    ) throws(AppStoreAPIError) -> (signedTransactions: [String], revision: String?) {
        try getAllTransactionHistory(transactionId, since: revision, query: [])
    }

    package func getAllSubscriptionStatuses(_ transactionId: String) throws(AppStoreAPIError) -> StatusResponse {
        try getAllSubscriptionStatuses(transactionId, status: [])
    }

    package func getNotificationHistory(
        startDate: Int64, endDate: Int64, paginationToken: String? = nil
    ) throws(AppStoreAPIError) -> NotificationHistoryResponse {
        try getNotificationHistory(startDate: startDate, endDate: endDate, paginationToken: paginationToken, onlyFailures: false)
    }
}

extension AppStoreServerAPIClient: AppStoreServerAPI {}
