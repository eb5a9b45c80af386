import Application
import HTTP
import Instants
import JSON

/// The App Store Server API the test store serves for Entitle's own client, at
/// `/v1/test-store/apple/api` + Apple's paths (docs/TEST_STORE.md): Apple's bearer token, Apple's
/// answers and error bodies (`{"errorCode","errorMessage"}`; 401 without a body). The token is
/// checked first, against the configured apps' keys, so a deployment without a test store answers
/// a good token 404 `TEST_STORE_DISABLED` and any other 401.
struct TestStoreAppleAPIHandlers: Sendable {
    let application: EntitleApplication
    let testStore: TestStoreService?

    /// Authorizes, then runs `work` on the test store; answers `status` with its JSON (none when
    /// nil), or Apple's refusal.
    private func serve(
        _ context: HTTPRequestContext, status: Int = 200,
        _ work: @escaping @Sendable (TestStoreService, AppConfiguration) async throws -> JSONObject?
    ) {
        let app: AppConfiguration
        do {
            app = try TestStoreAppleAPI.authorize(
                context.request.header("authorization"), apps: application.configuration.apps,
                machineNow: SystemClock().milliseconds)
        } catch {
            return context.respond(Self.response(error))
        }
        guard let testStore else {
            return context.reply(
                error: ServiceError(status: 404, code: "TEST_STORE_DISABLED", message: "this deployment has no test store"), app: app.id)
        }
        context.respond(app: app.id) {
            do {
                let answer = try await work(testStore, app)
                return answer.map { .json(status, JSONValue.object($0).serializedBytes, app: app.id) } ?? HTTPResponse(status: status)
            } catch let refusal as TestStoreAppleAPI.Refusal {
                return Self.response(refusal)
            }
        }
    }

    private static func response(_ refusal: TestStoreAppleAPI.Refusal) -> HTTPResponse {
        guard let body = refusal.body else { return HTTPResponse(status: refusal.status) }
        return .json(refusal.status, JSONValue.object(body).serializedBytes)
    }

    /// A query parameter. A malformed query has none, as Apple reads it: a missing revision or
    /// pagination token starts from the beginning, a missing image size is refused.
    private static func query(_ request: HTTPRequest, _ name: String) -> String? {
        (try? QueryString(request.query.map(String.init)))?[name]
    }

    /// The request's body as a JSON object, or Apple's 400.
    static func body(_ request: HTTPRequest) throws(TestStoreAppleAPI.Refusal) -> JSONObject {
        guard let object = (try? JSONParser.parse(request.body))?.objectValue else {  // Apple does not say why either
            throw TestStoreAppleAPI.Refusal(400, 4_000_000, "Invalid request. The body is not a JSON object.")
        }
        return object
    }

    /// `GET …/inApps/v1/transactions/{transactionId}`: Get Transaction Info.
    func transactionInfo(_ context: HTTPRequestContext) {
        let id = context.pathParameters["transactionId"] ?? ""
        serve(context) { testStore, app in try await testStore.transactionInfo(id, app: app) }
    }

    /// `GET …/inApps/v2/history/{transactionId}?revision=`: Get Transaction History v2.
    func transactionHistory(_ context: HTTPRequestContext) {
        let id = context.pathParameters["transactionId"] ?? ""
        let revision = Self.query(context.request, "revision")
        serve(context) { testStore, app in try await testStore.transactionHistory(id, revision: revision, app: app) }
    }

    /// `GET …/inApps/v2/refund/lookup/{transactionId}?revision=`: Get Refund History v2.
    func refundHistory(_ context: HTTPRequestContext) {
        let id = context.pathParameters["transactionId"] ?? ""
        let revision = Self.query(context.request, "revision")
        serve(context) { testStore, app in try await testStore.refundHistory(id, revision: revision, app: app) }
    }

    /// `GET …/inApps/v1/lookup/{orderId}`: Look Up Order ID.
    func orderLookup(_ context: HTTPRequestContext) {
        let id = context.pathParameters["orderId"] ?? ""
        serve(context) { testStore, app in try await testStore.orderLookup(id, app: app) }
    }

    /// `GET …/inApps/v1/subscriptions/{transactionId}?status=`: Get All Subscription Statuses.
    func subscriptionStatuses(_ context: HTTPRequestContext) {
        let id = context.pathParameters["transactionId"] ?? ""
        // `status` repeats (`status=1&status=4`); QueryString keeps the last of a name.
        let statuses = (context.request.query ?? "").split(separator: "&").compactMap { pair -> Int64? in
            pair.hasPrefix("status=") ? Int64(pair.dropFirst("status=".count)) : nil
        }
        serve(context) { testStore, app in try await testStore.subscriptionStatuses(id, status: statuses, app: app) }
    }

    /// `PUT …/inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
    func setAppAccountToken(_ context: HTTPRequestContext) {
        let id = context.pathParameters["originalTransactionId"] ?? ""
        let request = context.request
        serve(context) { testStore, app in
            try await testStore.setAppAccountToken(id, body: try Self.body(request), app: app)
            return nil
        }
    }

    /// `PUT …/inApps/v2/transactions/consumption/{transactionId}`: 202 once the body holds.
    func sendConsumption(_ context: HTTPRequestContext) {
        let id = context.pathParameters["transactionId"] ?? ""
        let request = context.request
        serve(context, status: 202) { testStore, app in
            try await testStore.sendConsumption(id, body: try Self.body(request), app: app)
            return nil
        }
    }

    /// `POST …/inApps/v1/notifications/history?paginationToken=`: Get Notification History.
    func notificationHistory(_ context: HTTPRequestContext) {
        let request = context.request
        let token = Self.query(request, "paginationToken")
        serve(context) { testStore, app in
            try await testStore.notificationHistory(try Self.body(request), paginationToken: token, app: app)
        }
    }

    // MARK: - Retention Messaging

    /// Any call of the Retention Messaging API: `decode` reads it from the request (Apple's 400
    /// when its body is not JSON).
    func messaging(
        _ context: HTTPRequestContext,
        _ decode: @escaping @Sendable (HTTPRequestContext) throws(TestStoreAppleAPI.Refusal) -> TestStoreService.MessagingCall
    ) {
        serve(context) { testStore, app in try await testStore.messaging(try decode(context), app: app) }
    }

    /// `POST …/inApps/v1/messaging/performanceTest`.
    func startPerformanceTest(_ context: HTTPRequestContext) {
        let request = context.request
        serve(context) { testStore, app in try await testStore.startPerformanceTest(try Self.body(request), app: app) }
    }

    /// `GET …/inApps/v1/messaging/performanceTest/result/{requestId}`.
    func performanceTestResult(_ context: HTTPRequestContext) {
        let id = context.pathParameters["requestId"] ?? ""
        serve(context) { testStore, app in try await testStore.performanceTestResult(id, app: app) }
    }

    /// The routes of the Retention Messaging API, under `base`.
    static func addMessagingRoutes(_ router: inout Router, base: String, handlers: TestStoreAppleAPIHandlers) {
        let messaging = base + "/inApps/v1/messaging"
        @Sendable func parameter(_ context: HTTPRequestContext, _ name: String) -> String { context.pathParameters[name] ?? "" }
        router.add("PUT", messaging + "/image/{imageIdentifier}") { context in
            handlers.messaging(context) { context in
                let size = Self.query(context.request, "imageSize")
                return .uploadImage(id: parameter(context, "imageIdentifier"), size: size, png: context.request.body)
            }
        }
        router.add("GET", messaging + "/image/list") { handlers.messaging($0) { _ in .imageList } }
        router.add("DELETE", messaging + "/image/{imageIdentifier}") {
            handlers.messaging($0) { context in .deleteImage(id: parameter(context, "imageIdentifier")) }
        }
        router.add("PUT", messaging + "/message/{messageIdentifier}") {
            handlers.messaging($0) { context throws(TestStoreAppleAPI.Refusal) in
                .uploadMessage(id: parameter(context, "messageIdentifier"), body: try body(context.request))
            }
        }
        router.add("GET", messaging + "/message/list") { handlers.messaging($0) { _ in .messageList } }
        router.add("DELETE", messaging + "/message/{messageIdentifier}") {
            handlers.messaging($0) { context in .deleteMessage(id: parameter(context, "messageIdentifier")) }
        }
        let defaults = messaging + "/default/{productId}/{locale}"
        router.add("PUT", defaults) {
            handlers.messaging($0) { context throws(TestStoreAppleAPI.Refusal) in
                .setDefault(
                    productId: parameter(context, "productId"), locale: parameter(context, "locale"), body: try body(context.request))
            }
        }
        router.add("GET", defaults) {
            handlers.messaging($0) { context in
                .getDefault(productId: parameter(context, "productId"), locale: parameter(context, "locale"))
            }
        }
        router.add("DELETE", defaults) {
            handlers.messaging($0) { context in
                .deleteDefault(productId: parameter(context, "productId"), locale: parameter(context, "locale"))
            }
        }
        router.add("PUT", messaging + "/realtime/url") {
            handlers.messaging($0) { context throws(TestStoreAppleAPI.Refusal) in .setRealtimeURL(body: try body(context.request)) }
        }
        router.add("GET", messaging + "/realtime/url") { handlers.messaging($0) { _ in .getRealtimeURL } }
        router.add("DELETE", messaging + "/realtime/url") { handlers.messaging($0) { _ in .deleteRealtimeURL } }
        router.add("POST", messaging + "/performanceTest") { handlers.startPerformanceTest($0) }
        router.add("GET", messaging + "/performanceTest/result/{requestId}") { handlers.performanceTestResult($0) }
    }
}
