package import JSON

/// The Google Play Developer API calls Entitle's use cases make for one app: the HTTPS client
/// (`GooglePlayDeveloperAPI`) makes them; a use case receives this port, so its tests give it a
/// fake and the test store can stand in for Google.
package protocol GooglePlayAPI: Sendable {
    func subscription(purchaseToken: String) async throws(GooglePlayAPIError) -> SubscriptionPurchaseV2
    func order(orderId: String) async throws(GooglePlayAPIError) -> PlayOrder
    func product(purchaseToken: String) async throws(GooglePlayAPIError) -> ProductPurchaseV2
    func acknowledgeSubscription(
        subscriptionId: String, purchaseToken: String, obfuscatedAccountId: String?) async throws(GooglePlayAPIError)
    func acknowledgeProduct(productId: String, purchaseToken: String) async throws(GooglePlayAPIError)
    func reviewRefund(orderId: String, _ body: JSONObject) async throws(GooglePlayAPIError)
    func voidedPurchases(since startTime: Int64?) async throws(GooglePlayAPIError) -> [VoidedPurchase]
}

extension GooglePlayDeveloperAPI: GooglePlayAPI {}
