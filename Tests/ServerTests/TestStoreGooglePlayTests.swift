import Application
import Crypto
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// The test store's Google Play, end to end over HTTP: each action publishes the real-time
/// developer notification Google sends, pushed to Entitle's Pub/Sub route with an OIDC token
/// the deployment checks against the test store's JWK set; Entitle then reads the purchase from
/// the Play Developer API the test store serves (with a bearer token from its OAuth endpoint),
/// stores it, acknowledges it, and derives its events and figures.
final class TestStoreGooglePlayTests: TestStoreTestCase {
    override class var appSettings: String { #""refunds": {"customerConsent": true},"# }

    private func googleBuy(
        _ body: JSONObject, notified expected: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws
        -> (token: String, answer: JSONValue)
    {
        var body = body
        if body["obfuscatedAccountId"] == nil { body["obfuscatedAccountId"] = .string(token) }
        let (status, answer) = call("POST", "/v1/test-store/google/purchases", body)
        XCTAssertEqual(status, 200, "\(answer)", file: file, line: line)
        XCTAssertEqual(notified(answer, file: file, line: line), expected, file: file, line: line)
        return (try XCTUnwrap(answer["purchaseToken"]?.stringValue, file: file, line: line), answer)
    }

    private func googleAct(_ purchaseToken: String, _ action: String, _ body: JSONObject? = nil) -> (Int, JSONValue) {
        call("POST", "/v1/test-store/google/purchases/\(purchaseToken)/\(action)", body)
    }

    /// What the test store's Google holds of a purchase, once `condition` holds of it (Entitle
    /// acknowledges and answers reviews on its own threads), or as it is after ten seconds.
    private func held(_ purchaseToken: String, until condition: (JSONValue) -> Bool) -> JSONValue {
        let deadline = Date().addingTimeInterval(10)
        var state = JSONValue.null
        repeat {
            state = call("GET", "/v1/test-store/google/purchases/\(purchaseToken)").1
            if condition(state) { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return state
    }

    /// A free trial, its conversion, a renewal, a failed charge with three days of grace, account
    /// hold, recovery, a cancellation and the expiry: each RTDN Google sends, Entitle's state of
    /// the entitlement after each, its acknowledgement, its events and their webhooks.
    func testASubscriptionThroughTrialGraceHoldRecoveryAndExpiry() throws {
        let trial: JSONObject = [
            "productId": "pro", "basePlanId": "monthly", "offerId": "trial-1w",
            "offerPhase": .object(["type": "freeTrial", "period": "P1W"]),
            "offerTags": .array(["launch"]), "price": 4990, "currency": "EUR",
        ]
        let (purchase, bought) = try googleBuy(trial, notified: ["SUBSCRIPTION_PURCHASED"])
        let line = bought["subscriptionPurchase"]?["lineItems"]?.arrayValue?.first
        XCTAssertEqual(line?["offerPhase"], .object(["freeTrial": .object([:])]))
        XCTAssertEqual(line?["offerDetails"]?["offerTags"], .array(["launch"]))
        XCTAssertEqual(pro()?["isActive"], true, "Entitle read the purchase from the served API")
        XCTAssertEqual(pro()?["store"], "play_store")
        let acknowledged = held(purchase) { $0["subscriptionPurchase"]?["acknowledgementState"] == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" }
        XCTAssertEqual(
            acknowledged["subscriptionPurchase"]?["acknowledgementState"], "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", "Entitle acknowledged it")

        XCTAssertEqual(advance("P1W"), ["SUBSCRIPTION_RENEWED"], "the trial converts")
        XCTAssertEqual(advance("P1M"), ["SUBSCRIPTION_RENEWED"])
        XCTAssertEqual(googleAct(purchase, "fail-renewal", ["gracePeriodDays": 3]).0, 200)
        XCTAssertEqual(advance("P1M"), ["SUBSCRIPTION_IN_GRACE_PERIOD"])
        XCTAssertEqual(pro()?["state"], "GRACE_PERIOD")
        XCTAssertEqual(pro()?["isActive"], true, "access continues in the grace period")
        XCTAssertEqual(advance("P3D"), ["SUBSCRIPTION_ON_HOLD"], "the grace period ends on hold")
        XCTAssertEqual(pro()?["state"], "BILLING_RETRY")
        XCTAssertEqual(pro()?["isActive"], false)
        let (recovered, recovery) = googleAct(purchase, "recover")
        XCTAssertEqual(recovered, 200, "\(recovery)")
        XCTAssertEqual(notified(recovery), ["SUBSCRIPTION_RECOVERED"])
        XCTAssertEqual(pro()?["isActive"], true)
        XCTAssertEqual(
            recovery["subscriptionPurchase"]?["lineItems"]?.arrayValue?.first?["latestSuccessfulOrderId"]?.stringValue?.hasSuffix("..2"),
            true)

        XCTAssertEqual(notified(googleAct(purchase, "cancel").1), ["SUBSCRIPTION_CANCELED"])
        XCTAssertEqual(pro()?["willRenew"], false)
        XCTAssertEqual(pro()?["isActive"], true, "entitled to the period's end")
        XCTAssertEqual(googleAct(purchase, "cancel").0, 409, "canceled already")
        XCTAssertEqual(advance("P1M"), ["SUBSCRIPTION_EXPIRED"])
        XCTAssertEqual(pro()?["isActive"], false)
        XCTAssertEqual(advance("P3M"), [], "an expired subscription renews no more")

        let events = call("GET", "/v1/events?limit=100", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        let types = events.compactMap { $0["type"]?.stringValue }
        XCTAssertEqual(types.first, "INITIAL_PURCHASE", "\(types)")
        XCTAssertEqual(types.filter { $0 == "RENEWAL" }.count, 3, "the conversion, a month, the recovery — not the grace period: \(types)")
        for expected in ["TRIAL_STARTED", "TRIAL_CONVERTED", "BILLING_ISSUE", "BILLING_RECOVERY", "CANCELLATION", "EXPIRATION"] {
            XCTAssert(types.contains(expected), "\(expected) in \(types)")
        }
        let ids = Set(events.compactMap { $0["id"]?.stringValue })
        let delivered = receiver.wait(for: "/hooks") { Set($0.compactMap { $0.json["id"]?.stringValue }) == ids }
        XCTAssertEqual(Set(delivered.compactMap { $0.json["id"]?.stringValue }), ids)
        let summary = call("GET", "/v1/metrics/summary?environment=Sandbox", key: "server_key_0123456789").1["summary"]
        XCTAssertEqual(summary?["activeSubscriptions"], 0, "\(String(describing: summary))")
    }

    /// A pause (scheduled, taken at the period's end, resumed by Google), a restart after a
    /// cancellation, a price step-up consented to and one not, and an upgrade to another base
    /// plan with its replacement mode.
    func testPauseRestartPriceStepUpAndReplacement() throws {
        let (purchase, _) = try googleBuy(["productId": "pro", "basePlanId": "monthly"], notified: ["SUBSCRIPTION_PURCHASED"])
        XCTAssertEqual(notified(googleAct(purchase, "pause", ["duration": "P1M"]).1), ["SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED"])
        XCTAssertEqual(advance("P1M"), ["SUBSCRIPTION_PAUSED"])
        XCTAssertEqual(pro()?["state"], "PAUSED")
        XCTAssertEqual(pro()?["isActive"], false)
        XCTAssertEqual(advance("P1M"), ["SUBSCRIPTION_RENEWED"], "Google resumes it")
        XCTAssertEqual(pro()?["isActive"], true)

        XCTAssertEqual(notified(googleAct(purchase, "cancel").1), ["SUBSCRIPTION_CANCELED"])
        XCTAssertEqual(notified(googleAct(purchase, "restart").1), ["SUBSCRIPTION_RESTARTED"])
        XCTAssertEqual(pro()?["willRenew"], true)

        let (_, announced) = googleAct(purchase, "price-step-up", ["price": 12990])
        XCTAssertEqual(notified(announced), ["SUBSCRIPTION_PRICE_CHANGE_UPDATED"])
        let plan = announced["subscriptionPurchase"]?["lineItems"]?.arrayValue?.first?["autoRenewingPlan"]
        XCTAssertEqual(plan?["priceStepUpConsentDetails"]?["state"], "PENDING")
        XCTAssertEqual(plan?["priceChangeDetails"]?["newPrice"]?["units"], "12")
        XCTAssertEqual(notified(googleAct(purchase, "consent-price-step-up").1), ["SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED"])
        XCTAssertEqual(advance("P2M"), ["SUBSCRIPTION_RENEWED", "SUBSCRIPTION_RENEWED"])
        let after = call("GET", "/v1/test-store/google/purchases/\(purchase)").1["subscriptionPurchase"]
        XCTAssertEqual(
            after?["lineItems"]?.arrayValue?.first?["autoRenewingPlan"]?["recurringPrice"]?["units"], "12",
            "the new price from the deadline on")

        let (replaced, replacement) = googleAct(
            purchase, "replace", ["basePlanId": "yearly", "replacementMode": "CHARGE_FULL_PRICE", "price": 99990])
        XCTAssertEqual(replaced, 200, "\(replacement)")
        XCTAssertEqual(notified(replacement), ["SUBSCRIPTION_PURCHASED"])
        let yearly = try XCTUnwrap(replacement["purchaseToken"]?.stringValue)
        XCTAssertEqual(replacement["replacedBy"]?["linkedPurchaseToken"]?.stringValue, purchase)
        XCTAssertEqual(
            replacement["replacedBy"]?["lineItems"]?.arrayValue?.first?["itemReplacement"]?["replacementMode"], "CHARGE_FULL_PRICE")
        XCTAssertEqual(pro()?["productId"], "pro.yearly", "Entitle follows the linked purchase")
        XCTAssertEqual(googleAct(purchase, "cancel").0, 409, "the replaced purchase has ended")
        XCTAssertEqual(googleAct(yearly, "replace", ["basePlanId": "yearly"]).0, 409, "that is the plan subscribed to")
        // A deferred downgrade: the same purchase names the new plan until the renewal moves to it.
        let (deferred, pending) = googleAct(yearly, "replace", ["basePlanId": "monthly", "replacementMode": "DEFERRED", "price": 9990])
        XCTAssertEqual(deferred, 200, "\(pending)")
        XCTAssertEqual(notified(pending), ["SUBSCRIPTION_ITEMS_CHANGED"])
        XCTAssertEqual(pending["subscriptionPurchase"]?["lineItems"]?.arrayValue?.first?["deferredItemReplacement"]?["productId"], "pro")
        XCTAssertNil(pending["purchaseToken"], "the same purchase")
        let events = call("GET", "/v1/events?limit=100", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        XCTAssertEqual(events.last?["type"], "PRODUCT_CHANGE", "\(String(describing: events.last))")
        XCTAssertEqual(events.last?["takesEffect"], "AT_RENEWAL")
        XCTAssertEqual(pro()?["productId"], "pro.yearly")
        XCTAssertEqual(advance("P1Y"), ["SUBSCRIPTION_RENEWED"])
        XCTAssertEqual(pro()?["productId"], "pro.monthly", "the renewal moved to the deferred plan")
        let moved = call("GET", "/v1/test-store/google/purchases/\(yearly)").1["subscriptionPurchase"]?["lineItems"]?.arrayValue?.first
        XCTAssertEqual(moved?["offerDetails"]?["basePlanId"], "monthly")
        XCTAssertEqual(moved?["itemReplacement"]?["replacementMode"], "DEFERRED")

        // Never consented: the subscription ends at the first renewal after the deadline.
        XCTAssertEqual(notified(googleAct(yearly, "price-step-up", ["price": 12990]).1), ["SUBSCRIPTION_PRICE_CHANGE_UPDATED"])
        XCTAssertEqual(advance("P2M").last, "SUBSCRIPTION_EXPIRED")
        XCTAssertEqual(pro()?["isActive"], false)
    }

    /// One-time products with quantities: bought, partly refunded (a quantity-based void), then
    /// wholly; what Entitle shows, and `purchases.voidedpurchases.list` read by Entitle's sync.
    func testOneTimeProductsAndQuantityBasedRefunds() throws {
        let (gems, bought) = try googleBuy(["productId": "gems", "quantity": 3, "price": 990], notified: ["ONE_TIME_PRODUCT_PURCHASED"])
        XCTAssertEqual(bought["productPurchase"]?["productLineItem"]?.arrayValue?.first?["productOfferDetails"]?["quantity"], 3)
        let (status, partial) = googleAct(gems, "refund", ["quantity": 1])
        XCTAssertEqual(status, 200, "\(partial)")
        XCTAssertEqual(notified(partial), ["VOIDED_PURCHASE"])
        XCTAssertEqual(partial["productPurchase"]?["productLineItem"]?.arrayValue?.first?["productOfferDetails"]?["refundableQuantity"], 2)
        XCTAssertEqual(googleAct(gems, "refund", ["quantity": 3]).0, 409, "only two units are left")
        XCTAssertEqual(notified(googleAct(gems, "refund").1), ["VOIDED_PURCHASE"])
        XCTAssertEqual(googleAct(gems, "refund").0, 409, "refunded already")

        let (_, more) = try googleBuy(["productId": "gems"], notified: ["ONE_TIME_PRODUCT_PURCHASED"])
        let (consumed, consumption) = googleAct(more["purchaseToken"]?.stringValue ?? "", "consume")
        XCTAssertEqual(consumed, 200, "\(consumption)")
        XCTAssertEqual(notified(consumption), [], "the app consumes: Google notifies nothing")
        let details = consumption["productPurchase"]?["productLineItem"]?.arrayValue?.first?["productOfferDetails"]
        XCTAssertEqual(details?["consumptionState"], "CONSUMPTION_STATE_CONSUMED")
        XCTAssertEqual(googleAct(more["purchaseToken"]?.stringValue ?? "", "consume").0, 409, "consumed already")

        let (synced, answer) = call("POST", "/v1/purchases/google/voided", key: "server_key_0123456789", [:])
        XCTAssertEqual(synced, 200, "\(answer)")
        XCTAssertEqual(answer["voidedPurchases"]?["notStored"], 0, "Entitle stored every purchase the list names: \(answer)")
        let history = call("GET", "/v1/subscribers/\(token)/history").1
        XCTAssertTrue("\(history)".contains("VOIDED_PURCHASE"), "\(history)")
    }

    /// A customer asks Google for a refund: Google asks the developer (`PENDING_REFUND_REVIEW`),
    /// Entitle answers through `orders.reviewrefund` (read back from the test store: Google keeps
    /// the first answer), and Google refunds and revokes.
    func testARefundRequestIsReviewedThenRevoked() throws {
        let (purchase, _) = try googleBuy(["productId": "pro", "basePlanId": "monthly"], notified: ["SUBSCRIPTION_PURCHASED"])
        let (status, asked) = googleAct(purchase, "request-refund", ["outcome": "REFUND"])
        XCTAssertEqual(status, 200, "\(asked)")
        XCTAssertEqual(notified(asked), ["PENDING_REFUND_REVIEW", "SUBSCRIPTION_REVOKED", "VOIDED_PURCHASE"])
        XCTAssertEqual(pro()?["state"], "REVOKED")
        let reviewed = held(purchase) { $0["refundReviews"]?.arrayValue?.first?["answer"] != nil }
        let answer = reviewed["refundReviews"]?.arrayValue?.first?["answer"]
        XCTAssertNotNil(answer, "Entitle answered the review: \(reviewed)")
        XCTAssertEqual(answer?["sampleContentProvided"], false)
        XCTAssertNotNil(answer?["refundPreference"]?.stringValue)
        XCTAssertEqual(googleAct(purchase, "request-refund").0, 409, "refunded already")
        let types = (call("GET", "/v1/events?limit=100", key: "server_key_0123456789").1["events"]?.arrayValue ?? [])
            .compactMap { $0["type"]?.stringValue }
        XCTAssert(types.contains("REFUND_REQUESTED"), "\(types)")
        XCTAssert(types.contains("REFUND"), "\(types)")
    }

    /// A purchase Entitle never heard of (its notification not delivered) is not acknowledged,
    /// and Google refunds it after three days, as it does.
    func testAnUnacknowledgedPurchaseIsRefundedAfterThreeDays() throws {
        let (status, bought) = call(
            "POST", "/v1/test-store/google/purchases",
            ["productId": "pro", "basePlanId": "monthly", "obfuscatedAccountId": .string(token), "deliver": false])
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(bought["happened"]?.arrayValue?.first?["delivered"], false)
        XCTAssertEqual(advance("P2D"), [])
        XCTAssertEqual(advance("P1D"), ["SUBSCRIPTION_REVOKED", "VOIDED_PURCHASE"])
        let voided = call("GET", "/v1/test-store/google/purchases/\(bought["purchaseToken"]?.stringValue ?? "")").1
        XCTAssertEqual(voided["subscriptionPurchase"]?["subscriptionState"], "SUBSCRIPTION_STATE_EXPIRED")
        XCTAssertEqual(pro()?["isActive"], false)
    }

    /// The served API answers as Google does to what Entitle's client would never send: no token,
    /// another package, an unknown purchase, a forged assertion; and Google's own client library
    /// (google-auth) accepts the test store's push tokens against its JWK set.
    func testTheServedAPIRefusesAsGoogleDoesAndGoogleAuthTakesThePushTokens() throws {
        let base = "/v1/test-store/google/api/androidpublisher/v3/applications"
        XCTAssertEqual(served("GET", base + "/com.example.app/purchases/subscriptionsv2/tokens/x", authorization: nil).status, 401)
        let forged = try JWSSigner.sign(
            header: ["alg": "RS256", "typ": "JWT"],
            payload: ["iss": "entitle@entitle-test-store.iam.gserviceaccount.com", "aud": "x", "scope": "y", "iat": 0, "exp": 1],
            with: try RSA.PrivateKey(generatingBits: 2048))
        let refused = served(
            "POST", "/v1/test-store/google/token", authorization: nil,
            body: Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(forged)".utf8),
            contentType: "application/x-www-form-urlencoded")
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try JSONParser.parse(refused.body)["error"], "invalid_grant")

        let python = try requireTestPython("google.auth", for: #function)
        let key = try TestStoreGoogleKey(
            privateKey: try RSA.PrivateKey(
                pemRepresentation: try String(
                    contentsOf: folder.appendingPathComponent("chain/google-token.key"), encoding: .utf8)))
        let pushToken = try key.pushToken(
            audience: "https://entitle.example/v1/notifications/google", serviceAccountEmail: Self.pushAccount,
            now: Int64(Date().timeIntervalSince1970))
        let script = """
            import sys, json
            from google.oauth2 import id_token
            from google.auth import crypt, jwt
            from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers
            from cryptography.hazmat.primitives import serialization
            import base64
            def number(text): return int.from_bytes(base64.urlsafe_b64decode(text + '=' * (-len(text) % 4)), 'big')
            keys = json.load(open(sys.argv[1]))['keys']
            certs = {k['kid']: RSAPublicNumbers(number(k['e']), number(k['n'])).public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode() for k in keys}
            claims = jwt.decode(sys.argv[2], certs=certs, audience='https://entitle.example/v1/notifications/google')
            assert claims['iss'] in id_token._GOOGLE_ISSUERS, claims['iss']
            print(json.dumps({'email': claims['email'], 'verified': claims['email_verified']}))
            try:
                jwt.decode(sys.argv[2][:-4] + 'AAAA', certs=certs, audience='https://entitle.example/v1/notifications/google')
                print('forged accepted')
            except ValueError:
                print('forged refused')
            """
        let output = try runProcess(
            python, ["-c", script, folder.appendingPathComponent("chain/google-jwks.json").path, pushToken]
        ).stdout
        let lines = output.split(separator: "\n").map(String.init)
        XCTAssertEqual(try JSONParser.parse(Array(lines[0].utf8)), .object(["email": .string(Self.pushAccount), "verified": true]))
        XCTAssertEqual(lines.last, "forged refused")
    }

    /// A deployment that does not trust the test store's Google key refuses its pushes (401),
    /// and the test store says so.
    func testPushesAreTrustedOnlyWithTheTestStoresKeys() throws {
        stop()
        let other = try TestStoreGoogleKey(privateKey: try RSA.PrivateKey(generatingBits: 2048))
        try writeFile(folder.appendingPathComponent("chain/google-jwks.json"), JSONValue.object(try other.jwks()).serializedString)
        entitle = try server(environments: #"["Sandbox"]"#)
        entitle.start()
        let (status, bought) = call("POST", "/v1/test-store/google/purchases", ["productId": "pro", "basePlanId": "monthly"])
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(bought["happened"]?.arrayValue?.first?["delivered"], false)
        XCTAssertEqual(bought["happened"]?.arrayValue?.first?["status"], 401)
    }

    /// `entitle test-store init` writes Google's files beside Apple's chain: an RSA token key
    /// (OpenSSL reads its modulus as the JWK set's `n`), its JWK set, and a service account only
    /// its owner reads; a deployment naming them passes `check-config`; a second init refuses to
    /// overwrite.
    func testInitWritesGooglesKeysBesideTheChain() throws {
        let chain = folder.appendingPathComponent("made")
        let made = try runProcess(entitleExecutable.path, ["test-store", "init", "--out", chain.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        let modulus = try runProcess(
            "openssl", ["rsa", "-in", chain.appendingPathComponent("google-token.key").path, "-noout", "-modulus"]
        )
        .stdout.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }
        let jwks = try JSONParser.parse(Array(try Data(contentsOf: chain.appendingPathComponent("google-jwks.json"))))
        let n = try Base64.decodeURL(try XCTUnwrap(jwks["keys"]?.arrayValue?.first?["n"]?.stringValue))
        XCTAssertEqual(Hex.encode(n), modulus)
        for name in ["google-token.key", "google-service-account.json", "leaf.key"] {
            let mode = try FileManager.default.attributesOfItem(atPath: chain.appendingPathComponent(name).path)[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600, name)
        }
        XCTAssertNotEqual(
            try runProcess(entitleExecutable.path, ["test-store", "init", "--out", chain.path]).status, 0, "not over a chain")

        let config = configuration(environments: #"["Sandbox"]"#).replacingOccurrences(of: #""chain": "chain""#, with: #""chain": "made""#)
            .replacingOccurrences(of: #""chain/"#, with: #""made/"#)
        try writeFile(folder.appendingPathComponent("made.json"), config)
        let checked = try runProcess(entitleExecutable.path, ["check-config", "--config", folder.appendingPathComponent("made.json").path])
        XCTAssertEqual(checked.status, 0, checked.stdout + checked.stderr)
        XCTAssertTrue(checked.stdout.contains("google play: com.example.app"), checked.stdout)
    }

    /// Google's own client (google-api-python-client, its androidpublisher v3 discovery document,
    /// with google-auth's service-account credentials against the test store's token endpoint)
    /// reads the served API; every member of each answer is one Google's schema names (or one
    /// of the 2025–26 additions Entitle reads), every enumerated value one it lists.
    func testGooglesOwnClientReadsTheServedAPI() throws {
        let python = try requireTestPython("googleapiclient", for: #function)
        let (subscription, _) = try googleBuy(
            ["productId": "pro", "basePlanId": "monthly", "offerId": "trial-1w", "offerPhase": .object(["type": "freeTrial"])],
            notified: ["SUBSCRIPTION_PURCHASED"])
        XCTAssertEqual(advance("P1W"), ["SUBSCRIPTION_RENEWED"])
        XCTAssertEqual(notified(googleAct(subscription, "price-step-up", ["price": 12990]).1), ["SUBSCRIPTION_PRICE_CHANGE_UPDATED"])
        XCTAssertEqual(notified(googleAct(subscription, "consent-price-step-up").1), ["SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED"])
        XCTAssertEqual(googleAct(subscription, "fail-renewal", ["gracePeriodDays": 3]).0, 200)
        XCTAssertEqual(advance("P1M"), ["SUBSCRIPTION_IN_GRACE_PERIOD"])
        let (gems, bought) = try googleBuy(["productId": "gems", "quantity": 2], notified: ["ONE_TIME_PRODUCT_PURCHASED"])
        XCTAssertEqual(notified(googleAct(gems, "refund", ["quantity": 1]).1), ["VOIDED_PURCHASE"])
        let orderId = try XCTUnwrap(bought["orderId"]?.stringValue)
        let base = "http://127.0.0.1:\(entitle.port)"
        let script = #"""
            import sys, json
            from google.oauth2 import service_account
            from googleapiclient.discovery import build
            import googleapiclient
            key_file, base, sub, prod, order_id, discovery = sys.argv[1:7]
            info = json.load(open(key_file))
            info['token_uri'] = base + '/v1/test-store/google/token'
            creds = service_account.Credentials.from_service_account_info(
                info, scopes=['https://www.googleapis.com/auth/androidpublisher'])
            api = build('androidpublisher', 'v3', credentials=creds, static_discovery=True,
                        client_options={'api_endpoint': base + '/v1/test-store/google/api/'})
            pkg = 'com.example.app'
            answers = {
                'SubscriptionPurchaseV2': api.purchases().subscriptionsv2().get(packageName=pkg, token=sub).execute(),
                'ProductPurchaseV2': api.purchases().productsv2().getproductpurchasev2(packageName=pkg, token=prod).execute(),
                'VoidedPurchasesListResponse': api.purchases().voidedpurchases().list(packageName=pkg, type=1).execute(),
                'Order': api.orders().get(packageName=pkg, orderId=order_id).execute(),
            }
            api.purchases().products().acknowledge(packageName=pkg, productId='gems', token=prod, body={}).execute()
            schemas = json.load(open(discovery))['schemas']
            # Named by Google in 2025-26 (docs/GOOGLE_PLAY.md), after this discovery document's revision.
            newer = {'offerPhase', 'itemReplacement', 'inGracePeriodStateContext', 'onHoldStateContext', 'outOfAppPurchaseContext'}
            problems = []
            def check(value, schema, where):
                if '$ref' in schema:
                    return check(value, schemas[schema['$ref']], where)
                if schema.get('type') == 'object' and 'properties' in schema:
                    if not isinstance(value, dict):
                        return problems.append(where + ': not an object')
                    for key, member in value.items():
                        if key in schema['properties']:
                            check(member, schema['properties'][key], where + '.' + key)
                        elif key not in newer:
                            problems.append(where + '.' + key + ': not in the schema')
                elif schema.get('type') == 'array':
                    for index, item in enumerate(value):
                        check(item, schema['items'], '%s[%d]' % (where, index))
                elif 'enum' in schema and value not in schema['enum']:
                    problems.append('%s: %r is not one of the values' % (where, value))
                elif schema.get('type') == 'string' and not isinstance(value, str):
                    problems.append(where + ': not a string')
            for name, answer in answers.items():
                check(answer, schemas[name], name)
            print(json.dumps({'problems': problems, 'state': answers['SubscriptionPurchaseV2']['subscriptionState'],
                              'voided': len(answers['VoidedPurchasesListResponse']['voidedPurchases']),
                              'total': answers['Order']['total']}))
            """#
        let discovery =
            try runProcess(
                python, ["-c", "import googleapiclient, os; print(os.path.dirname(googleapiclient.__file__))"]
            ).stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/discovery_cache/documents/androidpublisher.v3.json"
        let run = try runProcess(
            python,
            [
                "-c", script, folder.appendingPathComponent("chain/google-service-account.json").path, base, subscription, gems, orderId,
                discovery,
            ])
        XCTAssertEqual(run.status, 0, run.stderr)
        let answer = try JSONParser.parse(Array(run.stdout.utf8))
        XCTAssertEqual(answer["problems"], .array([]), "\(answer)")
        XCTAssertEqual(answer["state"], "SUBSCRIPTION_STATE_IN_GRACE_PERIOD")
        XCTAssertEqual(answer["voided"], 1)
        XCTAssertEqual(answer["total"]?["units"], "19", "two units at 9.99: \(answer)")
        let acknowledged = call("GET", "/v1/test-store/google/purchases/\(gems)").1["productPurchase"]?["acknowledgementState"]
        XCTAssertEqual(acknowledged, "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED")
    }

    /// One app's admin key acts only on its own app's sales: another app's purchase, on either
    /// store, is not found.
    func testAnotherAppsAdminKeyFindsNothing() throws {
        stop()
        let other = """
            {"id": "other", "bundleId": "com.example.other", "environments": ["Sandbox"],
             "signingKey": {"keyId": "KEY2", "privateKeyFile": "key.p8"},
             "apiKeys": [{"key": "admin_other_0123456789", "role": "admin"}],
             "verification": {"rootCertificates": [], "allowPrivateRoots": true},
             "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}},
            """
        let config = try String(contentsOf: folder.appendingPathComponent("entitle.json"), encoding: .utf8)
            .replacingOccurrences(of: #""apps": [{"#, with: #""apps": ["# + other + "{")
        try writeFile(folder.appendingPathComponent("entitle.json"), config)
        entitle = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: nil)
        entitle.start()
        let (purchase, _) = try googleBuy(["productId": "pro", "basePlanId": "monthly"], notified: ["SUBSCRIPTION_PURCHASED"])
        let original = try buy(trial: false)
        XCTAssertEqual(call("POST", "/v1/test-store/google/purchases/\(purchase)/cancel", key: "admin_other_0123456789").0, 404)
        XCTAssertEqual(call("GET", "/v1/test-store/google/purchases/\(purchase)", key: "admin_other_0123456789").0, 404)
        XCTAssertEqual(call("POST", "/v1/test-store/apple/subscriptions/\(original)/cancel", key: "admin_other_0123456789").0, 404)
        XCTAssertEqual(googleAct(purchase, "cancel").0, 200, "its own app's admin key acts")
    }
}
