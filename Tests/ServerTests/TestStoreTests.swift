import Application
import Crypto
import Foundation
import HTTP
import Instants
import JSON
import Server
import TestSupport
import XCTest

/// The test store end to end, over HTTP: what it sells and does arrives at Entitle's own
/// notification route as Apple would send it, signed with the test store's chain, and goes
/// through the real verifier, writer, events, webhooks and figures; the clock it moves is the
/// server's.
final class TestStoreTests: TestStoreTestCase {
    /// A trial, its conversion, renewals, a failed renewal in the grace period, billing retry,
    /// recovery and a refund: each notification Apple sends, what Entitle derived, the events and
    /// the webhooks, and the figures back to nothing.
    func testAYearOfOneCustomer() throws {
        let original = try buy()
        XCTAssertEqual(pro()?["periodType"], "TRIAL")
        XCTAssertEqual(advance("P1W"), ["DID_RENEW"], "the trial converts")
        XCTAssertEqual(pro()?["periodType"], "NORMAL")
        XCTAssertEqual(advance("P3M"), ["DID_RENEW", "DID_RENEW", "DID_RENEW"])

        XCTAssertEqual(act(original, "fail-renewal", ["gracePeriod": true]).0, 200)
        XCTAssertEqual(advance("P1M"), ["DID_FAIL_TO_RENEW/GRACE_PERIOD"])
        XCTAssertEqual(pro()?["state"], "GRACE_PERIOD")
        XCTAssertEqual(pro()?["isActive"], true, "access continues in the grace period")
        XCTAssertEqual(advance("P20D"), ["GRACE_PERIOD_EXPIRED"], "the grace period ends")
        XCTAssertEqual(pro()?["state"], "BILLING_RETRY")
        XCTAssertEqual(pro()?["isActive"], false)

        let (recovered, recovery) = act(original, "recover")
        XCTAssertEqual(recovered, 200, "\(recovery)")
        XCTAssertEqual(notified(recovery), ["DID_RENEW/BILLING_RECOVERY"])
        XCTAssertEqual(pro()?["isActive"], true)
        XCTAssertEqual(advance("P2M"), ["DID_RENEW", "DID_RENEW"])

        let (refunded, refund) = act(original, "refund")
        XCTAssertEqual(refunded, 200, "\(refund)")
        XCTAssertEqual(notified(refund), ["REFUND"])
        XCTAssertEqual(pro()?["state"], "REVOKED")
        XCTAssertEqual(advance("P2M"), [], "a refunded subscription renews no more")
        XCTAssertEqual(act(original, "refund").0, 409, "refunded already")

        let events = call("GET", "/v1/events?limit=100", key: "server_key_0123456789").1["events"]?.arrayValue ?? []
        let types = events.compactMap { $0["type"]?.stringValue }
        XCTAssertEqual(types.first, "INITIAL_PURCHASE")
        for expected in ["TRIAL_STARTED", "TRIAL_CONVERTED", "BILLING_ISSUE", "BILLING_RECOVERY", "REFUND"] {
            XCTAssert(types.contains(expected), "\(expected) in \(types)")
        }
        XCTAssertLessThan(
            try XCTUnwrap(types.firstIndex(of: "BILLING_ISSUE")), try XCTUnwrap(types.firstIndex(of: "BILLING_RECOVERY")), "in order")
        // At least once: a delivery in flight while the clock jumps may be made twice (its lease is
        // on the server's clock); receivers deduplicate on webhook-id.
        let ids = Set(events.compactMap { $0["id"]?.stringValue })
        let delivered = receiver.wait(for: "/hooks") { Set($0.compactMap { $0.json["id"]?.stringValue }) == ids }
        XCTAssertEqual(Set(delivered.compactMap { $0.json["id"]?.stringValue }), ids)
        XCTAssertTrue(delivered.allSatisfy(\.signatureValid))
        let summary = call("GET", "/v1/metrics/summary?environment=Sandbox", key: "server_key_0123456789").1["summary"]
        XCTAssertEqual(summary?["activeSubscriptions"], 0, "\(String(describing: summary))")
    }

    /// Auto-renew off and on, then off: the subscription expires at its end, voluntarily; what
    /// cannot be done then is refused with the reason.
    func testACancelledSubscriptionExpiresVoluntarily() throws {
        let original = try buy(trial: false)
        XCTAssertEqual(notified(act(original, "cancel").1), ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"])
        XCTAssertEqual(pro()?["willRenew"], false)
        XCTAssertEqual(act(original, "cancel").0, 409, "off already")
        XCTAssertEqual(notified(act(original, "resume").1), ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED"])
        XCTAssertEqual(pro()?["willRenew"], true)
        XCTAssertEqual(notified(act(original, "cancel").1), ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"])
        XCTAssertEqual(advance("P1M"), ["EXPIRED/VOLUNTARY"])
        XCTAssertEqual(pro()?["isActive"], false)
        let (status, refused) = act(original, "resume")
        XCTAssertEqual(status, 409)
        XCTAssertEqual(refused["error"]?["code"], "TEST_STORE_REFUSED")
        XCTAssertEqual(act(original, "teleport").0, 404)
        XCTAssertEqual(act("0000", "cancel").0, 404)
    }

    /// A refund request: Apple's CONSUMPTION_REQUEST is recorded by Entitle as a refund request
    /// (answered by the policy within Apple's deadline), then Apple's decision arrives.
    func testARefundRequestIsRecordedThenDecided() throws {
        let original = try buy(trial: false)
        let (status, answer) = act(original, "request-refund", ["reason": "LEGAL", "outcome": "REFUND"])
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(notified(answer), ["CONSUMPTION_REQUEST", "REFUND"])
        let requests = call("GET", "/v1/refund-requests").1["refundRequests"]?.arrayValue ?? []
        XCTAssertEqual(requests.count, 1, "\(requests)")
        XCTAssertEqual(requests.first?["reason"], "LEGAL")
        XCTAssertEqual(pro()?["state"], "REVOKED")
        XCTAssertEqual(act(original, "request-refund").0, 409, "refunded already")
        XCTAssertEqual(
            act(try buy(trial: false, notified: "SUBSCRIBED/RESUBSCRIBE"), "request-refund", ["reason": "BORED"]).0, 409,
            "Apple's reasons only")
        XCTAssertEqual(act(original, "request-refund", ["outcome": "MAYBE"]).0, 400)
    }

    /// One-time products: a consumable bought (ONE_TIME_CHARGE) and refunded after a refund
    /// request; a non-consumable refunded outright. Entitle stores each with its revocation.
    func testOneTimePurchasesAreChargedAndRefunded() throws {
        let (status, bought) = call(
            "POST", "/v1/test-store/apple/purchases",
            ["appAccountToken": .string(token), "productId": "gems", "type": "Consumable", "quantity": 3, "price": 2970])
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(notified(bought), ["ONE_TIME_CHARGE"])
        XCTAssertNil(bought["signedRenewalInfo"])
        let transactionId = try XCTUnwrap(bought["transactionId"]?.stringValue)
        let (refunded, refund) = call(
            "POST", "/v1/test-store/apple/transactions/\(transactionId)/request-refund", ["reason": "FULFILLMENT_ISSUE"])
        XCTAssertEqual(refunded, 200, "\(refund)")
        XCTAssertEqual(notified(refund), ["CONSUMPTION_REQUEST", "REFUND"])
        XCTAssertNotNil(refund["revocationDate"])
        let history = call("GET", "/v1/subscribers/\(token)/history").1
        XCTAssert(history.serializedString.contains("ONE_TIME_CHARGE"), "\(history)")
        let (_, unlock) = call(
            "POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "gems", "type": "Non-Consumable"])
        let unlockId = try XCTUnwrap(unlock["transactionId"]?.stringValue)
        XCTAssertEqual(notified(call("POST", "/v1/test-store/apple/transactions/\(unlockId)/refund").1), ["REFUND"])
        XCTAssertEqual(call("POST", "/v1/test-store/apple/transactions/\(unlockId)/refund").0, 409, "refunded already")
        XCTAssertEqual(call("POST", "/v1/test-store/apple/transactions/\(unlockId)/cancel").0, 404)
        XCTAssertEqual(call("POST", "/v1/test-store/apple/purchases", ["productId": "gems", "type": "Gift"]).0, 400)
    }

    /// A non-renewing subscription: ONE_TIME_CHARGE with a transaction Apple gives no expiry;
    /// Entitle grants the catalog's month from the purchase, and a refund ends it.
    func testANonRenewingSubscriptionIsChargedOnce() throws {
        let (status, bought) = call(
            "POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "pass.month"])
        XCTAssertEqual(status, 200, "\(bought)")
        XCTAssertEqual(notified(bought), ["ONE_TIME_CHARGE"])
        let transaction = try CompactJWS(try XCTUnwrap(bought["signedTransaction"]?.stringValue)).payload
        XCTAssertEqual(transaction["type"], "Non-Renewing Subscription")
        XCTAssertNil(transaction["expiresDate"])
        let pass = {
            self.call("GET", "/v1/subscribers/\(self.token)", key: "client_key_0123456789").1["subscriber"]?["entitlements"]?["pass"]
        }
        XCTAssertEqual(pass()?["isActive"], true)
        XCTAssertEqual(advance("P1M1D"), [], "nothing renews")
        XCTAssertEqual(pass()?["isActive"], false, "the catalog's month has passed")
        let id = try XCTUnwrap(bought["transactionId"]?.stringValue)
        XCTAssertEqual(notified(call("POST", "/v1/test-store/apple/transactions/\(id)/refund").1), ["REFUND"])
    }

    /// Billing that never recovers: Apple retries for 60 days, then the subscription expires.
    func testBillingRetryEndsInExpiry() throws {
        let original = try buy(trial: false)
        XCTAssertEqual(act(original, "fail-renewal").0, 200)
        XCTAssertEqual(advance("P1M"), ["DID_FAIL_TO_RENEW"])
        XCTAssertEqual(pro()?["state"], "BILLING_RETRY")
        XCTAssertEqual(advance("P61D"), ["EXPIRED/BILLING_RETRY"])
        XCTAssertEqual(act(original, "recover").0, 409, "too late to recover")
    }

    /// A notification the test store is told not to deliver is signed but never reaches Entitle.
    func testAnUndeliveredNotificationIsNotStored() throws {
        let (status, answer) = call(
            "POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "pro.monthly", "deliver": false])
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(answer["happened"]?.arrayValue?.first?["delivered"], false)
        XCTAssertNil(pro(), "Entitle knows nothing of it")
        // What StoreKit gave the app still reaches Entitle when the app posts it.
        let posted = call(
            "POST", "/v1/transactions", key: "client_key_0123456789",
            ["signedTransaction": answer["signedTransaction"] ?? .null, "appAccountToken": .string(token)])
        XCTAssertEqual(posted.0, 200, "\(posted.1)")
        XCTAssertEqual(pro()?["isActive"], true)
    }

    func testTheClockMovesOnlyForwardAndRunsAtASpeed() throws {
        let before = try parse(call("GET", "/v1/test-store/clock").1["now"])
        XCTAssertEqual(call("POST", "/v1/test-store/clock", ["to": "2000-01-01T00:00:00Z"]).0, 400)
        XCTAssertEqual(call("POST", "/v1/test-store/clock", ["advance": "P1M", "speed": .int(2)]).0, 400, "one at a time")
        XCTAssertEqual(call("POST", "/v1/test-store/clock", ["advance": "one month"]).0, 400)
        let moved = call("POST", "/v1/test-store/clock", ["advance": "P1DT2H"]).1
        XCTAssertGreaterThanOrEqual(try parse(moved["now"]) - before, 26 * 3_600_000)
        let running = call("POST", "/v1/test-store/clock", ["speed": 3600])
        XCTAssertEqual(running.0, 200, "\(running.1)")
        Thread.sleep(forTimeInterval: 1)
        let later = try parse(call("GET", "/v1/test-store/clock").1["now"])
        XCTAssertGreaterThan(later - (try parse(moved["now"])), 3_000_000, "an hour of the clock a second")
        XCTAssertEqual(call("POST", "/v1/test-store/clock", ["speed": 0]).0, 200)
        XCTAssertEqual(call("GET", "/v1/test-store/clock", key: "server_key_0123456789").0, 403, "an admin key only")
    }

    func parse(_ value: JSONValue?) throws -> Int64 {
        try XCTUnwrap(value?.stringValue.flatMap { Milliseconds.instant(.string($0)) }, "\(String(describing: value))")
    }

    /// The test store never signs for a deployment that could be real: Production refuses it,
    /// and a deployment without it answers its routes 404.
    func testADeploymentWithProductionRefusesTheTestStore() throws {
        stop()
        XCTAssertThrowsError(try server(environments: #"["Production", "Sandbox"]"#)) { error in
            XCTAssert("\(error)".contains("lists the Production environment"), "\(error)")
        }
        entitle = try server(environments: #"["Sandbox"]"#, testStore: false)
        entitle.start()
        let (status, answer) = call("GET", "/v1/test-store/clock")
        XCTAssertEqual(status, 404)
        XCTAssertEqual(answer["error"]?["code"], "TEST_STORE_DISABLED")
    }

    /// Nor for one that trusts Apple's roots (Apple's real root, from the conformance folder).
    func testADeploymentTrustingApplesRootsRefusesTheTestStore() throws {
        stop()
        let appleRoot = try conformanceDirectory().appendingPathComponent("roots/AppleRootCA-G3.cer").path
        XCTAssertThrowsError(try server(environments: #"["Sandbox"]"#, roots: "[\"\(appleRoot)\"]")) { error in
            XCTAssert("\(error)".contains("trusts Apple's"), "\(error)")
        }
    }

    /// The scenarios docs/TEST_STORE.md points to (one a money path) pass, posted to the API; one
    /// with an expectation that does not hold is refused naming its step, what was expected and found.
    func testTheExampleScenariosPassAndAFailureNamesItsStep() throws {
        let folder = packageRoot.appendingPathComponent("Keys.example/scenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 6)
        for file in files {
            let scenario = try XCTUnwrap(try JSONParser.parse(Array(Data(contentsOf: folder.appendingPathComponent(file)))).objectValue)
            let (status, answer) = call("POST", "/v1/test-store/scenarios", scenario)
            XCTAssertEqual(status, 200, "\(file): \(answer)")
            XCTAssertEqual(answer["passed"], true, file)
        }
        let failing = try XCTUnwrap(
            try JSONParser.parse(
                Array(
                    #"""
                    {"steps": [{"purchase": {"productId": "pro.monthly"}}, {"advance": "P1M"},
                               {"expect": {"notifications": ["SUBSCRIBED/INITIAL_BUY", "DID_RENEW"], "entitlement": "pro", "isActive": false}}]}
                    """#.utf8)
            ).objectValue)
        let (status, answer) = call("POST", "/v1/test-store/scenarios", failing)
        XCTAssertEqual(status, 422, "\(answer)")
        XCTAssertEqual(answer["error"]?["code"], "SCENARIO_FAILED")
        XCTAssertEqual(answer["error"]?["failedStep"], 2)
        XCTAssertEqual(answer["error"]?["expectation"], "entitlement pro isActive")
        XCTAssertEqual(answer["error"]?["expected"], false)
        XCTAssertEqual(answer["error"]?["actual"], true)
        XCTAssertEqual(call("POST", "/v1/test-store/scenarios", ["steps": .array([.object(["teleport": "P1M"])])]).0, 400)
    }

    /// `entitle test-store run FILE` against the running server: exit 0 when it passes, 1 naming
    /// the step and expectation when it does not.
    func testTheCommandRunsAScenario() throws {
        let passing = folder.appendingPathComponent("passing.json")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Keys.example/scenarios/refund.json"), to: passing)
        let url = "http://127.0.0.1:\(entitle.port)"
        let passed = try runProcess(entitleExecutable.path, ["test-store", "run", passing.path, "--url", url, "--key", admin])
        XCTAssertEqual(passed.status, 0, passed.stdout + passed.stderr)
        XCTAssert(passed.stdout.contains("passed: 6 steps"), passed.stdout)
        let failing = folder.appendingPathComponent("failing.json")
        try writeFile(
            failing,
            #"{"steps": [{"purchase": {"productId": "pro.monthly"}}, {"expect": {"entitlement": "pro", "state": "EXPIRED"}}]}"#)
        let failed = try runProcess(
            entitleExecutable.path, ["test-store", "run", failing.path, "--url", url], environment: ["ENTITLE_ADMIN_KEY": admin])
        XCTAssertEqual(failed.status, 1, failed.stdout + failed.stderr)
        XCTAssert(failed.stderr.contains("failed at step 1: entitlement pro state"), failed.stderr)
        XCTAssert(failed.stderr.contains(#"expected "EXPIRED""#), failed.stderr)
        XCTAssert(failed.stderr.contains(#"found    "ACTIVE""#), failed.stderr)
    }

    /// Apple's own Python library (app-store-server-library) decodes and verifies what the test
    /// store signs, with the test chain's root: the signed data is shaped as Apple's.
    func testApplesLibraryVerifiesWhatTheTestStoreSigns() throws {
        let python = try requireTestPython("appstoreserverlibrary", for: #function)
        let (status, answer) = call(
            "POST", "/v1/test-store/apple/purchases", ["appAccountToken": .string(token), "productId": "pro.monthly", "deliver": false])
        XCTAssertEqual(status, 200)
        let script = """
            import sys, json
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            from appstoreserverlibrary.models.Environment import Environment
            root = open(sys.argv[1], 'rb').read()
            from cryptography import x509
            from cryptography.hazmat.primitives.serialization import Encoding
            der = x509.load_pem_x509_certificate(root).public_bytes(Encoding.DER)
            verifier = SignedDataVerifier([der], False, Environment.SANDBOX, 'com.example.app', 1234)
            transaction = verifier.verify_and_decode_signed_transaction(sys.argv[2])
            renewal = verifier.verify_and_decode_renewal_info(sys.argv[3])
            print(json.dumps({'transactionId': transaction.transactionId, 'productId': transaction.productId,
                              'type': transaction.rawType, 'appAccountToken': transaction.appAccountToken,
                              'autoRenewStatus': renewal.rawAutoRenewStatus, 'environment': renewal.rawEnvironment}))
            """
        let result = try runProcess(
            python,
            [
                "-c", script, folder.appendingPathComponent("chain/root.pem").path, answer["signedTransaction"]?.stringValue ?? "",
                answer["signedRenewalInfo"]?.stringValue ?? "",
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let decoded = try JSONParser.parse(Array(result.stdout.utf8))
        XCTAssertEqual(decoded["transactionId"], answer["transactionId"])
        XCTAssertEqual(decoded["productId"], "pro.monthly")
        XCTAssertEqual(decoded["type"], "Auto-Renewable Subscription")
        XCTAssertEqual(decoded["appAccountToken"]?.stringValue, token)
        XCTAssertEqual(decoded["autoRenewStatus"], 1)
        XCTAssertEqual(decoded["environment"], "Sandbox")
    }
}
