import Crypto
import Entitlements
import GooglePlay
package import Instants
package import JSON

/// Google's answers for the test store's Play Developer API and OAuth token endpoint, as Google
/// sends them: `{"error": {"code", "message", "status"}}`, or OAuth's
/// `{"error", "error_description"}` from the token endpoint.
package struct GoogleAPIRefusal: Error, Sendable {
    package let status: Int
    package let body: JSONObject

    package init(_ status: Int, _ message: String) {
        self.status = status
        let names = [400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"]
        body = [
            "error": .object(["code": .int(Int64(status)), "message": .string(message), "status": .string(names[status] ?? "UNKNOWN")])
        ]
    }

    init(oauth error: String, _ description: String) {
        status = 400
        body = ["error": .string(error), "error_description": .string(description)]
    }
}

/// The Play Developer API the test store serves for Entitle's own Google client
/// (`/v1/test-store/google/api` + Google's paths, docs/TEST_STORE.md), and the OAuth endpoint
/// that issues its bearer tokens. None of these waits for a request of the test store's own:
/// Entitle reads a purchase while the test store's push of it waits for Entitle's answer.
extension TestStoreService {
    /// Access tokens last an hour, on the machine's clock (as Entitle's client keeps them).
    static let accessTokenSeconds: Int64 = 3599
    /// The audiences Google's token endpoint takes in an assertion.
    static let googleTokenAudiences: Set<String> = ["https://oauth2.googleapis.com/token", "https://www.googleapis.com/oauth2/v4/token"]

    /// `POST /token`, RFC 7523: a service account's RS256 assertion (issuer the account, audience
    /// this endpoint, the androidpublisher scope, an hour at most) for a bearer token. The
    /// account must be one an app of the deployment is configured with.
    package func googleToken(form: [String: String], tokenURL: String) throws(GoogleAPIRefusal) -> JSONObject {
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            throw GoogleAPIRefusal(oauth: "unsupported_grant_type", "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        // Whatever is wrong with the assertion's form, Google answers the same.
        guard let assertion = form["assertion"], let jwt = try? CompactJWS(assertion), jwt.algorithm == "RS256" else {
            throw GoogleAPIRefusal(oauth: "invalid_request", "Invalid assertion format.")
        }
        let claims = jwt.payload
        // An account key without a public half (it loaded, so it has one) verifies nothing: refused alike.
        guard let issuer = claims["iss"]?.stringValue,
            let app = apps.values.sorted(by: { $0.id < $1.id }).first(where: { $0.googlePlay?.serviceAccount.clientEmail == issuer }),
            let key = try? app.googlePlay?.serviceAccount.privateKey.publicKey, jwt.isValidRS256Signature(publicKey: key)
        else { throw GoogleAPIRefusal(oauth: "invalid_grant", "Invalid JWT Signature.") }
        let now = Milliseconds.since1970(clock.machineNow) / 1000
        // Google's own libraries name Google's endpoint whatever URL they post to; Entitle names the one it posts to.
        guard let audience = claims["aud"]?.stringValue, audience == tokenURL || Self.googleTokenAudiences.contains(audience) else {
            throw GoogleAPIRefusal(oauth: "invalid_grant", "Invalid JWT: aud is not \(tokenURL) or Google's token endpoint.")
        }
        guard claims["scope"]?.stringValue?.split(separator: " ").contains("https://www.googleapis.com/auth/androidpublisher") == true
        else {
            throw GoogleAPIRefusal(oauth: "invalid_scope", "The androidpublisher scope is required.")
        }
        guard let issuedAt = claims["iat"]?.integer(in: 0...253_402_300_799), let expires = claims["exp"]?.integer(in: 0...253_402_300_799),
            expires > now, issuedAt <= now + 60, expires - issuedAt <= 3600
        else {
            throw GoogleAPIRefusal(
                oauth: "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
        }
        let token = "ya29.teststore." + Base64.encodeURL(SecureRandom.bytes(32))
        play.accessTokens = play.accessTokens.filter { $0.value.until > now }
        play.accessTokens[token] = (app.id, now + Self.accessTokenSeconds)
        return ["access_token": .string(token), "expires_in": .int(Self.accessTokenSeconds), "token_type": "Bearer"]
    }

    /// The app a call's bearer token was issued to, which must sell `packageName`.
    private func googleCaller(_ authorization: String?, packageName: String) throws(GoogleAPIRefusal) -> AppConfiguration {
        let now = Milliseconds.since1970(clock.machineNow) / 1000
        guard let authorization, authorization.hasPrefix("Bearer "), let issued = play.accessTokens[String(authorization.dropFirst(7))],
            issued.until > now, let app = apps[issued.app]
        else { throw GoogleAPIRefusal(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.") }
        guard app.googlePlay?.packageName == packageName else {
            throw GoogleAPIRefusal(403, "The caller does not have permission to access package \(packageName).")
        }
        return app
    }

    /// `purchases.subscriptionsv2.get`.
    package func googleSubscription(_ token: String, packageName: String, authorization: String?) throws(GoogleAPIRefusal) -> JSONObject {
        let app = try googleCaller(authorization, packageName: packageName)
        guard let entry = play.subscriptions[token], entry.app == app.id else {
            throw GoogleAPIRefusal(404, "The purchase token was not found.")
        }
        return PlayStoreSimulation.subscriptionPurchase(entry.subscription)
    }

    /// `purchases.productsv2.getproductpurchasev2`.
    package func googleProduct(_ token: String, packageName: String, authorization: String?) throws(GoogleAPIRefusal) -> JSONObject {
        let app = try googleCaller(authorization, packageName: packageName)
        guard let entry = play.products[token], entry.app == app.id else {
            throw GoogleAPIRefusal(404, "The purchase token was not found.")
        }
        return PlayStoreSimulation.productPurchase(entry.product)
    }

    /// `purchases.subscriptions.acknowledge` and `purchases.products.acknowledge`: the purchase
    /// is kept (no refund after three days). An acknowledged purchase may be acknowledged again.
    package func googleAcknowledge(
        subscription: Bool, productId: String, token: String, body: [UInt8], packageName: String, authorization: String?
    ) throws(GoogleAPIRefusal) {
        let app = try googleCaller(authorization, packageName: packageName)
        if !body.isEmpty {
            guard let object = (try? JSONParser.parse(body))?.objectValue else {  // Google says no more either
                throw GoogleAPIRefusal(400, "Invalid JSON payload received.")
            }
            if let account = object["externalAccountIds"]?["obfuscatedAccountId"]?.stringValue, account.utf8.count > 64 {
                throw GoogleAPIRefusal(400, "obfuscatedAccountId is longer than 64 characters.")
            }
        }
        if subscription, var entry = play.subscriptions[token]?.subscription, play.subscriptions[token]?.app == app.id {
            guard entry.productId == productId else { throw GoogleAPIRefusal(400, "The subscription id does not match the purchase.") }
            entry.acknowledged = true
            keepPlay(entry, app: app.id)
        } else if !subscription, var entry = play.products[token]?.product, play.products[token]?.app == app.id {
            guard entry.productId == productId else { throw GoogleAPIRefusal(400, "The product id does not match the purchase.") }
            guard entry.voidedAt == nil else { throw GoogleAPIRefusal(400, "The purchase is refunded.") }
            entry.acknowledged = true
            keepPlay(entry, app: app.id)
        } else {
            throw GoogleAPIRefusal(404, "The purchase token was not found.")
        }
    }

    /// `purchases.voidedpurchases.list`: `startTime` and `endTime` (epoch ms; 30 days back by
    /// default), `type` (0 one-time products only, 1 subscriptions too), `maxResults` (at most
    /// 1000) and the page `token` of the last answer.
    package func googleVoided(
        query: [String: String], packageName: String, authorization: String?
    ) throws(GoogleAPIRefusal) -> JSONObject {
        let app = try googleCaller(authorization, packageName: packageName)
        func number(_ name: String, _ range: ClosedRange<Int64>) throws(GoogleAPIRefusal) -> Int64? {
            guard let text = query[name] else { return nil }
            guard let value = Int64(text), range.contains(value) else { throw GoogleAPIRefusal(400, "Invalid value for \(name): \(text)") }
            return value
        }
        let now = clock.milliseconds
        let start = try number("startTime", 0...Milliseconds.range.upperBound) ?? now - 30 * 86_400_000
        let end = try number("endTime", 0...Milliseconds.range.upperBound) ?? now
        let type = try number("type", 0...1) ?? 0
        let limit = Int(try number("maxResults", 1...1000) ?? 1000)
        let skip = Int(try number("token", 0...Int64(Int32.max)) ?? 0)
        let matching = play.voided.filter {
            $0.app == app.id && $0.voided.at >= start && $0.voided.at <= end && (type == 1 || $0.voided.productType == 2)
        }
        let page = matching.dropFirst(skip).prefix(limit)
        var answer: JSONObject = [
            "voidedPurchases": .array(page.map { .object(PlayStoreSimulation.voidedPurchase($0.voided, purchaseTime: $0.purchaseTime)) })
        ]
        if skip + page.count < matching.count {
            answer["tokenPagination"] = .object(["nextPageToken": .string(String(skip + page.count))])
        }
        return answer
    }

    /// `orders.get`.
    package func googleOrder(_ orderId: String, packageName: String, authorization: String?) throws(GoogleAPIRefusal) -> JSONObject {
        let app = try googleCaller(authorization, packageName: packageName)
        guard let entry = play.orders[orderId], entry.app == app.id else { throw GoogleAPIRefusal(404, "Order not found.") }
        return PlayStoreSimulation.order(entry.order, refunded: entry.refunded)
    }

    /// `orders.reviewrefund`: the developer's answer to a refund review, checked as Google does;
    /// Google keeps the first answer and takes later ones without changing it.
    package func googleReviewRefund(
        _ orderId: String, body: [UInt8], packageName: String, authorization: String?
    ) throws(GoogleAPIRefusal) {
        let app = try googleCaller(authorization, packageName: packageName)
        // Google says no more of a malformed body either.
        guard let object = (try? JSONParser.parse(body))?.objectValue else { throw GoogleAPIRefusal(400, "Invalid JSON payload received.") }
        guard let reviewToken = object["pendingRefundToken"]?.stringValue, object["sampleContentProvided"]?.boolValue != nil,
            ["APPROVE", "DECLINE", "NEUTRAL"].contains(object["refundPreference"]?.stringValue ?? "")
        else {
            throw GoogleAPIRefusal(
                400, "pendingRefundToken, sampleContentProvided and refundPreference (APPROVE, DECLINE, NEUTRAL) are required.")
        }
        if let percentage = object["consumptionPercentageMilliunits"], percentage.integer(in: 0...100_000) == nil {
            throw GoogleAPIRefusal(400, "consumptionPercentageMilliunits is from 0 to 100000.")
        }
        if let events = object["consumptionUsageEvents"], (events.arrayValue?.count ?? 1001) > 1000 {
            throw GoogleAPIRefusal(400, "consumptionUsageEvents holds at most 1000 events.")
        }
        guard var review = play.refundReviews[reviewToken], review.app == app.id, review.orderId == orderId else {
            throw GoogleAPIRefusal(404, "No pending refund review of order \(orderId) has this pendingRefundToken.")
        }
        review.calls += 1
        if review.answer == nil { review.answer = object }
        play.refundReviews[reviewToken] = review
    }
}
