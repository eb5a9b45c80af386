import Crypto
import Foundation
import Instants
import JSON
import TestSupport
import XCTest

/// Offers in the test store's App Store, checked as StoreKit's purchase is: a promotional offer's
/// v1 signature and JWS (made by Entitle, and by Apple's own library), win-back and introductory
/// eligibility, offer codes; each refusal is a 422 naming StoreKit's error.
final class TestStoreOfferTests: TestStoreTestCase {
    /// A customer whose monthly subscription ended (cancelled, expired): who promotional and
    /// win-back offers are for.
    private func lapsedCustomer() throws {
        let original = try buy(trial: false)
        XCTAssertEqual(act(original, "cancel").0, 200)
        XCTAssertEqual(advance("P1M"), ["EXPIRED/VOLUNTARY"])
    }

    /// Entitle's signature answer for the app's promotional offer.
    private func signedOffer() throws -> JSONValue {
        let (status, answer) = call(
            "POST", "/v1/promotional-offers/sign", key: "client_key_0123456789",
            ["productId": "pro.monthly", "offerId": "welcome", "appAccountToken": .string(token)])
        XCTAssertEqual(status, 200, "\(answer)")
        return answer
    }

    private func v1Offer(_ answer: JSONValue, changing field: String? = nil, to value: JSONValue? = nil) -> JSONObject {
        var offer: JSONObject = [
            "type": "promotional", "id": answer["offerIdentifier"] ?? .null, "discountType": "PAY_AS_YOU_GO", "periods": 3,
            "price": 4990, "keyIdentifier": answer["keyIdentifier"] ?? .null, "nonce": answer["nonce"] ?? .null,
            "timestamp": answer["timestamp"] ?? .null, "signature": answer["signature"] ?? .null,
        ]
        if let field, let value { offer[field] = value }
        return offer
    }

    private func purchase(offer: JSONObject, productId: String = "pro.monthly") -> (Int, JSONValue) {
        call(
            "POST", "/v1/test-store/apple/purchases",
            ["appAccountToken": .string(token), "productId": .string(productId), "offer": .object(offer)])
    }

    private func transaction(_ answer: JSONValue) throws -> JSONObject {
        try CompactJWS(try XCTUnwrap(answer["signedTransaction"]?.stringValue)).payload
    }

    private func assertRefused(
        _ result: (Int, JSONValue), _ storeKitError: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(result.0, 422, "\(result.1)", file: file, line: line)
        XCTAssertEqual(result.1["error"]?["code"], "OFFER_REFUSED", file: file, line: line)
        XCTAssertEqual(result.1["error"]?["storeKitError"]?.stringValue, storeKitError, "\(result.1)", file: file, line: line)
    }

    /// Entitle's v1 signature buys the offer: the resubscription's transaction carries it, its
    /// price holds for its three periods and the regular price follows. The same signature again,
    /// or with any field changed, or a day late, is refused as the App Store refuses it.
    func testAPromotionalOfferSignedByEntitleIsSoldOnceAndOnlyAsSigned() throws {
        try lapsedCustomer()
        let answer = try signedOffer()
        assertRefused(purchase(offer: v1Offer(answer, changing: "nonce", to: .string(UUID().uuidString))), "invalidOfferSignature")
        assertRefused(purchase(offer: v1Offer(answer, changing: "timestamp", to: .int(1))), "invalidOfferSignature")
        assertRefused(purchase(offer: v1Offer(answer, changing: "keyIdentifier", to: "OTHERKEY")), "invalidOfferSignature")
        assertRefused(purchase(offer: v1Offer(answer), productId: "pro.yearly"), "invalidOfferIdentifier")
        assertRefused(purchase(offer: v1Offer(answer, changing: "id", to: "pro_monthly_other")), "invalidOfferIdentifier")
        var unsigned = v1Offer(answer)
        unsigned["signature"] = nil
        assertRefused(purchase(offer: unsigned), "missingOfferParameters")

        let (status, bought) = purchase(offer: v1Offer(answer))
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(notified(bought), ["SUBSCRIBED/RESUBSCRIBE"])
        let signed = try transaction(bought)
        XCTAssertEqual(signed["offerType"], 2)
        XCTAssertEqual(signed["offerIdentifier"], "pro_monthly_welcome")
        XCTAssertEqual(signed["offerDiscountType"], "PAY_AS_YOU_GO")
        XCTAssertEqual(signed["price"], 4990)
        XCTAssertEqual(pro()?["isActive"], true)
        XCTAssertEqual(pro()?["periodType"], "PROMOTIONAL")
        assertRefused(purchase(offer: v1Offer(answer)), "invalidOfferSignature")  // the nonce is spent
        XCTAssertEqual(advance("P3M"), ["DID_RENEW", "DID_RENEW", "DID_RENEW"])
        XCTAssertEqual(pro()?["periodType"], "NORMAL", "the offer priced three periods")

        let late = try signedOffer()
        XCTAssertEqual(advance("P1DT1H"), [])
        XCTAssertEqual(
            call("POST", "/v1/test-store/apple/subscriptions/\(signed["originalTransactionId"]?.stringValue ?? "")/cancel").0, 200)
        XCTAssertEqual(advance("P1M"), ["EXPIRED/VOLUNTARY"])
        assertRefused(purchase(offer: v1Offer(late)), "invalidOfferSignature")
    }

    /// The JWS form (iOS 26): Entitle's is sold; one with another product's claims, or signed by
    /// another key, is refused.
    func testAPromotionalOfferJWSIsCheckedWithItsClaims() throws {
        try lapsedCustomer()
        let jws = try XCTUnwrap(try signedOffer()["jws"]?.stringValue)
        let otherKey = try P256.Signing.PrivateKey()
        let forged = try JWSSigner.sign(
            header: ["alg": "ES256", "kid": "KEY1", "typ": "JWT"],
            payload: try CompactJWS(jws).payload, with: otherKey)
        assertRefused(
            purchase(offer: ["type": "promotional", "id": "pro_monthly_welcome", "jws": .string(forged)]), "invalidOfferSignature")
        var claims = try CompactJWS(jws).payload
        claims["productId"] = "pro.yearly"
        let otherProduct = try JWSSigner.sign(header: ["alg": "ES256", "kid": "KEY1", "typ": "JWT"], payload: claims, with: signingKey)
        assertRefused(
            purchase(offer: ["type": "promotional", "id": "pro_monthly_welcome", "jws": .string(otherProduct)]), "invalidOfferSignature")

        let (status, bought) = purchase(offer: ["type": "promotional", "id": "pro_monthly_welcome", "jws": .string(jws)])
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(try transaction(bought)["offerType"], 2)
    }

    /// A promotional offer is for a customer who has or had the subscription: a new one is not
    /// eligible, even with a good signature.
    func testANewCustomerIsIneligibleForAPromotionalOffer() throws {
        assertRefused(purchase(offer: v1Offer(try signedOffer())), "ineligibleForOffer")
    }

    /// Signatures made by Apple's own library (app-store-server-library's
    /// PromotionalOfferSignatureCreator and PromotionalOfferV2SignatureCreator) with the app's key
    /// are sold; the v1 one with a changed field is refused.
    func testSignaturesMadeByApplesLibraryAreAccepted() throws {
        let python = try requireTestPython("appstoreserverlibrary", for: #function)
        try lapsedCustomer()
        let clock = try XCTUnwrap(call("GET", "/v1/test-store/clock").1["now"]?.stringValue.flatMap { Milliseconds.instant(.string($0)) })
        let script = """
            import sys, json, uuid
            from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
            from appstoreserverlibrary.jws_signature_creator import PromotionalOfferV2SignatureCreator
            key = open(sys.argv[1], 'rb').read()
            nonce = uuid.uuid4()
            v1 = PromotionalOfferSignatureCreator(key, 'KEY1', 'com.example.app').create_signature(
                'pro.monthly', 'pro_monthly_welcome', sys.argv[3], nonce, int(sys.argv[4]))
            v2 = PromotionalOfferV2SignatureCreator(key, 'KEY1', sys.argv[2], 'com.example.app').create_signature(
                'pro.monthly', 'pro_monthly_welcome', None)
            print(json.dumps({'signature': v1, 'nonce': str(nonce), 'jws': v2}))
            """
        let result = try runProcess(
            python, ["-c", script, folder.appendingPathComponent("key.p8").path, issuer, token, String(clock)])
        XCTAssertEqual(result.status, 0, result.stderr)
        let made = try JSONParser.parse(Array(result.stdout.utf8))
        let v1: JSONObject = [
            "type": "promotional", "id": "pro_monthly_welcome", "keyIdentifier": "KEY1", "nonce": made["nonce"] ?? .null,
            "timestamp": .int(clock), "signature": made["signature"] ?? .null,
        ]
        var changed = v1
        changed["timestamp"] = .int(clock + 1)
        assertRefused(purchase(offer: changed), "invalidOfferSignature")
        let (status, bought) = purchase(offer: v1)
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(try transaction(bought)["offerIdentifier"], "pro_monthly_welcome")

        let original = try XCTUnwrap(bought["originalTransactionId"]?.stringValue)
        XCTAssertEqual(act(original, "cancel").0, 200)
        XCTAssertEqual(advance("P1M"), ["EXPIRED/VOLUNTARY"])
        let (jwsStatus, jwsBought) = purchase(offer: ["type": "promotional", "id": "pro_monthly_welcome", "jws": made["jws"] ?? .null])
        XCTAssertEqual(jwsStatus, 200, "\(jwsBought)")
    }

    /// Win-back offers are for customers who left; introductory offers for customers new to the
    /// group; offer codes for anyone. Each transaction carries its offer type.
    func testWinBackIntroductoryAndOfferCodeEligibility() throws {
        let winBack: JSONObject = ["type": "winBack", "id": "pro_monthly_winback", "discountType": "PAY_UP_FRONT", "price": 990]
        assertRefused(purchase(offer: winBack), "ineligibleForOffer")
        assertRefused(purchase(offer: ["type": "winBack"]), "missingOfferParameters")
        try lapsedCustomer()
        assertRefused(purchase(offer: ["type": "introductory", "discountType": "FREE_TRIAL"]), "ineligibleForOffer")
        let (status, bought) = purchase(offer: winBack)
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(notified(bought), ["SUBSCRIBED/RESUBSCRIBE"])
        XCTAssertEqual(try transaction(bought)["offerType"], 4)
        assertRefused(purchase(offer: winBack), "ineligibleForOffer")  // subscribed again

        let other = "0b0c6f4e-52f5-4d35-9a43-3c2a77d7c2a1"
        let (codeStatus, code) = call(
            "POST", "/v1/test-store/apple/purchases",
            [
                "appAccountToken": .string(other), "productId": "pro.yearly",
                "offer": .object(["type": "offerCode", "id": "SPRING26", "discountType": "FREE_TRIAL", "period": "P1M"]),
            ])
        XCTAssertEqual(codeStatus, 200, "\(code)")
        XCTAssertEqual(try transaction(code)["offerType"], 3)
        XCTAssertEqual(try transaction(code)["offerIdentifier"], "SPRING26")
        XCTAssertEqual(
            call("POST", "/v1/test-store/apple/purchases", ["productId": "pro.monthly", "offer": .object(["type": "gift"])]).0, 400)
    }
}
