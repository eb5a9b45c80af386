import Crypto
import Foundation
import JSON
import TestSupport
import XCTest

/// `POST /v1/app-transactions` over HTTP: the app posts StoreKit's signed `AppTransaction` (here
/// the test store's, as `AppTransaction.shared` gives it), Entitle verifies it and keeps it as the
/// customer's download, and the subscriber answer, the lookup by `appTransactionId` and support's
/// search show it.
final class AppDownloadTests: TestStoreTestCase {
    private let client = "client_key_0123456789"

    private func appTransaction(_ body: JSONObject = [:], token: String? = nil) -> (Int, JSONValue) {
        var request = body
        request["appAccountToken"] = .string(token ?? self.token)
        return call("POST", "/v1/test-store/apple/app-transactions", request)
    }

    private func post(_ signed: String, token: String? = nil) -> (Int, JSONValue) {
        call(
            "POST", "/v1/app-transactions", key: client,
            ["signedAppTransaction": .string(signed), "appAccountToken": .string(token ?? self.token)])
    }

    func testADownloadPostedIsTheCustomersAndShownWithThem() throws {
        let (status, device) = appTransaction(["originalApplicationVersion": "1.2", "applicationVersion": "3.0"])
        XCTAssertEqual(status, 200, "\(device)")
        let signed = try XCTUnwrap(device["signedAppTransaction"]?.stringValue)
        let id = try XCTUnwrap(device["appTransactionId"]?.stringValue)

        XCTAssertEqual(call("GET", "/v1/subscribers/\(token)", key: client).0, 404, "nothing is known of the customer yet")
        let (posted, answer) = post(signed)
        XCTAssertEqual(posted, 200, "\(answer)")
        XCTAssertEqual(answer["appTransaction"]?["appTransactionId"]?.stringValue, id)
        XCTAssertEqual(answer["appTransaction"]?["applicationVersion"], "3.0")
        let shown = answer["subscriber"]?["appTransaction"]
        XCTAssertEqual(shown?["appTransactionId"]?.stringValue, id)
        XCTAssertEqual(shown?["environment"], "Sandbox")
        XCTAssertEqual(shown?["originalApplicationVersion"], "1.2", "the version first downloaded, not the one running")
        XCTAssertEqual(shown?["originalPlatform"], "iOS")
        XCTAssertNotNil(shown?["originalPurchaseDate"]?.stringValue)

        let (read, subscriber) = call("GET", "/v1/subscribers/\(token)", key: client)
        XCTAssertEqual(read, 200, "a customer who only downloaded the app is known")
        XCTAssertEqual(subscriber["subscriber"]?["appTransaction"], shown)
        XCTAssertEqual(subscriber["subscriber"]?["entitlements"], .object([:]))

        // A purchase later keeps the download beside it.
        _ = try buy()
        XCTAssertEqual(call("GET", "/v1/subscribers/\(token)", key: client).1["subscriber"]?["appTransaction"], shown)

        // Support finds the customer by the download's id; the server key's lookup names the tokens.
        let (searched, search) = call("GET", "/v1/subscribers?query=\(id)")
        XCTAssertEqual(searched, 200, "\(search)")
        let match = search["matches"]?.arrayValue?.first
        XCTAssertEqual(match?["matchedBy"], "appTransactionId")
        XCTAssertEqual(match?["appAccountToken"]?.stringValue, token)
        let (found, lookup) = call("GET", "/v1/subscribers/by-app-transaction/\(id)", key: "server_key_0123456789")
        XCTAssertEqual(found, 200, "\(lookup)")
        XCTAssertEqual(lookup["subscriber"]?["appAccountTokens"], .array([.string(token)]))
    }

    func testTheSameDownloadAgainChangesNothingAndAnotherReplacesIt() throws {
        let first = appTransaction()
        let again = appTransaction(["originalApplicationVersion": "9.9"])
        XCTAssertEqual(first.1["appTransactionId"], again.1["appTransactionId"], "the App Store keeps one download per account")
        XCTAssertNotEqual(first.1["signedAppTransaction"], again.1["signedAppTransaction"], "signed anew each time")
        XCTAssertEqual(post(first.1["signedAppTransaction"]?.stringValue ?? "").0, 200)
        let (status, answer) = post(again.1["signedAppTransaction"]?.stringValue ?? "")
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer["subscriber"]?["appTransaction"]?["originalApplicationVersion"], "1.0", "the first download's version")

        // Another Apple Account on the device: its download replaces the first.
        let other = "0d8b3c42-2f7e-4a55-9a70-5a3b5d0e9f11"
        let elsewhere = appTransaction(token: other)
        XCTAssertNotEqual(elsewhere.1["appTransactionId"], first.1["appTransactionId"])
        let (replaced, replacement) = post(elsewhere.1["signedAppTransaction"]?.stringValue ?? "")
        XCTAssertEqual(replaced, 200, "\(replacement)")
        XCTAssertEqual(replacement["subscriber"]?["appTransaction"]?["appTransactionId"], elsewhere.1["appTransactionId"])
    }

    func testADownloadThatDoesNotVerifyOrNamesNobodyIsRefusedAndNothingStored() throws {
        let signed = try XCTUnwrap(appTransaction().1["signedAppTransaction"]?.stringValue)
        let parts = signed.split(separator: ".").map(String.init)
        // The payload changed after signing: the signature no longer covers it.
        var payload = try XCTUnwrap(try JSONParser.parse(try Base64.decodeURL(parts[1])).objectValue)
        payload["originalApplicationVersion"] = "0.1"
        let forged = [parts[0], Base64.encodeURL(JSONValue.object(payload).serializedBytes), parts[2]].joined(separator: ".")
        let (status, answer) = post(forged)
        XCTAssertEqual(status, 422, "\(answer)")
        XCTAssertEqual(answer["error"]?["code"], "VERIFICATION_FAILED")
        XCTAssertEqual(post(signed, token: "not-a-uuid").0, 400)
        XCTAssertEqual(call("POST", "/v1/app-transactions", key: client, ["appAccountToken": .string(token)]).0, 400)
        // A transaction is not an app transaction.
        let bought = call("POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "pro.monthly"])
        let (wrongKind, wrong) = post(bought.1["signedTransaction"]?.stringValue ?? "")
        XCTAssertEqual(wrongKind, 422, "\(wrong)")
        XCTAssertNil(call("GET", "/v1/subscribers/\(token)", key: client).1["subscriber"]?["appTransaction"], "nothing stored")
    }

    /// Apple's own Python library verifies and decodes the test store's app transaction.
    func testApplesLibraryVerifiesTheTestStoresAppTransaction() throws {
        let python = try requireTestPython("appstoreserverlibrary", for: #function)
        let device = appTransaction(["originalApplicationVersion": "2.1"]).1
        let script = """
            import sys, json
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            from appstoreserverlibrary.models.Environment import Environment
            from cryptography import x509
            from cryptography.hazmat.primitives.serialization import Encoding
            der = x509.load_pem_x509_certificate(open(sys.argv[1], 'rb').read()).public_bytes(Encoding.DER)
            verifier = SignedDataVerifier([der], False, Environment.SANDBOX, 'com.example.app', 1234)
            app = verifier.verify_and_decode_app_transaction(sys.argv[2])
            print(json.dumps({'appTransactionId': app.appTransactionId, 'originalApplicationVersion': app.originalApplicationVersion,
                              'receiptType': app.rawReceiptType, 'bundleId': app.bundleId, 'originalPlatform': app.rawOriginalPlatform}))
            """
        let result = try runProcess(
            python, ["-c", script, folder.appendingPathComponent("chain/root.pem").path, device["signedAppTransaction"]?.stringValue ?? ""])
        XCTAssertEqual(result.status, 0, result.stderr)
        let decoded = try JSONParser.parse(Array(result.stdout.utf8))
        XCTAssertEqual(decoded["appTransactionId"], device["appTransactionId"])
        XCTAssertEqual(decoded["originalApplicationVersion"], "2.1")
        XCTAssertEqual(decoded["receiptType"], "Sandbox")
        XCTAssertEqual(decoded["bundleId"], "com.example.app")
        XCTAssertEqual(decoded["originalPlatform"], "iOS")
    }
}
