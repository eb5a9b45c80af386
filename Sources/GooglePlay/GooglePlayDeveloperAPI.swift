import Foundation
package import HTTPClient
package import JSON

/// The Google Play Developer API calls Entitle makes, over the shared libcurl client, with the
/// service account's bearer token. The base URL is configurable so tests use a local stand-in.
package struct GooglePlayDeveloperAPI: Sendable {
    package static let defaultURL = "https://androidpublisher.googleapis.com"

    package let packageName: String
    /// Read at each call: a test deployment's test store is found only once the server listens.
    let baseURL: @Sendable () -> String
    let tokens: GoogleAccessTokens
    let http: HTTPClient

    package init(packageName: String, baseURL: String? = nil, tokens: GoogleAccessTokens, http: HTTPClient) {
        let base = (baseURL ?? Self.defaultURL).trimmingSuffix("/")
        self.init(packageName: packageName, locatedBy: { base }, tokens: tokens, http: http)
    }

    /// A client whose base URL is read at each call (the test store's API, under the server's own address).
    package init(packageName: String, locatedBy baseURL: @escaping @Sendable () -> String, tokens: GoogleAccessTokens, http: HTTPClient) {
        self.packageName = packageName
        self.baseURL = baseURL
        self.tokens = tokens
        self.http = http
    }

    private var application: [String] { ["androidpublisher", "v3", "applications", packageName] }

    /// `purchases.subscriptionsv2.get`.
    package func subscription(purchaseToken: String) async throws(GooglePlayAPIError) -> SubscriptionPurchaseV2 {
        let json = try await send("GET", application + ["purchases", "subscriptionsv2", "tokens", purchaseToken])
        return try SubscriptionPurchaseV2(json: json ?? [:])
    }

    /// `orders.get` (the Orders API): what the buyer paid for an order, which `productsv2` does not say.
    package func order(orderId: String) async throws(GooglePlayAPIError) -> PlayOrder {
        PlayOrder(json: try await send("GET", application + ["orders", orderId]) ?? [:])
    }

    /// `purchases.productsv2.getproductpurchasev2`.
    package func product(purchaseToken: String) async throws(GooglePlayAPIError) -> ProductPurchaseV2 {
        let json = try await send("GET", application + ["purchases", "productsv2", "tokens", purchaseToken])
        return try ProductPurchaseV2(json: json ?? [:])
    }

    /// `purchases.subscriptions.acknowledge`: without it Google refunds the purchase after 3 days.
    /// `obfuscatedAccountId`: the customer of a resubscription made outside the app, which
    /// carries none of its own (Google takes `externalAccountIds` only then).
    package func acknowledgeSubscription(
        subscriptionId: String, purchaseToken: String, obfuscatedAccountId: String? = nil
    ) async throws(GooglePlayAPIError) {
        var body: JSONObject = [:]
        if let obfuscatedAccountId { body["externalAccountIds"] = .object(["obfuscatedAccountId": .string(obfuscatedAccountId)]) }
        _ = try await send(
            "POST", application + ["purchases", "subscriptions", subscriptionId, "tokens", purchaseToken + ":acknowledge"], body: body)
    }

    /// `purchases.products.acknowledge`.
    package func acknowledgeProduct(productId: String, purchaseToken: String) async throws(GooglePlayAPIError) {
        _ = try await send("POST", application + ["purchases", "products", productId, "tokens", purchaseToken + ":acknowledge"], body: [:])
    }

    /// `orders.reviewrefund`: the developer's answer to a pending refund review. Google keeps the
    /// first answer only; the caller sends one.
    package func reviewRefund(orderId: String, _ body: JSONObject) async throws(GooglePlayAPIError) {
        _ = try await send("POST", application + ["orders", orderId + ":reviewrefund"], body: body)
    }

    /// `purchases.voidedpurchases.list` since `startTime` (epoch ms), every page.
    package func voidedPurchases(since startTime: Int64?) async throws(GooglePlayAPIError) -> [VoidedPurchase] {
        var found: [VoidedPurchase] = []
        var page: String?
        repeat {
            var query: [(String, String)] = [("type", "1")]  // subscriptions and one-time products
            if let startTime { query.append(("startTime", String(startTime))) }
            if let page { query.append(("token", page)) }
            let answer = try await send("GET", application + ["purchases", "voidedpurchases"], query: query) ?? [:]
            for item in answer["voidedPurchases"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
                guard let token = item["purchaseToken"]?.stringValue, let time = PlayTime.instant(item["voidedTimeMillis"]) else {
                    continue
                }
                found.append(
                    VoidedPurchase(
                        purchaseToken: token, orderId: item["orderId"]?.stringValue, voidedTime: time,
                        voidedReason: PlayTime.number(item["voidedReason"], in: PlayTime.codes)))
            }
            page = answer["tokenPagination"]?["nextPageToken"]?.stringValue
        } while page != nil
        return found
    }

    // MARK: - Transport

    /// One call; a 401 is retried once with a fresh token (Google may revoke one early).
    func send(
        _ method: String, _ path: [String], query: [(String, String)] = [], body: JSONObject? = nil, retried: Bool = false
    ) async throws(GooglePlayAPIError) -> JSONObject? {
        var headers: [(name: String, value: String)] = [
            ("Authorization", "Bearer \(try await tokens.token())"), ("Accept", "application/json"), ("User-Agent", "Entitle"),
        ]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        // `:` stays: the acknowledge calls end their last segment with `:acknowledge`.
        let url = URLBuilder.url(baseURL(), path: path, query: query, keeping: ":")
        let response: HTTPClientResponse
        do {
            response = try await http.send(
                HTTPClientRequest(method: method, url: url, headers: headers, body: body.map { JSONValue.object($0).serializedBytes }))
        } catch {
            throw .transport(error.description)
        }
        let json = (try? JSONParser.parse(response.body))?.objectValue
        let message = json?["error"]?["message"]?.stringValue ?? "HTTP \(response.status)"
        switch response.status {
        case 200..<300: return json
        case 401 where !retried:
            tokens.invalidate()
            return try await send(method, path, query: query, body: body, retried: true)
        case 401, 403: throw .auth(message)
        case 404, 410: throw .notFound(message)
        case 429, 500...: throw .unavailable(status: response.status, message: message)
        default: throw .api(status: response.status, message: message)
        }
    }

}

extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
