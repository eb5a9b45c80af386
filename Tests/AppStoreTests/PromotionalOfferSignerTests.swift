import AppStore
import Crypto
import Foundation
import TestSupport
import XCTest

final class PromotionalOfferSignerTests: XCTestCase {
    private let nonce = UUID(uuidString: "20FBA8A0-2B80-4A7D-A17F-85C1854727F8")!
    private let expectedHex =
        "62756e646c654964e281a36b65794964e281a370726f647563744964e281a36f666665724964e281a3"
        + "6170706163636f756e74746f6b656ee281a332306662613861302d326238302d346137642d613137662d383563313835343732376638"
        + "e281a331363938313438393030303030"

    /// Apple's test input (conformance README): the exact 111 bytes and their SHA-256.
    func testPayloadIsByteExact() {
        let payload = PromotionalOfferSigner.payload(
            bundleId: "bundleId", keyId: "keyId", productIdentifier: "productId",
            subscriptionOfferID: "offerId", appAccountToken: "appAccountToken",
            nonce: nonce, timestamp: 1_698_148_900_000)
        XCTAssertEqual(payload.count, 111)
        XCTAssertEqual(Hex.encode(payload), expectedHex)
        XCTAssertEqual(SHA256.hexDigest(payload), "8c7c02a364d7196e9c88815aeecb5e130fd00132172defbb54a75ef9807360ee")
    }

    func testEmptyAppAccountTokenLeavesTwoAdjacentSeparators() {
        let payload = PromotionalOfferSigner.payload(
            bundleId: "b", keyId: "k", productIdentifier: "p",
            subscriptionOfferID: "o", appAccountToken: "", nonce: nonce,
            timestamp: 5)
        XCTAssertTrue(String(decoding: payload, as: UTF8.self).contains("o\u{2063}\u{2063}20fba8a0"))
    }

    /// Apple's vector signed with Apple's test key, checked by `openssl dgst -verify`.
    func testAppleVectorVerifiesWithOpenSSL() throws {
        let conformance = try conformanceDirectory()
        let pem = try String(
            contentsOf: conformance.appendingPathComponent("apple-library-fixtures/certs/testSigningKey.p8"),
            encoding: .utf8)
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        let signer = PromotionalOfferSigner(privateKey: key, keyId: "keyId", bundleId: "bundleId")
        let signature = try signer.signature(
            productIdentifier: "productId", subscriptionOfferID: "offerId",
            appAccountToken: "appAccountToken", nonce: nonce,
            timestamp: 1_698_148_900_000)
        XCTAssertEqual(try Base64.decode(signature).first, 0x30, "standard base64 of DER, encoded once")
        let publicPEM = try key.publicKey.pemRepresentation
        XCTAssertTrue(publicPEM.contains("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAErPJyxEu2/oKCrJaaTVTrq39DKJ2X"))
        XCTAssertTrue(
            try IndependentVerifier.openSSLVerifies(
                publicKeyPEM: publicPEM, derSignature: Base64.decode(signature),
                message: Hex.decode(expectedHex)!))

        // Apple's published sample signature verifies with our verifier.
        let sample = try ECDSASignature(
            derRepresentation: Base64.decode(
                "MEUCIBs/ckN8wElH7P1T+KzEgxmym3+6KGE7tdmkIkPeP+2nAiEA9o4xb0jxqpfX4sF8TGqzZfLGUBFQ7BlZtMsO/6QAYZE="))
        XCTAssertTrue(try key.publicKey.isValidSignature(sample, for: Hex.decode(expectedHex)!))
        XCTAssertFalse(try key.publicKey.isValidSignature(sample, for: Array("bundleid".utf8)))
    }

    func testUpperCaseInputsAreLowerCasedBeforeSigning() throws {
        let key = try P256.Signing.PrivateKey()
        let signer = PromotionalOfferSigner(privateKey: key, keyId: "KEY", bundleId: "com.Example")
        let signature = try signer.signature(
            productIdentifier: "Pro", subscriptionOfferID: "Offer",
            appAccountToken: "7E3FB20B-4CDB-47CC-936D-99D65F608138",
            nonce: nonce, timestamp: 42)
        let expected =
            "com.Example\u{2063}KEY\u{2063}Pro\u{2063}Offer\u{2063}7e3fb20b-4cdb-47cc-936d-99d65f608138"
            + "\u{2063}20fba8a0-2b80-4a7d-a17f-85c1854727f8\u{2063}42"
        XCTAssertTrue(
            try IndependentVerifier.openSSLVerifies(
                publicKeyPEM: key.publicKey.pemRepresentation,
                derSignature: Base64.decode(signature),
                message: Array(expected.utf8)))
    }
}
