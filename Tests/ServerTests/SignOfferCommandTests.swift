import Crypto
import Foundation
import JSON
import TestSupport
import XCTest

/// `entitle sign-offer` on `Keys.example`: the signature verifies with `openssl`, the JWS with Python.
final class SignOfferCommandTests: XCTestCase {
    private let config = packageRoot.appendingPathComponent("Keys.example/entitle.json").path
    private var publicKeyPEM: String {
        get throws { try String(contentsOf: packageRoot.appendingPathComponent("Keys.example/EXAMPLEKEY.pub.pem"), encoding: .utf8) }
    }

    func testSignsAnOfferBothWays() throws {
        let result = try runProcess(
            entitleExecutable.path,
            [
                "sign-offer", "--config", config, "--app", "example", "--product", "pro.monthly", "--offer", "welcome20",
                "--app-account-token", "7E3FB20B-4CDB-47CC-936D-99D65F608138", "--transaction-id", "2000000123456789",
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let answer = try JSONParser.parse(result.stdout)
        XCTAssertEqual(answer["offerIdentifier"], "pro_monthly_welcome_20")
        XCTAssertEqual(answer["keyIdentifier"], "EXAMPLEKEY")
        let nonce = try XCTUnwrap(answer["nonce"]?.stringValue)
        XCTAssertEqual(nonce, nonce.lowercased())
        let timestamp = try XCTUnwrap(answer["timestamp"]?.int64Value)
        XCTAssertEqual(Double(timestamp) / 1000, Date().timeIntervalSince1970, accuracy: 60)

        let message = [
            "com.example.app", "EXAMPLEKEY", "pro.monthly", "pro_monthly_welcome_20",
            "7e3fb20b-4cdb-47cc-936d-99d65f608138", nonce, String(timestamp),
        ].joined(separator: "\u{2063}")
        let signature = try Base64.decode(try XCTUnwrap(answer["signature"]?.stringValue))
        XCTAssertTrue(
            try IndependentVerifier.openSSLVerifies(
                publicKeyPEM: publicKeyPEM, derSignature: signature,
                message: Array(message.utf8)))

        let jws = try XCTUnwrap(answer["jws"]?.stringValue)
        let verified = try XCTUnwrap(try IndependentVerifier.pythonVerifiedJWS(jws, publicKeyPEM: publicKeyPEM))
        let claims = try XCTUnwrap(try JSONParser.parse(verified)["payload"])
        XCTAssertEqual(claims["aud"], "promotional-offer")
        XCTAssertEqual(claims["nonce"], .string(nonce))
        XCTAssertEqual(claims["transactionId"], "2000000123456789")
        XCTAssertEqual(claims["iat"], .int(timestamp / 1000))
    }

    func testPinnedNonceAndTimestamp() throws {
        let result = try runProcess(
            entitleExecutable.path,
            [
                "sign-offer", "--config", config, "--app", "example", "--product", "pro.yearly", "--offer", "yearly30",
                "--nonce", "20FBA8A0-2B80-4A7D-A17F-85C1854727F8", "--timestamp", "1698148900000",
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let answer = try JSONParser.parse(result.stdout)
        XCTAssertEqual(answer["nonce"], "20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        XCTAssertEqual(answer["timestamp"], .int(1_698_148_900_000))
        let message =
            "com.example.app\u{2063}EXAMPLEKEY\u{2063}pro.yearly\u{2063}pro_yearly_30_off\u{2063}\u{2063}"
            + "20fba8a0-2b80-4a7d-a17f-85c1854727f8\u{2063}1698148900000"
        XCTAssertTrue(
            try IndependentVerifier.openSSLVerifies(
                publicKeyPEM: publicKeyPEM,
                derSignature: Base64.decode(answer["signature"]!.stringValue!),
                message: Array(message.utf8)))
    }

    func testRefusals() throws {
        let unknown = try runProcess(
            entitleExecutable.path,
            [
                "sign-offer", "--config", config, "--app", "example",
                "--product", "pro.monthly", "--offer", "nope",
            ])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(try JSONParser.parse(unknown.stdout)["error"]?["reason"], "NOT_IN_CATALOG")

        let otherProduct = try runProcess(
            entitleExecutable.path,
            [
                "sign-offer", "--config", config, "--app", "example",
                "--product", "pro.yearly", "--offer", "welcome20",
            ])
        XCTAssertEqual(try JSONParser.parse(otherProduct.stdout)["error"]?["code"], "OFFER_UNAVAILABLE")

        let badToken = try runProcess(
            entitleExecutable.path,
            [
                "sign-offer", "--config", config, "--app", "example",
                "--product", "pro.monthly", "--offer", "welcome20",
                "--app-account-token", "not-a-uuid",
            ])
        XCTAssertEqual(try JSONParser.parse(badToken.stdout)["error"]?["code"], "BAD_REQUEST")

        let usage = try runProcess(entitleExecutable.path, ["sign-offer", "--config", config, "--app", "example"])
        XCTAssertEqual(usage.status, 2)
        XCTAssertTrue(usage.stderr.contains("missing --product"))
    }

    func testKeygenWritesAPrivateP256Key() throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("new.p8").path
        let result = try runProcess(entitleExecutable.path, ["keygen", "--out", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let check = try runProcess("openssl", ["pkey", "-in", path, "-noout", "-text"])
        XCTAssertTrue(check.stdout.contains("prime256v1"), check.stdout)
        XCTAssertFalse(result.stdout.contains("PRIVATE"), "the private key is never printed")
        XCTAssertEqual(try runProcess(entitleExecutable.path, ["keygen", "--out", path]).status, 2, "no overwrite")
    }
}
