import Crypto
import Foundation
import GooglePlay
import HTTP
import HTTPClient
import JSON
import TestSupport
import XCTest

/// The Google Play Developer API client and the Pub/Sub push check against the local Google
/// stand-in: real HTTP, real RS256 assertions and tokens, real bearer checks.
final class GooglePlayClientTests: XCTestCase {
    private var google: GooglePlayStandIn!
    private var api: GooglePlayDeveloperAPI!
    private var tokens: GoogleAccessTokens!
    private let http = HTTPClient()

    override func setUpWithError() throws {
        google = try GooglePlayStandIn()
        let key = try ServiceAccountKey(contentsOf: google.serviceAccountFile.path)
        tokens = GoogleAccessTokens(key: key, tokenURL: google.tokenURL, http: http)
        api = GooglePlayDeveloperAPI(packageName: "com.example.app", baseURL: google.baseURL, tokens: tokens, http: http)
    }

    override func tearDownWithError() throws {
        api = nil
        tokens = nil
        google = nil
    }

    private func subscription(state: String = "SUBSCRIPTION_STATE_ACTIVE", test: Bool = false) -> JSONObject {
        var purchase: JSONObject = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "startTime": "2026-11-01T10:00:00.000Z", "subscriptionState": .string(state),
            "latestOrderId": "GPA.1234-5678-9012-34567", "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
            "externalAccountIdentifiers": .object(["obfuscatedExternalAccountId": "7e3fb20b-4cdb-47cc-936d-99d65f608138"]),
            "lineItems": .array([
                .object([
                    "productId": "pro", "expiryTime": "2026-12-01T10:00:00Z", "autoRenewingPlan": .object(["autoRenewEnabled": true]),
                    "offerDetails": .object(["basePlanId": "monthly", "offerId": "intro", "offerTags": .array(["entitle-intro"])]),
                ])
            ]),
        ]
        if test { purchase["testPurchase"] = .object([:]) }
        return purchase
    }

    func testASubscriptionIsReadWithABearerTokenKeptForTheHour() async throws {
        google.setSubscription("token-1", subscription(test: true))
        let purchase = try await api.subscription(purchaseToken: "token-1")
        XCTAssertEqual(purchase.subscriptionState, "SUBSCRIPTION_STATE_ACTIVE")
        XCTAssertEqual(purchase.lineItems.first?.productId, "pro")
        XCTAssertEqual(purchase.lineItems.first?.basePlanId, "monthly")
        XCTAssertEqual(purchase.lineItems.first?.offerId, "intro")
        XCTAssertEqual(purchase.lineItems.first?.autoRenewEnabled, true)
        XCTAssertEqual(purchase.lineItems.first?.expiryTime, 1_796_119_200_000)
        XCTAssertEqual(purchase.startTime, 1_793_527_200_000)
        XCTAssertTrue(purchase.isTestPurchase)
        XCTAssertFalse(purchase.isAcknowledged)
        XCTAssertEqual(purchase.obfuscatedExternalAccountId, "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        _ = try await api.subscription(purchaseToken: "token-1")
        XCTAssertEqual(google.tokenRequests, 1, "one OAuth exchange for both calls")
    }

    /// The assertion is RS256 over the service account's key: OpenSSL's command line agrees.
    func testTheOAuthAssertionVerifiesWithOpenSSL() async throws {
        google.setSubscription("token-1", subscription())
        _ = try await api.subscription(purchaseToken: "token-1")
        let assertion = try XCTUnwrap(google.assertions.first)
        let jws = try CompactJWS(assertion)
        XCTAssertEqual(jws.header["alg"], "RS256")
        XCTAssertEqual(jws.header["kid"], "sa-key-1")
        XCTAssertEqual(jws.payload["iss"]?.stringValue, google.serviceAccountEmail)
        XCTAssertEqual(jws.payload["aud"]?.stringValue, google.tokenURL)
        XCTAssertEqual(jws.payload["scope"], "https://www.googleapis.com/auth/androidpublisher")
        let key = try ServiceAccountKey(contentsOf: google.serviceAccountFile.path)
        let publicPEM = try key.privateKey.publicKey.pemRepresentation
        XCTAssertTrue(
            try IndependentVerifier.openSSLVerifies(
                publicKeyPEM: publicPEM, derSignature: jws.signature,
                message: Array(assertion.split(separator: ".").prefix(2).joined(separator: ".").utf8)))
    }

    func testAnotherAccountsKeyIsRefusedAtTheTokenEndpoint() async throws {
        let other = try GooglePlayStandIn()
        let key = try ServiceAccountKey(contentsOf: other.serviceAccountFile.path)
        let wrong = GoogleAccessTokens(key: key, tokenURL: google.tokenURL, http: http)
        await assertThrowsAsync({ try await wrong.token() }) { error in
            guard case GooglePlayAPIError.auth(let message) = error else { return XCTFail("\(error)") }
            XCTAssert(message.contains("Invalid JWT Signature"), message)
        }
    }

    func testAcknowledgementsVoidedPurchasesAndOneTimeProducts() async throws {
        google.setSubscription("token-1", subscription())
        try await api.acknowledgeSubscription(subscriptionId: "pro", purchaseToken: "token-1")
        XCTAssertEqual(google.acknowledgements, ["token-1"])
        let subscriptionAcknowledged = try await api.subscription(purchaseToken: "token-1").isAcknowledged
        XCTAssertTrue(subscriptionAcknowledged)
        let offer: JSONObject = [
            "purchaseOptionId": "pack-of-10", "offerId": "launch", "quantity": 3, "refundableQuantity": 2,
            "consumptionState": "CONSUMPTION_STATE_YET_TO_BE_CONSUMED",
        ]
        google.setProduct(
            "token-2",
            [
                "kind": "androidpublisher#productPurchaseV2", "purchaseCompletionTime": "2026-12-01T10:00:00Z",
                "purchaseStateContext": .object(["purchaseState": "PURCHASED"]), "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
                "orderId": "GPA.1", "productLineItem": .array([.object(["productId": "coins", "productOfferDetails": .object(offer)])]),
            ])
        let product = try await api.product(purchaseToken: "token-2")
        XCTAssertEqual(product.purchaseState, "PURCHASED")
        XCTAssertEqual(product.purchaseTime, 1_796_119_200_000)
        XCTAssertFalse(product.isTestPurchase)
        XCTAssertFalse(product.isAcknowledged)
        let item = try XCTUnwrap(product.lineItems.first)
        XCTAssertEqual(product.lineItems.count, 1)
        XCTAssertEqual(item.productId, "coins")
        XCTAssertEqual(item.purchaseOptionId, "pack-of-10")
        XCTAssertEqual(item.offerId, "launch")
        XCTAssertEqual(item.quantity, 3)
        XCTAssertEqual(item.refundableQuantity, 2)
        XCTAssertEqual(item.consumptionState, "CONSUMPTION_STATE_YET_TO_BE_CONSUMED")
        try await api.acknowledgeProduct(productId: "coins", purchaseToken: "token-2")
        let productAcknowledged = try await api.product(purchaseToken: "token-2").isAcknowledged
        XCTAssertTrue(productAcknowledged)
        XCTAssertEqual(google.acknowledgements, ["token-1", "token-2"])
        google.addVoided("token-1", at: 1_796_200_000_000, orderId: "GPA.1234")
        let voided = try await api.voidedPurchases(since: 0)
        XCTAssertEqual(voided.map(\.purchaseToken), ["token-1"])
        XCTAssertEqual(voided.first?.orderId, "GPA.1234")
        XCTAssertEqual(voided.first?.voidedTime, 1_796_200_000_000)
    }

    func testGoogleFailuresAreTyped() async throws {
        await assertThrowsAsync({ try await api.subscription(purchaseToken: "unknown") }) {
            guard case GooglePlayAPIError.notFound = $0 else { return XCTFail("\($0)") }
        }
        google.script(.json(503, Array(#"{"error":{"code":503,"message":"Backend Error"}}"#.utf8)))
        await assertThrowsAsync({ try await api.subscription(purchaseToken: "unknown") }) {
            XCTAssertEqual($0 as? GooglePlayAPIError, .unavailable(status: 503, message: "Backend Error"))
            XCTAssertTrue(($0 as? GooglePlayAPIError)?.isRetryable == true)
        }
        let elsewhere = GooglePlayDeveloperAPI(packageName: "com.example.other", baseURL: google.baseURL, tokens: tokens, http: http)
        await assertThrowsAsync({ try await elsewhere.subscription(purchaseToken: "token-1") }) {
            guard case GooglePlayAPIError.notFound = $0 else { return XCTFail("\($0)") }
        }
    }

    func testAServiceAccountKeyFileIsChecked() throws {
        XCTAssertThrowsError(try ServiceAccountKey(json: Array(#"{"type":"authorized_user"}"#.utf8))) {
            XCTAssertEqual($0 as? ServiceAccountKey.LoadError, .notAServiceAccountKey("\"type\" must be \"service_account\""))
        }
        let ec = try P256.Signing.PrivateKey().pemRepresentation
        let file = JSONValue.object(["type": "service_account", "client_email": "a@b.iam.gserviceaccount.com", "private_key": .string(ec)])
        XCTAssertThrowsError(try ServiceAccountKey(json: file.serializedBytes)) {
            guard case ServiceAccountKey.LoadError.badKey = $0 else { return XCTFail("\($0)") }
            XCTAssertFalse("\($0)".contains("BEGIN"), "the key never appears in the error")
        }
    }

    // MARK: - Pub/Sub push tokens

    private let audience = "https://entitle.example.com/v1/notifications/google"

    private func verifier(jwks: GoogleJWKS.Source? = nil) -> PubSubPushVerifier {
        PubSubPushVerifier(
            jwks: GoogleJWKS(source: jwks ?? .file(google.jwksFile.path), http: http, minimumRefreshInterval: 0), audience: audience,
            serviceAccountEmail: google.serviceAccountEmail)
    }

    private func refusal(_ token: String, _ verifier: PubSubPushVerifier) -> String? {
        do {
            try verifier.verify(authorization: "Bearer " + token)
            return nil
        } catch {
            return error.reason
        }
    }

    func testAPushTokenIsCheckedLikeGoogleSays() throws {
        let check = verifier()
        XCTAssertNil(refusal(try google.pushToken(audience: audience), check))
        XCTAssertEqual(refusal(try google.pushToken(audience: "https://other.example.com/"), check), "the token is for another audience")
        XCTAssertEqual(
            refusal(try google.pushToken(audience: audience, email: "someone@evil.example"), check),
            "the token is not the configured service account's")
        XCTAssertEqual(refusal(try google.pushToken(audience: audience, emailVerified: false), check), "the token's e-mail is not verified")
        XCTAssertEqual(refusal(try google.pushToken(audience: audience, expiresIn: -5), check), "the token has expired")
        XCTAssertEqual(
            refusal(try google.pushToken(audience: audience, issuer: "https://evil.example"), check),
            "the token was not issued by accounts.google.com")
        let forger = try RSA.PrivateKey(pemRepresentation: try GooglePlayStandIn.rsaKey(in: makeTemporaryDirectory(), name: "f").privatePEM)
        XCTAssertEqual(
            refusal(try google.pushToken(audience: audience, forgedWith: forger), check), "the token's signature does not verify")
        XCTAssertThrowsError(try check.verify(authorization: nil))
        XCTAssertThrowsError(try check.verify(authorization: "Basic abc"))
        XCTAssertEqual(refusal("not.a.jwt", check), "the token is not a JWT")
    }

    /// Google rotates its keys: an unknown kid reads the set again (from the URL here), but not
    /// sooner than the minimum interval after the last read.
    func testRotatedKeysAreFetchedByKid() throws {
        let check = verifier(jwks: .url(google.jwksURL))
        XCTAssertNil(refusal(try google.pushToken(audience: audience), check))
        try google.rotateKeys()
        try google.retireOldKeys()
        XCTAssertNil(refusal(try google.pushToken(audience: audience), check), "the new kid is fetched")
        let patient = PubSubPushVerifier(
            jwks: GoogleJWKS(source: .url(google.jwksURL), http: http, minimumRefreshInterval: 3600), audience: audience,
            serviceAccountEmail: google.serviceAccountEmail)
        XCTAssertNil(refusal(try google.pushToken(audience: audience), patient))
        let reads = google.requests.filter { $0 == "GET /oauth2/v3/certs" }.count
        try google.rotateKeys()
        XCTAssertEqual(refusal(try google.pushToken(audience: audience), patient), "the token's key is not one of Google's")
        XCTAssertEqual(google.requests.filter { $0 == "GET /oauth2/v3/certs" }.count, reads, "no read within the interval")
    }
}
