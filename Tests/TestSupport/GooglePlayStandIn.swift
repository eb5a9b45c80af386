package import Crypto
package import Foundation
package import HTTP
package import JSON
import Synchronization

/// A local Google on loopback that behaves like Google for what Entitle uses: the OAuth token
/// endpoint checks the service account's RS256 assertion (issuer, audience, scope, lifetime,
/// signature) and issues bearer tokens; the Android Publisher API checks them and serves
/// subscriptions, one-time products and voided purchases from scenarios, counts
/// acknowledgements, and can be told to fail; and it signs Pub/Sub OIDC push tokens with its own
/// RSA key, published as a JWK set (`/oauth2/v3/certs`, and a file).
package final class GooglePlayStandIn: @unchecked Sendable {
    package let server: HTTPServer
    package let packageName: String
    /// The service account Entitle is configured with: its key file and e-mail.
    package let serviceAccountFile: URL
    package let serviceAccountEmail = "entitle@example-project.iam.gserviceaccount.com"
    /// The JWK set of the push-token signing keys, as a file.
    package let jwksFile: URL
    private let folder: URL
    private let state: State

    final class State: Sendable {
        struct Values {
            var subscriptions: [String: JSONObject] = [:]
            var products: [String: JSONObject] = [:]
            /// `orders.get`'s answers, by order id.
            var orders: [String: JSONObject] = [:]
            var voided: [JSONObject] = []
            var acknowledgements: [String] = []
            /// Refund reviews answered (`orders.reviewrefund`): every call, and the first body per order
            /// (the one Google keeps).
            var reviewCalls: [String] = []
            var reviews: [String: JSONObject] = [:]
            /// Each acknowledgement's request body, by purchase token.
            var acknowledgementBodies: [String: JSONObject] = [:]
            var issued: [String: Int64] = [:]
            var tokenRequests = 0
            var assertions: [String] = []
            var scripted: [HTTPResponse] = []
            /// Acknowledgements still to refuse with 503 before taking one.
            var refusedAcknowledgements = 0
            var requests: [String] = []
        }
        let values = Mutex(Values())
    }

    /// The push-token signing keys: the current one first, as published.
    final class PushKeys: Sendable {
        let keys = Mutex<[(kid: String, key: RSA.PrivateKey, pem: String)]>([])

        func jwks() -> JSONValue {
            let keys = keys.withLock { $0 }
            return .object([
                "keys": .array(
                    keys.map { entry in
                        let (modulus, exponent) = (try? GooglePlayStandIn.modulusAndExponent(entry.pem)) ?? ([], [])
                        return .object([
                            "kty": "RSA", "alg": "RS256", "use": "sig", "kid": .string(entry.kid),
                            "n": .string(Base64.encodeURL(modulus)), "e": .string(Base64.encodeURL(exponent)),
                        ])
                    })
            ])
        }
    }
    private let signingKeys = PushKeys()

    package init(packageName: String = "com.example.app") throws {
        self.packageName = packageName
        folder = try makeTemporaryDirectory("entitle-google")
        let account = try Self.rsaKey(in: folder, name: "service-account")
        serviceAccountFile = folder.appendingPathComponent("service-account.json")
        try writeFile(
            serviceAccountFile,
            JSONValue.object([
                "type": "service_account", "project_id": "example-project", "private_key_id": "sa-key-1",
                "private_key": .string(account.privatePEM), "client_email": .string(serviceAccountEmail),
                "client_id": "1234567890",
            ]).serializedString)
        jwksFile = folder.appendingPathComponent("jwks.json")
        state = State()
        let accountKey = try RSA.PublicKey(pemRepresentation: account.publicPEM)
        var router = Router()
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        // Bound first so the handlers know the token endpoint's URL (the assertion's audience).
        let box = Box()
        let state = self.state
        let packageName = self.packageName
        let email = serviceAccountEmail
        Self.addRoutes(
            &router, state: state, packageName: packageName, keys: signingKeys, accountKey: accountKey, email: email, box: box)
        let routes = router
        server = try HTTPServer(
            configuration: configuration,
            handler: { context in
                let scripted = state.values.withLock { values -> HTTPResponse? in
                    values.requests.append("\(context.request.method) \(context.request.path)")
                    return context.request.path.hasPrefix("/androidpublisher") && !values.scripted.isEmpty
                        ? values.scripted.removeFirst() : nil
                }
                if let scripted { return context.respond(scripted) }
                routes.handle(context)
            })
        box.tokenURL = "http://127.0.0.1:\(server.port)/token"
        server.start()
        try rotateKeys()
    }

    deinit {
        server.shutdown()
        server.waitUntilStopped()
        try? FileManager.default.removeItem(at: folder)
    }

    final class Box: @unchecked Sendable { var tokenURL = "" }

    package var baseURL: String { "http://127.0.0.1:\(server.port)" }
    package var tokenURL: String { baseURL + "/token" }
    package var jwksURL: String { baseURL + "/oauth2/v3/certs" }

    // MARK: - Scenarios

    package func setSubscription(_ purchaseToken: String, _ purchase: JSONObject) {
        state.values.withLock { $0.subscriptions[purchaseToken] = purchase }
    }

    /// A one-time product as `productsv2.getproductpurchasev2` answers it.
    package func setProduct(_ purchaseToken: String, _ purchase: JSONObject) {
        state.values.withLock { $0.products[purchaseToken] = purchase }
    }

    /// An order as `orders.get` answers it (the Orders API: what the buyer paid, `total`).
    package func setOrder(_ orderId: String, _ order: JSONObject) {
        state.values.withLock { $0.orders[orderId] = order }
    }

    package func addVoided(_ purchaseToken: String, at milliseconds: Int64, orderId: String? = nil) {
        var item: JSONObject = [
            "kind": "androidpublisher#voidedPurchase", "purchaseToken": .string(purchaseToken),
            "voidedTimeMillis": .string(String(milliseconds)), "voidedReason": 1, "voidedSource": 0,
        ]
        if let orderId { item["orderId"] = .string(orderId) }
        state.values.withLock { $0.voided.append(item) }
    }

    /// Queues answers the Android Publisher API gives (in order) before answering normally.
    package func script(_ responses: HTTPResponse...) { state.values.withLock { $0.scripted += responses } }

    /// The next `count` acknowledgements are answered 503 (Google having a bad minute).
    package func refuseAcknowledgements(_ count: Int) { state.values.withLock { $0.refusedAcknowledgements = count } }

    package var acknowledgements: [String] { state.values.withLock { $0.acknowledgements } }
    /// The order ids of every `reviewrefund` call, and the answer Google kept per order.
    package var refundReviewCalls: [String] { state.values.withLock { $0.reviewCalls } }
    package func refundReview(_ orderId: String) -> JSONObject? { state.values.withLock { $0.reviews[orderId] } }
    package func acknowledgementBody(_ purchaseToken: String) -> JSONObject? {
        state.values.withLock { $0.acknowledgementBodies[purchaseToken] }
    }
    package var tokenRequests: Int { state.values.withLock { $0.tokenRequests } }
    /// The OAuth assertions received, as sent.
    package var assertions: [String] { state.values.withLock { $0.assertions } }
    package var requests: [String] { state.values.withLock { $0.requests } }

    // MARK: - Push tokens

    /// A fresh signing key becomes the current one (published beside the older ones).
    package func rotateKeys() throws {
        let key = try Self.rsaKey(in: folder, name: "push-\(UUID().uuidString)")
        let kid = "kid-" + UUID().uuidString.prefix(8).lowercased()
        let privateKey = try RSA.PrivateKey(pemRepresentation: key.privatePEM)
        signingKeys.keys.withLock { $0.insert((kid, privateKey, key.publicPEM), at: 0) }
        try writeFile(jwksFile, jwks().serializedString)
    }

    /// Publishes only the current key (an older kid then is unknown).
    package func retireOldKeys() throws {
        signingKeys.keys.withLock { $0 = Array($0.prefix(1)) }
        try writeFile(jwksFile, jwks().serializedString)
    }

    /// The JWK set of the published keys.
    package func jwks() -> JSONValue { signingKeys.jwks() }

    /// The OIDC token Pub/Sub sends with a push, signed with the current key (or `forgedWith`).
    package func pushToken(
        audience: String, email: String? = nil, emailVerified: Bool = true, expiresIn: Int64 = 3600,
        issuer: String = "https://accounts.google.com", forgedWith forger: RSA.PrivateKey? = nil
    ) throws -> String {
        let (kid, key) = signingKeys.keys.withLock { ($0[0].kid, $0[0].key) }
        let now = Int64(Date().timeIntervalSince1970)
        return try JWSSigner.sign(
            header: ["alg": "RS256", "kid": .string(kid), "typ": "JWT"],
            payload: [
                "iss": .string(issuer), "aud": .string(audience), "azp": "1234567890", "email": .string(email ?? serviceAccountEmail),
                "email_verified": .bool(emailVerified), "iat": .int(now - 10), "exp": .int(now + expiresIn),
                "sub": "1234567890",
            ], with: forger ?? key)
    }

    /// Pub/Sub's push body for a developer notification.
    package static func pushBody(
        _ notification: JSONObject, messageId: String, subscription: String = "projects/p/subscriptions/s"
    )
        -> JSONObject
    {
        [
            "message": .object([
                "data": .string(Base64.encode(JSONValue.object(notification).serializedBytes)), "messageId": .string(messageId),
                "message_id": .string(messageId), "publishTime": "2026-12-01T12:00:00.000Z",
            ]), "subscription": .string(subscription),
        ]
    }

    // MARK: - Keys

    /// An RSA key made by OpenSSL's command line.
    package static func rsaKey(in folder: URL, name: String) throws -> (privatePEM: String, publicPEM: String) {
        let path = folder.appendingPathComponent("\(name).pem")
        try runProcess("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path.path])
        let publicPEM = try runProcess("openssl", ["pkey", "-in", path.path, "-pubout"]).stdout
        return (try String(contentsOf: path, encoding: .utf8), publicPEM)
    }

    /// `n` and `e` of a public key, read by OpenSSL's command line.
    static func modulusAndExponent(_ publicPEM: String) throws -> ([UInt8], [UInt8]) {
        let text = try runProcess("openssl", ["rsa", "-pubin", "-noout", "-modulus"], input: Array(publicPEM.utf8)).stdout
        let hex = (text.split(separator: "=").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return (Hex.decode(hex) ?? [], [0x01, 0x00, 0x01])
    }

    // MARK: - Routes

    private static func error(_ status: Int, _ message: String) -> HTTPResponse {
        .json(status, JSONValue.object(["error": .object(["code": .int(Int64(status)), "message": .string(message)])]).serializedBytes)
    }

    private static func addRoutes(
        _ router: inout Router, state: State, packageName: String, keys: PushKeys, accountKey: RSA.PublicKey, email: String,
        box: Box
    ) {
        router.add("POST", "/token") { context in
            let form = QueryItems(Substring(String(decoding: context.request.body, as: UTF8.self)))
            let now = Int64(Date().timeIntervalSince1970)
            state.values.withLock {
                $0.tokenRequests += 1
                if let assertion = form["assertion"] { $0.assertions.append(assertion) }
            }
            guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"],
                let jwt = try? CompactJWS(assertion), jwt.isValidRS256Signature(publicKey: accountKey),
                jwt.payload["iss"]?.stringValue == email, jwt.payload["aud"]?.stringValue == box.tokenURL,
                jwt.payload["scope"]?.stringValue?.contains("androidpublisher") == true,
                let issuedAt = jwt.payload["iat"]?.int64Value, let expires = jwt.payload["exp"]?.int64Value,
                expires > now, expires - issuedAt <= 3600
            else {
                return context.respond(
                    .json(400, Array(#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.utf8)))
            }
            let token = "ya29." + UUID().uuidString
            state.values.withLock { $0.issued[token] = now + 3599 }
            context.respond(
                .json(200, JSONValue.object(["access_token": .string(token), "expires_in": 3599, "token_type": "Bearer"]).serializedBytes))
        }
        router.add("GET", "/oauth2/v3/certs") { context in context.respond(.json(200, keys.jwks().serializedBytes)) }

        let base = "/androidpublisher/v3/applications/{package}/purchases"
        @Sendable func authorized(_ context: HTTPRequestContext) -> Bool {
            let now = Int64(Date().timeIntervalSince1970)
            guard let header = context.request.header("authorization"), header.hasPrefix("Bearer "),
                let until = state.values.withLock({ $0.issued[String(header.dropFirst(7))] }), until > now
            else {
                context.respond(error(401, "Request had invalid authentication credentials."))
                return false
            }
            guard context.pathParameters["package"] == packageName else {
                context.respond(error(404, "No application was found for the given package name."))
                return false
            }
            return true
        }
        router.add("GET", base + "/subscriptionsv2/tokens/{token}") { context in
            guard authorized(context) else { return }
            guard let purchase = state.values.withLock({ $0.subscriptions[context.pathParameters["token"] ?? ""] }) else {
                return context.respond(error(404, "The purchase token was not found."))
            }
            context.respond(.json(200, JSONValue.object(purchase).serializedBytes))
        }
        router.add("GET", base + "/productsv2/tokens/{token}") { context in
            guard authorized(context) else { return }
            guard let purchase = state.values.withLock({ $0.products[context.pathParameters["token"] ?? ""] }) else {
                return context.respond(error(404, "The purchase token was not found."))
            }
            context.respond(.json(200, JSONValue.object(purchase).serializedBytes))
        }
        router.add("GET", "/androidpublisher/v3/applications/{package}/orders/{orderId}") { context in
            guard authorized(context) else { return }
            guard let order = state.values.withLock({ $0.orders[context.pathParameters["orderId"] ?? ""] }) else {
                return context.respond(error(404, "Order not found."))
            }
            context.respond(.json(200, JSONValue.object(order).serializedBytes))
        }
        for kind in ["subscriptions", "products"] {
            router.add("POST", base + "/\(kind)/{product}/tokens/{action}") { context in
                guard authorized(context) else { return }
                let action = context.pathParameters["action"] ?? ""
                guard action.hasSuffix(":acknowledge") else { return context.respond(error(404, "Not found")) }
                let token = String(action.dropLast(":acknowledge".count))
                let refused = state.values.withLock { values -> Bool in
                    guard values.refusedAcknowledgements > 0 else { return false }
                    values.refusedAcknowledgements -= 1
                    return true
                }
                if refused { return context.respond(error(503, "The service is currently unavailable.")) }
                let known = state.values.withLock { values -> Bool in
                    if kind == "subscriptions", var purchase = values.subscriptions[token] {
                        purchase["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
                        values.subscriptions[token] = purchase
                    } else if kind == "products", var purchase = values.products[token] {
                        purchase["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
                        values.products[token] = purchase
                    } else {
                        return false
                    }
                    values.acknowledgements.append(token)
                    values.acknowledgementBodies[token] = (try? JSONParser.parse(context.request.body))?.objectValue ?? [:]
                    return true
                }
                context.respond(known ? HTTPResponse(status: 204) : error(404, "The purchase token was not found."))
            }
        }
        router.add("POST", "/androidpublisher/v3/applications/{package}/orders/{action}") { context in
            guard authorized(context) else { return }
            let action = context.pathParameters["action"] ?? ""
            guard action.hasSuffix(":reviewrefund") else { return context.respond(error(404, "Not found")) }
            let order = String(action.dropLast(":reviewrefund".count))
            guard let body = (try? JSONParser.parse(context.request.body))?.objectValue, body["pendingRefundToken"]?.stringValue != nil,
                body["sampleContentProvided"]?.boolValue != nil,
                ["APPROVE", "DECLINE", "NEUTRAL"].contains(body["refundPreference"]?.stringValue ?? "")
            else { return context.respond(error(400, "pendingRefundToken, sampleContentProvided and refundPreference are required.")) }
            // Google records the first answer and ignores later ones (still OK).
            state.values.withLock { values in
                values.reviewCalls.append(order)
                if values.reviews[order] == nil { values.reviews[order] = body }
            }
            context.respond(.json(200, Array("{}".utf8)))
        }
        router.add("GET", base + "/voidedpurchases") { context in
            guard authorized(context) else { return }
            let voided = state.values.withLock { $0.voided }
            context.respond(.json(200, JSONValue.object(["voidedPurchases": .array(voided.map(JSONValue.object))]).serializedBytes))
        }
    }
}
