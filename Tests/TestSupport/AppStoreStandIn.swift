package import Crypto
import Dispatch
package import Foundation
package import HTTP
package import JSON
import Synchronization

/// A local App Store Server API on loopback: real HTTP, bearer JWT checked like Apple does
/// (ES256 with the configured key, `aud`, `bid`, `exp`), signed items signed by a test chain,
/// pagination, and scripted failures (answers queued ahead of the normal ones).
package final class AppStoreStandIn: @unchecked Sendable {
    package let server: HTTPServer
    package let chain: TestChain
    let state = State()

    /// Scripted answers and the requests seen, shared with the server's handler.
    final class State: Sendable {
        let lock = Mutex<(scripted: [HTTPResponse], requests: [HTTPRequest])>(([], []))
        /// The signed payloads of Get Notification History, one array per page.
        let notificationPages = Mutex<[[String]]>([["n1"], ["n2"]])
        /// The Retention Messaging API's state: messages and images with their review state,
        /// default messages by `product/locale`, the realtime URL, and performance-test results.
        let messaging = Mutex<Messaging>(Messaging())
        /// Send Consumption Information v2 requests taken (202): transaction id and body.
        let consumption = Mutex<[(transactionId: String, body: JSONObject)]>([])
        /// What Get Transaction History answers instead of its three pages, when set: one page.
        let history = Mutex<[String]?>(nil)
        /// While hanging, requests are held unanswered.
        let held = Mutex<(hanging: Bool, contexts: [HTTPRequestContext])>((false, []))
        /// Held requests whose caller went away (closed the connection) before an answer.
        let abandoned = Mutex(0)
    }

    /// Holds every request unanswered from now on (Apple hanging) until `release()`.
    package func hang() { state.held.withLock { $0.hanging = true } }

    /// How many requests are held unanswered now.
    package var heldRequests: Int { state.held.withLock { $0.contexts.count } }

    /// How many held requests their caller gave up on (it closed the connection): a cancelled call.
    package var abandonedRequests: Int { state.abandoned.withLock { $0 } }

    /// Stops holding; what was held is answered 503 (a retry then gets the normal answer).
    package func release() {
        let held = state.held.withLock { held -> [HTTPRequestContext] in
            defer { held = (false, []) }
            return held.contexts
        }
        for context in held { context.respond(Self.error(503, 5000000, "An unknown error occurred.")) }
    }

    /// Apple's review of an uploaded message or image: `APPROVED` or `REJECTED`.
    package func review(message id: String, _ verdict: String) { state.messaging.withLock { $0.messages[id]?.state = verdict } }
    package func review(image id: String, _ verdict: String) { state.messaging.withLock { $0.images[id]?.state = verdict } }
    package var retentionMessages: [String: (state: String, body: JSONObject)] { state.messaging.withLock { $0.messages } }
    package var retentionImages: [String: (state: String, size: String, bytes: Int)] { state.messaging.withLock { $0.images } }

    /// The Send Consumption Information v2 requests Apple took, in order.
    package var consumptionRequests: [(transactionId: String, body: JSONObject)] { state.consumption.withLock { $0 } }

    /// Replaces Get Transaction History's pages with one page of these signed transactions.
    package func setHistory(_ signedTransactions: [String]) { state.history.withLock { $0 = signedTransactions } }

    /// Replaces what Get Notification History returns (one array of signed payloads per page).
    package func setNotificationPages(_ pages: [[String]]) { state.notificationPages.withLock { $0 = pages } }

    package var baseURL: String { "http://127.0.0.1:\(server.port)" }
    package var requests: [HTTPRequest] { state.lock.withLock { $0.requests } }

    /// Queues answers returned (in order) before the normal routes answer again.
    package func script(_ responses: HTTPResponse...) { state.lock.withLock { $0.scripted += responses } }

    /// A stand-in for an app whose In-App Purchase key OpenSSL makes fresh as `folder/key.p8`
    /// (key id `KEY1`, bundle `com.example.app`), the file the app's configuration then names.
    package static func withFreshKey(in folder: URL, chain: TestChain) throws -> AppStoreStandIn {
        let keyPath = folder.appendingPathComponent("key.p8")
        try runProcess("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyPath.path])
        let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: keyPath, encoding: .utf8))
        return try AppStoreStandIn(publicKey: key.publicKey, keyId: "KEY1", bundleId: "com.example.app", chain: chain)
    }

    package init(publicKey: P256.Signing.PublicKey, keyId: String, bundleId: String, chain: TestChain) throws {
        self.chain = chain
        var router = Router()
        Self.addRoutes(&router, chain: chain, bundleId: bundleId, state: state)
        let routes = router
        let state = self.state
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        server = try HTTPServer(
            configuration: configuration,
            handler: { context in
                let scripted = state.lock.withLock { state -> HTTPResponse? in
                    state.requests.append(context.request)
                    return state.scripted.isEmpty ? nil : state.scripted.removeFirst()
                }
                guard Self.authorized(context.request, publicKey: publicKey, keyId: keyId, bundleId: bundleId) else {
                    context.respond(HTTPResponse(status: 401))
                    return
                }
                if let scripted {
                    context.respond(scripted)
                    return
                }
                let holds = state.held.withLock { held -> Bool in
                    if held.hanging { held.contexts.append(context) }
                    return held.hanging
                }
                if holds {
                    context.onAbandon { [state] in state.abandoned.withLock { $0 += 1 } }
                    return
                }
                routes.handle(context)
            })
        server.start()
    }

    deinit {
        server.shutdown()
        server.waitUntilStopped()
    }

    package static func error(
        _ status: Int, _ code: Int64, _ message: String, headers: [(name: String, value: String)] = []
    ) -> HTTPResponse {
        .json(status, JSONValue.object(["errorCode": .int(code), "errorMessage": .string(message)]).serializedBytes, headers: headers)
    }

    package static func json(_ object: JSONObject) -> HTTPResponse { .json(200, JSONValue.object(object).serializedBytes) }

    /// Apple's checks of the bearer token.
    static func authorized(_ request: HTTPRequest, publicKey: P256.Signing.PublicKey, keyId: String, bundleId: String) -> Bool {
        guard let header = request.header("authorization"), header.hasPrefix("Bearer "),
            let token = try? CompactJWS(header.dropFirst(7)), token.isValidES256Signature(publicKey: publicKey),
            token.header["alg"] == "ES256", token.header["kid"]?.stringValue == keyId,
            token.payload["aud"] == "appstoreconnect-v1", token.payload["bid"]?.stringValue == bundleId,
            let issuedAt = token.payload["iat"]?.int64Value, let expires = token.payload["exp"]?.int64Value
        else { return false }
        let now = Int64(Date().timeIntervalSince1970)
        return expires > now && expires - issuedAt <= 3600 && issuedAt <= now + 60
    }

    package static func signedTransaction(_ chain: TestChain, id: String, bundleId: String) -> String {
        let now = TestChain.milliseconds(chain.mintedAt)
        return
            (try? chain.sign([
                "transactionId": .string(id), "originalTransactionId": "1000", "bundleId": .string(bundleId),
                "productId": "pro.monthly", "environment": "Sandbox", "type": "Auto-Renewable Subscription",
                "purchaseDate": .int(now), "expiresDate": .int(now + 86_400_000), "signedDate": .int(now),
            ])) ?? ""
    }

    private static func addRoutes(_ router: inout Router, chain: TestChain, bundleId: String, state: State) {
        router.add("GET", "/inApps/v1/transactions/{id}") { context in
            let id = context.pathParameters["id"] ?? ""
            let answer = json(["signedTransactionInfo": .string(signedTransaction(chain, id: id, bundleId: bundleId))])
            // "slow" answers after 3 s, for timeouts.
            if id == "slow" {
                DispatchQueue.global().asyncAfter(deadline: .now() + 3) { context.respond(answer) }
            } else {
                context.respond(answer)
            }
        }
        router.add("GET", "/inApps/v2/refund/lookup/{id}") { context in
            context.respond(
                json([
                    "signedTransactions": .array([.string(signedTransaction(chain, id: "refunded", bundleId: bundleId))]),
                    "revision": "rr1", "hasMore": false,
                ]))
        }
        router.add("GET", "/inApps/v1/lookup/{orderId}") { context in
            context.respond(
                json(["status": 0, "signedTransactions": .array([.string(signedTransaction(chain, id: "o1", bundleId: bundleId))])]))
        }
        router.add("GET", "/inApps/v1/transactions/appTransactions/{id}") { context in
            context.respond(json(["signedAppTransactionInfo": "app-transaction-jws"]))
        }
        router.add("POST", "/inApps/v1/transactions/{id}/finish") { $0.respond(HTTPResponse(status: 200)) }
        router.add("PUT", "/inApps/v2/transactions/consumption/{id}") { context in
            let body = (try? JSONParser.parse(context.request.body))?.objectValue
            if let problem = consumptionProblem(body) { return context.respond(error(400, 4000000, problem)) }
            state.consumption.withLock { $0.append((context.pathParameters["id"] ?? "", body ?? [:])) }
            context.respond(HTTPResponse(status: 202))
        }
        router.add("PUT", "/inApps/v1/transactions/consumption/{id}") { $0.respond(HTTPResponse(status: 202)) }
        router.add("PUT", "/inApps/v1/subscriptions/extend/{id}") { context in
            context.respond(
                json([
                    "originalTransactionId": .string(context.pathParameters["id"] ?? ""), "webOrderLineItemId": "9993",
                    "success": true, "effectiveDate": 1_698_148_900_000,
                ]))
        }
        router.add("POST", "/inApps/v1/subscriptions/extend/mass") { context in
            context.respond(json(["requestIdentifier": "758883e8-151b-47b7-abd0-60c4d804c2f5"]))
        }
        router.add("GET", "/inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}") { context in
            context.respond(
                json([
                    "requestIdentifier": .string(context.pathParameters["requestIdentifier"] ?? ""), "complete": true,
                    "completeDate": 1_698_148_900_000, "succeededCount": 30, "failedCount": 2,
                ]))
        }
        // Three pages of two transactions; a revision names the position, "r3" is the end.
        router.add("GET", "/inApps/v2/history/{id}") { context in
            if let items = state.history.withLock({ $0 }) {
                return context.respond(
                    json([
                        "revision": "rx", "hasMore": false, "bundleId": .string(bundleId), "environment": "Sandbox",
                        "signedTransactions": .array(items.map(JSONValue.string)),
                    ]))
            }
            let revision = QueryItems(context.request.query)["revision"]
            let page = ["r1": 2, "r2": 3, "r3": 4][revision ?? ""] ?? 1
            guard page <= 3 else {
                context.respond(
                    json([
                        "revision": "r3", "hasMore": false, "bundleId": .string(bundleId), "environment": "Sandbox",
                        "signedTransactions": .array([]),
                    ]))
                return
            }
            let items = (0..<2).map { JSONValue.string(signedTransaction(chain, id: "h\(page)-\($0)", bundleId: bundleId)) }
            context.respond(
                json([
                    "revision": .string("r\(page)"), "hasMore": .bool(page < 3), "bundleId": .string(bundleId),
                    "appAppleId": 1234, "environment": "Sandbox", "signedTransactions": .array(items),
                ]))
        }
        router.add("GET", "/inApps/v1/subscriptions/{id}") { context in
            let now = TestChain.milliseconds(chain.mintedAt)
            let renewal =
                (try? chain.sign([
                    "originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
                    "autoRenewStatus": 1, "environment": "Sandbox", "signedDate": .int(now),
                ])) ?? ""
            let item: JSONObject = [
                "status": 1, "originalTransactionId": "1000",
                "signedTransactionInfo": .string(signedTransaction(chain, id: "s1", bundleId: bundleId)),
                "signedRenewalInfo": .string(renewal),
            ]
            context.respond(
                json([
                    "environment": "Sandbox", "bundleId": .string(bundleId), "appAppleId": 1234,
                    "data": .array([.object(["subscriptionGroupIdentifier": "G1", "lastTransactions": .array([.object(item)])])]),
                ]))
        }
        // Pages of notifications; the pagination token is the next page's index.
        router.add("POST", "/inApps/v1/notifications/history") { context in
            let pages = state.notificationPages.withLock { $0 }
            let index = QueryItems(context.request.query)["paginationToken"].flatMap { Int($0.dropFirst(5)) } ?? 0
            let payloads = index < pages.count ? pages[index] : []
            let items: [JSONValue] = payloads.map {
                .object([
                    "signedPayload": .string($0), "sendAttempts": .array([.object(["attemptDate": 1, "sendAttemptResult": "SUCCESS"])]),
                ])
            }
            var body: JSONObject = ["hasMore": .bool(index + 1 < pages.count), "notificationHistory": .array(items)]
            if index + 1 < pages.count { body["paginationToken"] = .string("page-\(index + 1)") }
            context.respond(json(body))
        }
        router.add("POST", "/inApps/v1/notifications/test") { context in
            context.respond(json(["testNotificationToken": "ce3af791-365e-4c60-841b-1674b43c1609"]))
        }
        router.add("GET", "/inApps/v1/notifications/test/{token}") { context in
            context.respond(
                json(["signedPayload": "p", "sendAttempts": .array([.object(["attemptDate": 1, "sendAttemptResult": "SUCCESS"])])]))
        }
        addMessagingRoutes(&router, chain: chain, state: state)
        router.add("PUT", "/inApps/v1/transactions/{id}/appAccountToken") { context in
            let token = (try? JSONParser.parse(context.request.body))?["appAccountToken"]?.stringValue ?? ""
            context.respond(
                UUID(uuidString: token) == nil
                    ? error(400, 4000183, "Invalid request. The app account token field must be a valid UUID.")
                    : HTTPResponse(status: 200))
        }
    }
}

/// What Apple refuses in a Send Consumption Information v2 body (nil: none): members it does not
/// know, consent not given, a required field missing, an enum value it does not know, a
/// percentage out of range or, with `GRANT_PRORATED`, not strictly between 0 and 100 000.
func consumptionProblem(_ body: JSONObject?) -> String? {
    guard let body else { return "The request body is not a JSON object." }
    let known: Set<String> = ["customerConsented", "deliveryStatus", "sampleContentProvided", "consumptionPercentage", "refundPreference"]
    if let unknown = body.members.map(\.key).first(where: { !known.contains($0) }) { return "Unknown field \(unknown)." }
    guard body["customerConsented"]?.boolValue == true else {
        return "Invalid request. The customer consented field is required and must be true."
    }
    let statuses: Set<String> = [
        "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER",
    ]
    guard let status = body["deliveryStatus"]?.stringValue, statuses.contains(status) else { return "Invalid delivery status." }
    guard body["sampleContentProvided"]?.boolValue != nil else { return "Invalid request. The sample content provided field is required." }
    let percentage = body["consumptionPercentage"]
    if let percentage {
        guard let value = percentage.int64Value, (0...100_000).contains(value) else { return "Invalid consumption percentage." }
    }
    if let preference = body["refundPreference"] {
        guard let value = preference.stringValue, ["GRANT_FULL", "GRANT_PRORATED", "DECLINE"].contains(value) else {
            return "Invalid refund preference."
        }
        if value == "GRANT_PRORATED", let amount = percentage?.int64Value, !(amount > 0 && amount < 100_000) {
            return "Invalid request. A prorated refund needs a consumption percentage between 0 and 100000."
        }
    }
    if status != "DELIVERED", let amount = percentage?.int64Value, amount != 0 {
        return "Invalid request. Undelivered content has a consumption percentage of 0."
    }
    return nil
}

/// `a=1&b=2`, for the stand-in's routes.
package struct QueryItems {
    let values: [String: String]
    package init(_ query: Substring?) {
        var values: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            values[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        self.values = values
    }
    package subscript(key: String) -> String? { values[key] }
}
