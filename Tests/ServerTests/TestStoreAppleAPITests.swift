import Crypto
import Foundation
import HTTP
import Instants
import JSON
import Server
import TestSupport
import XCTest

/// The App Store Server API the test store serves for Entitle's own client: sync, back-fill and
/// refund reviews run end to end offline against it, Apple's own Python client reads it, and it
/// takes only Apple's bearer token made with the app's key.
final class TestStoreAppleAPITests: TestStoreTestCase {
    /// Refund requests are answered (the customer's consent is in the app's terms).
    override class var appSettings: String { #""refunds": {"customerConsent": true},"# }

    private var apiURL: String { "http://127.0.0.1:\(entitle.port)/v1/test-store/apple/api" }

    /// A purchase whose notification never reached Entitle: sync (history and statuses from the
    /// test store) brings it in.
    func testSyncReadsWhatTheTestStoreSold() throws {
        let (status, bought) = call(
            "POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "pro.monthly", "deliver": false])
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertNil(pro(), "Entitle knows nothing yet")
        let original = try XCTUnwrap(bought["originalTransactionId"]?.stringValue)
        let (synced, answer) = call("POST", "/v1/transactions/\(original)/sync", key: "server_key_0123456789")
        XCTAssertEqual(synced, 200, "\(answer)")
        XCTAssertEqual(pro()?["isActive"], true, "\(answer)")
        XCTAssertEqual(pro()?["productId"], "pro.monthly")
    }

    /// Notifications Apple failed to deliver (`deliver: false`) come back through Get
    /// Notification History: the back-fill stores them, and Entitle derives from them.
    func testBackfillFindsTheNotificationsThatWereNotDelivered() throws {
        let start = try XCTUnwrap(call("GET", "/v1/test-store/clock").1["now"]?.stringValue)
        let (_, bought) = call(
            "POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "pro.monthly", "deliver": false])
        let original = try XCTUnwrap(bought["originalTransactionId"]?.stringValue)
        XCTAssertEqual(act(original, "cancel", ["deliver": false]).1["happened"]?.arrayValue?.first?["delivered"], false)
        XCTAssertNil(pro())
        let (status, answer) = call("POST", "/v1/notifications/apple/backfill", key: "server_key_0123456789", ["startDate": .string(start)])
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer["backfill"]?["stored"], 2, "\(answer)")
        XCTAssertEqual(pro()?["isActive"], true)
        XCTAssertEqual(pro()?["willRenew"], false, "the undelivered cancellation, back-filled")
        let again = call("POST", "/v1/notifications/apple/backfill", key: "server_key_0123456789", ["startDate": .string(start)]).1
        XCTAssertEqual(again["backfill"]?["duplicates"], 2, "\(again)")
    }

    /// A refund request: Entitle answers Apple's CONSUMPTION_REQUEST through Send Consumption
    /// Information, which the test store checks as Apple does and accepts (202): the request is
    /// `SENT`.
    func testARefundRequestIsAnsweredToTheTestStore() throws {
        let original = try buy(trial: false)
        let (status, answer) = act(original, "request-refund", ["outcome": "REFUND_DECLINED"])
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(notified(answer), ["CONSUMPTION_REQUEST", "REFUND_DECLINED"])
        var request: JSONValue?
        let deadline = Date().addingTimeInterval(15)
        repeat {
            request = call("GET", "/v1/refund-requests").1["refundRequests"]?.arrayValue?.first
            if request?["status"] != "PENDING" { break }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        XCTAssertEqual(request?["status"], "SENT", "\(String(describing: request))")
        XCTAssertEqual(request?["answer"]?["customerConsented"], true)
    }

    /// Support finds a customer by the order ID of Apple's receipt e-mail: Entitle asks the
    /// test store (Look Up Order ID). Get Refund History lists only the refunded transaction.
    func testSupportFindsACustomerByOrderIDAndRefundsAreListed() throws {
        let (_, bought) = call(
            "POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "pro.monthly", "deliver": false])
        let orderId = try XCTUnwrap(bought["orderId"]?.stringValue)
        let (status, found) = call("GET", "/v1/subscribers?query=\(orderId)")
        XCTAssertEqual(status, 200, "\(found)")
        XCTAssertEqual(found["matches"]?.arrayValue?.first?["matchedBy"], "orderId", "\(found)")
        XCTAssertEqual(found["matches"]?.arrayValue?.first?["originalTransactionId"], bought["originalTransactionId"])
        XCTAssertEqual(call("GET", "/v1/subscribers?query=MZZZZZZZZZ").1["matches"]?.arrayValue?.count, 0, "no such order")

        let original = try XCTUnwrap(bought["originalTransactionId"]?.stringValue)
        XCTAssertEqual(advance("P1M"), ["DID_RENEW"])
        XCTAssertEqual(notified(act(original, "refund").1), ["REFUND"])
        let bearer = "Bearer \(try appleBearer(key: signingKey, issuedAt: Int64(Date().timeIntervalSince1970)))"
        let refunds = served("GET", "/v1/test-store/apple/api/inApps/v2/refund/lookup/\(original)", authorization: bearer)
        XCTAssertEqual(refunds.status, 200)
        let signed = try JSONParser.parse(refunds.body)["signedTransactions"]?.arrayValue ?? []
        XCTAssertEqual(signed.count, 1, "the refunded renewal only")
        let refunded = try CompactJWS(try XCTUnwrap(signed.first?.stringValue)).payload
        XCTAssertNotNil(refunded["revocationDate"])
        XCTAssertNotEqual(refunded["transactionId"]?.stringValue, original)
    }

    /// Apple's own Python client (app-store-server-library's AppStoreServerAPIClient, its token
    /// made with the app's key) reads the served API and decodes each answer into Apple's models;
    /// the signed transactions in them verify with the test chain's root.
    func testApplesClientReadsTheServedAPI() throws {
        let python = try requireTestPython("appstoreserverlibrary", for: #function)
        let original = try buy(trial: false)
        XCTAssertEqual(advance("P1M"), ["DID_RENEW"])
        let script = """
            import sys, json, time
            from appstoreserverlibrary.api_client import AppStoreServerAPIClient, GetTransactionHistoryVersion, APIException
            from appstoreserverlibrary.models.Environment import Environment
            from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
            from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
            from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
            from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            from cryptography import x509
            from cryptography.hazmat.primitives.serialization import Encoding
            key, url, original, root = open(sys.argv[1], 'rb').read(), sys.argv[2], sys.argv[3], sys.argv[4]
            client = AppStoreServerAPIClient(key, 'KEY1', sys.argv[5], 'com.example.app', Environment.SANDBOX)
            client._base_url = url
            der = x509.load_pem_x509_certificate(open(root, 'rb').read()).public_bytes(Encoding.DER)
            verifier = SignedDataVerifier([der], False, Environment.SANDBOX, 'com.example.app', 1234)
            history = client.get_transaction_history(original, None, TransactionHistoryRequest(), GetTransactionHistoryVersion.V2)
            reasons = [verifier.verify_and_decode_signed_transaction(t).rawTransactionReason for t in history.signedTransactions]
            statuses = client.get_all_subscription_statuses(original)
            last = statuses.data[0].lastTransactions[0]
            info = verifier.verify_and_decode_signed_transaction(client.get_transaction_info(original).signedTransactionInfo)
            now = int(time.time() * 1000)
            notifications = client.get_notification_history(None, NotificationHistoryRequest(startDate=now - 86400000, endDate=now + 10 * 86400000 * 10))
            try:
                client.send_consumption_information(original, ConsumptionRequest(customerConsented=False, deliveryStatus=DeliveryStatus.DELIVERED, sampleContentProvided=False))
                refused = None
            except APIException as e:
                refused = [e.http_status_code, e.raw_api_error]
            try:
                client.get_transaction_info('1')
                missing = None
            except APIException as e:
                missing = [e.http_status_code, e.raw_api_error]
            print(json.dumps({'reasons': reasons, 'revision': history.revision, 'hasMore': history.hasMore,
                              'group': statuses.data[0].subscriptionGroupIdentifier, 'status': last.rawStatus,
                              'renewal': verifier.verify_and_decode_renewal_info(last.signedRenewalInfo).rawAutoRenewStatus,
                              'info': info.originalTransactionId, 'notifications': len(notifications.notificationHistory),
                              'attempt': notifications.notificationHistory[0].sendAttempts[0].rawSendAttemptResult,
                              'refused': refused, 'missing': missing}))
            """
        let result = try runProcess(
            python,
            [
                "-c", script, folder.appendingPathComponent("key.p8").path, apiURL, original,
                folder.appendingPathComponent("chain/root.pem").path, issuer,
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let decoded = try JSONParser.parse(Array(result.stdout.utf8))
        XCTAssertEqual(decoded["reasons"], .array(["PURCHASE", "RENEWAL"]), "\(decoded)")
        XCTAssertEqual(decoded["hasMore"], false)
        XCTAssertEqual(decoded["group"], "G1")
        XCTAssertEqual(decoded["status"], 1)
        XCTAssertEqual(decoded["renewal"], 1)
        XCTAssertEqual(decoded["info"]?.stringValue, original)
        XCTAssertEqual(decoded["notifications"], 2, "SUBSCRIBED and DID_RENEW")
        XCTAssertEqual(decoded["attempt"], "SUCCESS")
        XCTAssertEqual(decoded["refused"], .array([400, 4_000_035]), "consent is required")
        XCTAssertEqual(decoded["missing"], .array([404, 4_040_010]))
    }

    /// Only Apple's bearer token made with the app's key is taken: none, another key's, or an
    /// expired one is 401 without a body, as Apple answers.
    func testTheServedAPITakesOnlyTheAppsToken() throws {
        let original = try buy(trial: false)
        let path = "/v1/test-store/apple/api/inApps/v1/transactions/\(original)"
        XCTAssertEqual(served("GET", path, authorization: nil).status, 401)
        XCTAssertEqual(served("GET", path, authorization: "Bearer \(admin)").status, 401)
        let now = Int64(Date().timeIntervalSince1970)
        let other = try P256.Signing.PrivateKey()
        XCTAssertEqual(served("GET", path, authorization: "Bearer \(try appleBearer(key: other, issuedAt: now))").status, 401)
        let expired = served("GET", path, authorization: "Bearer \(try appleBearer(key: signingKey, issuedAt: now - 7200))")
        XCTAssertEqual(expired.status, 401)
        XCTAssertTrue(expired.body.isEmpty)
        let good = served("GET", path, authorization: "Bearer \(try appleBearer(key: signingKey, issuedAt: now))")
        XCTAssertEqual(good.status, 200)
        XCTAssertNotNil(try JSONParser.parse(good.body)["signedTransactionInfo"]?.stringValue)
    }
}
