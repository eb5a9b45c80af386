import AppStore
import Crypto
import Foundation
import JSON
import TestSupport
import XCTest

/// Every JWS Entitle creates verifies with Python's `cryptography`, and carries exactly the header
/// and claims of docs/APP_STORE.md §2.
final class JWSSignatureCreatorTests: XCTestCase {
    private let issuedAt = Date(timeIntervalSince1970: 1_698_148_900.789)
    private let nonce = UUID(uuidString: "3F2B8C2E-8F0E-4D8B-9A57-1F6F0C1C2D3E")!
    private var key: P256.Signing.PrivateKey!
    private var creator: JWSSignatureCreator!

    override func setUpWithError() throws {
        key = try P256.Signing.PrivateKey()
        creator = JWSSignatureCreator(
            privateKey: key, keyId: "ABC123DEFG", issuerId: "11111111-2222-3333-4444-555555555555",
            bundleId: "com.example.app")
    }

    /// Verifies with Python and returns (header, claims) as Python decoded them.
    private func independentlyVerified(_ token: String) throws -> (JSONObject, JSONObject) {
        let output = try XCTUnwrap(
            try IndependentVerifier.pythonVerifiedJWS(token, publicKeyPEM: key.publicKey.pemRepresentation),
            "python cryptography rejected the JWS")
        let decoded = try JSONParser.parse(output)
        return (try XCTUnwrap(decoded["header"]?.objectValue), try XCTUnwrap(decoded["payload"]?.objectValue))
    }

    private func assertBaseClaims(_ header: JSONObject, _ claims: JSONObject, audience: String) {
        XCTAssertEqual(header, ["alg": "ES256", "kid": "ABC123DEFG", "typ": "JWT"])
        XCTAssertEqual(claims["iss"], "11111111-2222-3333-4444-555555555555")
        XCTAssertEqual(claims["iat"], .int(1_698_148_900), "integer seconds")
        XCTAssertEqual(claims["aud"], .string(audience))
        XCTAssertEqual(claims["bid"], "com.example.app")
        XCTAssertEqual(claims["nonce"], "3f2b8c2e-8f0e-4d8b-9a57-1f6f0c1c2d3e", "lower-case UUID")
        XCTAssertNil(claims["exp"])
    }

    func testPromotionalOfferV2() throws {
        let signer = PromotionalOfferV2SignatureCreator(creator)
        let token = try signer.createSignature(
            productId: "com.example.monthly", offerIdentifier: "WINBACK50",
            transactionId: "2000001024993299", nonce: nonce, issuedAt: issuedAt)
        let (header, claims) = try independentlyVerified(token)
        assertBaseClaims(header, claims, audience: "promotional-offer")
        XCTAssertEqual(Set(claims.keys), ["iss", "iat", "aud", "bid", "nonce", "productId", "offerIdentifier", "transactionId"])
        XCTAssertEqual(claims["productId"], "com.example.monthly")
        XCTAssertEqual(claims["offerIdentifier"], "WINBACK50")
        XCTAssertEqual(claims["transactionId"], "2000001024993299")

        let withoutTransaction = try signer.createSignature(
            productId: "p", offerIdentifier: "o", transactionId: nil,
            nonce: nonce, issuedAt: issuedAt)
        let (_, claimsWithout) = try independentlyVerified(withoutTransaction)
        XCTAssertFalse(claimsWithout.keys.contains("transactionId"), "omitted, never null")
    }

    func testIntroductoryOfferEligibility() throws {
        let signer = IntroductoryOfferEligibilitySignatureCreator(creator)
        for allow in [true, false] {
            let token = try signer.createSignature(
                productId: "pro.monthly", allowIntroductoryOffer: allow,
                transactionId: "42", nonce: nonce, issuedAt: issuedAt)
            let (header, claims) = try independentlyVerified(token)
            assertBaseClaims(header, claims, audience: "introductory-offer-eligibility")
            XCTAssertEqual(claims["allowIntroductoryOffer"], .bool(allow))
            XCTAssertEqual(claims["productId"], "pro.monthly")
            XCTAssertEqual(claims["transactionId"], "42")
            XCTAssertEqual(claims.keys.count, 8)
        }
    }

    func testAdvancedCommerceRequestIsStandardBase64OfTheJSON() throws {
        let requestJSON: JSONObject = [
            "operation": "CREATE_SUBSCRIPTION", "version": "1",
            "requestInfo": .object(["requestReferenceId": "ref-1"]),
            "descriptors": .object(["description": "Pro ~?>", "displayName": "Pro"]),
        ]
        let request = try AdvancedCommerceInAppRequest(requestJSON)
        let token = try AdvancedCommerceInAppSignatureCreator(creator).createSignature(
            request: request, nonce: nonce,
            issuedAt: issuedAt)
        let (header, claims) = try independentlyVerified(token)
        assertBaseClaims(header, claims, audience: "advanced-commerce-api")
        let encoded = try XCTUnwrap(claims["request"]?.stringValue)
        XCTAssertEqual(try JSONParser.parse(Base64.decode(encoded)), .object(requestJSON))
        XCTAssertThrowsError(try AdvancedCommerceInAppRequest(["operation": "REFUND", "version": "1"]))
        XCTAssertThrowsError(try AdvancedCommerceInAppRequest(["operation": "CREATE_SUBSCRIPTION", "version": "2"]))
    }

    func testEveryTokenIsFreshlyRandomised() throws {
        let signer = PromotionalOfferV2SignatureCreator(creator)
        let first = try signer.createSignature(productId: "p", offerIdentifier: "o", transactionId: nil)
        let second = try signer.createSignature(productId: "p", offerIdentifier: "o", transactionId: nil)
        XCTAssertNotEqual(try CompactJWS(first).payload["nonce"], try CompactJWS(second).payload["nonce"])
    }
}
