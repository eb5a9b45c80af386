import Application
import HTTP
import JSON

/// The test store's Google Play (docs/TEST_STORE.md): purchases and actions under
/// `/v1/test-store/google/…` (admin key, as the App Store's), and the Play Developer API and OAuth
/// token endpoint it serves for Entitle's own Google client, answered as Google answers (its
/// bearer tokens, its error bodies). Decode, await the test store, encode.
struct TestStoreGoogleHandlers: Sendable {
    let application: EntitleApplication
    let testStore: TestStoreService?
    /// The token endpoint's own URL (an assertion's audience), known once the server listens.
    let tokenURL: @Sendable () -> String

    private var admin: TestStoreHandlers { TestStoreHandlers(application: application, testStore: testStore) }

    /// `POST /v1/test-store/google/purchases`.
    func purchase(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admin.admitted(context)
            var body = try RequestBody(context.request).object
            let app = body["app"]?.stringValue ?? caller.app.id
            guard app == caller.app.id else { throw ServiceError.forbidden("the admin key is app \(caller.app.id)'s, not \(app)'s") }
            body["app"] = .string(app)
            let request = try TestStoreService.PlayPurchaseRequest(body)
            context.reply(app: app) { .object(try await testStore.googlePurchase(request)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `POST /v1/test-store/google/purchases/{purchaseToken}/{action}`.
    func action(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admin.admitted(context)
            let name = context.pathParameters["action"] ?? ""
            guard let action = TestStoreService.PlayAction(rawValue: name) else {
                let names = TestStoreService.PlayAction.allCases.map(\.rawValue).joined(separator: ", ")
                throw ServiceError.notFound("no action \"\(name)\"; the test store's Google Play takes \(names)")
            }
            let token = context.pathParameters["purchaseToken"] ?? ""
            let options = try TestStoreService.PlayActionOptions(
                context.request.body.isEmpty ? [:] : try RequestBody(context.request).object)
            context.reply(app: caller.app.id) {
                .object(try await testStore.googleAct(action, purchaseToken: token, options: options, calledBy: caller.app.id))
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `GET /v1/test-store/google/purchases/{purchaseToken}`.
    func purchaseState(_ context: HTTPRequestContext) {
        do {
            let (testStore, caller) = try admin.admitted(context)
            let token = context.pathParameters["purchaseToken"] ?? ""
            context.reply(app: caller.app.id) { .object(try await testStore.googlePurchaseState(token, calledBy: caller.app.id)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - Google's API, served

    /// Runs `work` on the test store and answers Google's way: 200 with its JSON (an empty body
    /// for nil), or Google's error.
    private func serve(
        _ context: HTTPRequestContext, authenticated: Bool = true,
        _ work: @escaping @Sendable (TestStoreService) async throws -> JSONObject?
    ) {
        guard let testStore else {
            // Only the test store issues the API's tokens: without one, no call carries a valid token.
            if authenticated {
                let refusal = GoogleAPIRefusal(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.")
                return context.respond(.json(refusal.status, JSONValue.object(refusal.body).serializedBytes))
            }
            return context.reply(
                error: ServiceError(status: 404, code: "TEST_STORE_DISABLED", message: "this deployment has no test store"), app: nil)
        }
        context.respond(app: nil) {
            do {
                let answer = try await work(testStore)
                return answer.map { .json(200, JSONValue.object($0).serializedBytes) } ?? HTTPResponse(status: 200)
            } catch let refusal as GoogleAPIRefusal {
                return .json(refusal.status, JSONValue.object(refusal.body).serializedBytes)
            }
        }
    }

    /// A form or query string; a malformed one reads as empty, so Google's own refusal (a missing
    /// grant, a default window) answers it.
    private static func form(_ text: String?) -> [String: String] { (try? QueryString(text))?.values ?? [:] }

    /// `POST /v1/test-store/google/token`.
    func token(_ context: HTTPRequestContext) {
        let form = Self.form(String(decoding: context.request.body, as: UTF8.self))
        let url = tokenURL()
        serve(context, authenticated: false) { testStore in try await testStore.googleToken(form: form, tokenURL: url) }
    }

    private func caller(_ context: HTTPRequestContext) -> (package: String, authorization: String?) {
        (context.pathParameters["packageName"] ?? "", context.request.header("authorization"))
    }

    /// `GET …/purchases/subscriptionsv2/tokens/{token}`.
    func subscriptionV2(_ context: HTTPRequestContext) {
        let (package, authorization) = caller(context)
        let token = context.pathParameters["token"] ?? ""
        serve(context) { try await $0.googleSubscription(token, packageName: package, authorization: authorization) }
    }

    /// `GET …/purchases/productsv2/tokens/{token}`.
    func productV2(_ context: HTTPRequestContext) {
        let (package, authorization) = caller(context)
        let token = context.pathParameters["token"] ?? ""
        serve(context) { try await $0.googleProduct(token, packageName: package, authorization: authorization) }
    }

    /// `POST …/purchases/subscriptions/{productId}/tokens/{token}:acknowledge` and the products' one.
    func acknowledge(_ context: HTTPRequestContext, subscription: Bool) {
        let (package, authorization) = caller(context)
        let productId = context.pathParameters["productId"] ?? ""
        let action = context.pathParameters["tokenAction"] ?? ""
        let body = context.request.body
        serve(context) { testStore in
            guard action.hasSuffix(":acknowledge") else { throw GoogleAPIRefusal(404, "Method not found.") }
            try await testStore.googleAcknowledge(
                subscription: subscription, productId: productId, token: String(action.dropLast(":acknowledge".count)), body: body,
                packageName: package, authorization: authorization)
            return nil
        }
    }

    /// `GET …/purchases/voidedpurchases`.
    func voided(_ context: HTTPRequestContext) {
        let (package, authorization) = caller(context)
        let query = Self.form(context.request.query.map(String.init))
        serve(context) { try await $0.googleVoided(query: query, packageName: package, authorization: authorization) }
    }

    /// `GET …/orders/{orderId}`.
    func order(_ context: HTTPRequestContext) {
        let (package, authorization) = caller(context)
        let orderId = context.pathParameters["orderId"] ?? ""
        serve(context) { try await $0.googleOrder(orderId, packageName: package, authorization: authorization) }
    }

    /// `POST …/orders/{orderId}:reviewrefund`.
    func reviewRefund(_ context: HTTPRequestContext) {
        let (package, authorization) = caller(context)
        let action = context.pathParameters["orderId"] ?? ""
        let body = context.request.body
        serve(context) { testStore in
            guard action.hasSuffix(":reviewrefund") else { throw GoogleAPIRefusal(404, "Method not found.") }
            try await testStore.googleReviewRefund(
                String(action.dropLast(":reviewrefund".count)), body: body, packageName: package, authorization: authorization)
            return [:]
        }
    }

    static func addRoutes(_ router: inout Router, handlers: TestStoreGoogleHandlers) {
        router.add("POST", "/v1/test-store/google/purchases") { handlers.purchase($0) }
        router.add("GET", "/v1/test-store/google/purchases/{purchaseToken}") { handlers.purchaseState($0) }
        router.add("POST", "/v1/test-store/google/purchases/{purchaseToken}/{action}") { handlers.action($0) }
        router.add("POST", TestStoreComposition.googleTokenPath) { handlers.token($0) }
        let application = TestStoreComposition.googleAPIPath + "/androidpublisher/v3/applications/{packageName}"
        router.add("GET", application + "/purchases/subscriptionsv2/tokens/{token}") { handlers.subscriptionV2($0) }
        router.add("GET", application + "/purchases/productsv2/tokens/{token}") { handlers.productV2($0) }
        router.add("POST", application + "/purchases/subscriptions/{productId}/tokens/{tokenAction}") {
            handlers.acknowledge($0, subscription: true)
        }
        router.add("POST", application + "/purchases/products/{productId}/tokens/{tokenAction}") {
            handlers.acknowledge($0, subscription: false)
        }
        router.add("GET", application + "/purchases/voidedpurchases") { handlers.voided($0) }
        router.add("GET", application + "/orders/{orderId}") { handlers.order($0) }
        router.add("POST", application + "/orders/{orderId}") { handlers.reviewRefund($0) }
    }
}
