import AppStore
import Foundation
package import HTTPClient
package import JSON

/// The App Store Server API for one app and one environment (docs/APP_STORE.md §5). Calls block:
/// run them off the event loops. A fresh bearer token is minted for each request.
package final class AppStoreServerAPIClient: Sendable {
    package static let productionURL = "https://api.storekit.apple.com"
    package static let sandboxURL = "https://api.storekit-sandbox.apple.com"

    package let environment: String
    /// Where the API is, read for each call: fixed, or (the test store's) known once the server
    /// listens.
    private let base: @Sendable () -> String
    package var baseURL: String { base() }
    private let tokens: BearerTokenFactory
    private let http: HTTPClient

    package enum SetupError: Error, CustomStringConvertible {
        case unsupportedEnvironment(String)
        package var description: String { "the App Store Server API has no \"\(unsupportedEnvironmentName)\" environment" }
        private var unsupportedEnvironmentName: String { if case .unsupportedEnvironment(let name) = self { name } else { "" } }
    }

    /// `baseURL` overrides Apple's (local stand-ins in tests); `caFile` trusts a private CA;
    /// `runTransfer` is where the blocking transfers run (Dispatch's pool when nil).
    package convenience init(
        environment: String, tokens: BearerTokenFactory, baseURL: String? = nil, caFile: String? = nil,
        timeout: Double = 30, runTransfer: TransferRunner? = nil
    ) throws {
        let fixed: String
        switch environment {
        case "Production": fixed = baseURL ?? Self.productionURL
        case "Sandbox": fixed = baseURL ?? Self.sandboxURL
        case "LocalTesting" where baseURL != nil: fixed = baseURL!
        default: throw SetupError.unsupportedEnvironment(environment)
        }
        try self.init(
            environment: environment, tokens: tokens, locatedBy: { fixed }, caFile: caFile, timeout: timeout, runTransfer: runTransfer)
    }

    /// The API at an address read for each call (`locatedBy`).
    package init(
        environment: String, tokens: BearerTokenFactory, locatedBy base: @escaping @Sendable () -> String, caFile: String? = nil,
        timeout: Double = 30, runTransfer: TransferRunner? = nil
    ) throws {
        self.base = base
        self.environment = environment
        self.tokens = tokens
        var configuration = HTTPClient.Configuration()
        configuration.totalTimeout = timeout
        configuration.connectTimeout = min(timeout, 10)
        configuration.maxResponseBytes = 1 << 20
        configuration.caFile = caFile
        if let runTransfer { configuration.runTransfer = runTransfer }
        http = HTTPClient(configuration: configuration)
    }

    // MARK: - Transactions and subscriptions

    package func getTransactionInfo(_ transactionId: String) async throws(AppStoreAPIError) -> TransactionInfoResponse {
        try await decode(send("GET", ["inApps", "v1", "transactions", transactionId]))
    }

    /// One page of Get Transaction History v2; pass the previous page's `revision` for the next.
    package func getTransactionHistory(
        _ transactionId: String, revision: String? = nil,
        query: [(String, String)] = []
    ) async throws(AppStoreAPIError) -> HistoryResponse {
        try await decode(
            send(
                "GET", ["inApps", "v2", "history", transactionId],
                query: query + (revision.map { [("revision", $0)] } ?? [])))
    }

    /// Every page from `revision` on (the same query on each page, P-21): the signed transactions
    /// and the last `revision`, which a later call uses to fetch only what changed.
    package func getAllTransactionHistory(
        _ transactionId: String, since revision: String? = nil,
        query: [(String, String)] = []
    ) async throws(AppStoreAPIError) -> (signedTransactions: [String], revision: String?) {
        var all: [String] = []
        var current = revision
        while true {
            let page = try await getTransactionHistory(transactionId, revision: current, query: query)
            all += page.signedTransactions
            current = page.revision ?? current
            if !page.hasMore { return (all, current) }
        }
    }

    package func getAllSubscriptionStatuses(_ transactionId: String, status: [Int64] = []) async throws(AppStoreAPIError) -> StatusResponse
    {
        try await decode(
            send("GET", ["inApps", "v1", "subscriptions", transactionId], query: status.map { ("status", String($0)) }))
    }

    package func getRefundHistory(_ transactionId: String, revision: String? = nil) async throws(AppStoreAPIError) -> RefundHistoryResponse
    {
        try await decode(
            send("GET", ["inApps", "v2", "refund", "lookup", transactionId], query: revision.map { [("revision", $0)] } ?? []))
    }

    package func lookUpOrderId(_ orderId: String) async throws(AppStoreAPIError) -> OrderLookupResponse {
        try await decode(send("GET", ["inApps", "v1", "lookup", orderId]))
    }

    package func getAppTransactionInfo(_ transactionId: String) async throws(AppStoreAPIError) -> AppTransactionInfoResponse {
        try await decode(send("GET", ["inApps", "v1", "transactions", "appTransactions", transactionId]))
    }

    /// Needs an original transaction id (4000187) and a UUID (4000183); not for Family Sharing (4000185).
    package func setAppAccountToken(_ originalTransactionId: String, appAccountToken: String) async throws(AppStoreAPIError) {
        _ = try await send(
            "PUT", ["inApps", "v1", "transactions", originalTransactionId, "appAccountToken"],
            body: ["appAccountToken": .string(appAccountToken.lowercased())])
    }

    /// Marks a consumable or non-renewing purchase as delivered (Finish Transaction).
    package func finishTransaction(_ transactionId: String) async throws(AppStoreAPIError) {
        _ = try await send("POST", ["inApps", "v1", "transactions", transactionId, "finish"])
    }

    /// Send Consumption Data (v1, deprecated by Apple in favour of v2); integer enums, `appAccountToken` "" when unknown.
    package func sendConsumptionData(_ transactionId: String, _ request: JSONObject) async throws(AppStoreAPIError) {
        _ = try await send("PUT", ["inApps", "v1", "transactions", "consumption", transactionId], body: request)
    }

    package func sendConsumptionInformation(_ transactionId: String, _ request: JSONObject) async throws(AppStoreAPIError) {
        _ = try await send("PUT", ["inApps", "v2", "transactions", "consumption", transactionId], body: request)
    }

    package func extendSubscriptionRenewalDate(
        _ originalTransactionId: String, extendByDays: Int, reasonCode: Int64,
        requestIdentifier: String
    ) async throws(AppStoreAPIError) -> ExtendRenewalDateResponse {
        try await decode(
            send(
                "PUT", ["inApps", "v1", "subscriptions", "extend", originalTransactionId],
                body: [
                    "extendByDays": .int(Int64(extendByDays)), "extendReasonCode": .int(reasonCode),
                    "requestIdentifier": .string(requestIdentifier),
                ]))
    }

    package func extendRenewalDateForAllActiveSubscribers(
        _ request: JSONObject
    ) async throws(AppStoreAPIError) -> MassExtendRenewalDateResponse {
        try await decode(send("POST", ["inApps", "v1", "subscriptions", "extend", "mass"], body: request))
    }

    package func getStatusOfSubscriptionRenewalDateExtensions(
        productId: String,
        requestIdentifier: String
    ) async throws(AppStoreAPIError) -> MassExtendRenewalDateStatusResponse {
        try await decode(send("GET", ["inApps", "v1", "subscriptions", "extend", "mass", productId, requestIdentifier]))
    }

    // MARK: - Notifications

    /// One page of Get Notification History for `[startDate, endDate)` (epoch ms).
    package func getNotificationHistory(
        startDate: Int64, endDate: Int64, paginationToken: String? = nil,
        onlyFailures: Bool = false
    ) async throws(AppStoreAPIError) -> NotificationHistoryResponse {
        var body: JSONObject = ["startDate": .int(startDate), "endDate": .int(endDate)]
        if onlyFailures { body["onlyFailures"] = true }
        return try await decode(
            send(
                "POST", ["inApps", "v1", "notifications", "history"],
                query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: body))
    }

    package func requestTestNotification() async throws(AppStoreAPIError) -> SendTestNotificationResponse {
        try await decode(send("POST", ["inApps", "v1", "notifications", "test"]))
    }

    package func getTestNotificationStatus(_ token: String) async throws(AppStoreAPIError) -> CheckTestNotificationResponse {
        try await decode(send("GET", ["inApps", "v1", "notifications", "test", token]))
    }

    // MARK: - Transport

    /// Sends one request; any 2xx is success (its JSON object, or nil for an empty body).
    func send(
        _ method: String, _ path: [String], query: [(String, String)] = [],
        body: JSONObject? = nil
    ) async throws(AppStoreAPIError) -> JSONObject? {
        try await send(
            method, path, query: query, bytes: body.map { JSONValue.object($0).serializedBytes }, contentType: "application/json")
    }

    /// The same with a body of any type (an image).
    func send(
        _ method: String, _ path: [String], query: [(String, String)] = [], bytes body: [UInt8]?, contentType: String
    ) async throws(AppStoreAPIError) -> JSONObject? {
        let token: String
        do { token = try tokens.token() } catch {
            throw .decoding("cannot sign the bearer token: \(error)", environment: environment)
        }
        var headers: [(name: String, value: String)] = [
            ("Authorization", "Bearer \(token)"), ("Accept", "application/json"),
            ("User-Agent", "Entitle/0.3"),
        ]
        if body != nil { headers.append(("Content-Type", contentType)) }
        // Path segments and query parts are percent-encoded (Apple's libraries do not; ids with
        // other characters would otherwise change the path).
        let url = URLBuilder.url(baseURL, path: path, query: query)
        let response: HTTPClientResponse
        do {
            response = try await http.send(
                HTTPClientRequest(method: method, url: url, headers: headers, body: body))
        } catch {
            throw .transport(error, environment: environment)
        }
        guard (200..<300).contains(response.status) else { throw apiError(response) }
        guard !response.body.isEmpty else { return nil }
        guard let object = (try? JSONParser.parse(response.body))?.objectValue else {
            throw .decoding("not a JSON object", environment: environment)
        }
        return object
    }

    private func apiError(_ response: HTTPClientResponse) -> AppStoreAPIError {
        let json = (try? JSONParser.parse(response.body))?.objectValue
        let retryAfter = response.header("Retry-After").flatMap { Int64($0) }
        return .api(
            status: response.status, code: json?["errorCode"]?.integer(in: 0...Int64(Int32.max)).map(APIErrorCode.init),
            message: json?["errorMessage"]?.stringValue, retryAfter: retryAfter, environment: environment)
    }

    private func decode<Model: AppStoreModel>(_ object: JSONObject?) async throws(AppStoreAPIError) -> Model {
        do { return try Model(decoding: object ?? [:]) } catch {
            throw .decoding(error.description, environment: environment)
        }
    }

}
