import AppStore
import AppStoreAPI
import Crypto
import Foundation
import HTTP
import HTTPClient
import JSON
import TestSupport
import XCTest

/// The client against the local stand-in: real HTTP on loopback, real bearer JWT checks.
final class AppStoreServerAPIClientTests: XCTestCase {
    private static let chainResult = Result { try TestChain() }
    private var chain: TestChain { try! Self.chainResult.get() }
    private var key: P256.Signing.PrivateKey!
    private var standIn: AppStoreStandIn!

    override class func tearDown() {
        if let folder = try? chainResult.get().folder { try? FileManager.default.removeItem(at: folder) }
    }

    override func setUpWithError() throws {
        key = try P256.Signing.PrivateKey()
        standIn = try AppStoreStandIn(publicKey: key.publicKey, keyId: "KEY1", bundleId: "com.example.app", chain: chain)
    }

    override func tearDown() { standIn = nil }

    private func client(
        key: P256.Signing.PrivateKey? = nil, environment: String = "Sandbox",
        baseURL: String? = nil
    ) throws -> AppStoreServerAPIClient {
        try AppStoreServerAPIClient(
            environment: environment,
            tokens: BearerTokenFactory(
                privateKey: key ?? self.key, keyId: "KEY1",
                issuerId: "57246542-96fe-1a63-e053-0824d011072a", bundleId: "com.example.app"),
            baseURL: baseURL ?? standIn.baseURL, timeout: 5)
    }

    func testBearerTokenClaims() async throws {
        let token = try CompactJWS(
            BearerTokenFactory(privateKey: key, keyId: "KEY1", issuerId: "iss", bundleId: "com.example.app")
                .token(now: Date(timeIntervalSince1970: 1_000_000)))
        XCTAssertTrue(token.isValidES256Signature(publicKey: try key.publicKey))
        XCTAssertEqual(token.header, ["alg": "ES256", "kid": "KEY1", "typ": "JWT"])
        XCTAssertEqual(token.payload["aud"], "appstoreconnect-v1")
        XCTAssertEqual(token.payload["bid"], "com.example.app")
        XCTAssertEqual(token.payload["iat"], .int(1_000_000 - 60), "backdated for clock skew")
        let lifetime = try XCTUnwrap(token.payload["exp"]?.int64Value) - 1_000_000
        XCTAssertGreaterThan(lifetime, 0)
        XCTAssertLessThanOrEqual(lifetime, 600)
        XCTAssertThrowsError(
            try AppStoreServerAPIClient(
                environment: "Xcode",
                tokens: BearerTokenFactory(privateKey: key, keyId: "K", issuerId: "I", bundleId: "b")))
    }

    func testTransactionInfoVerifies() async throws {
        let info = try await client().getTransactionInfo("2000000123456789")
        let verifier = try SignedDataVerifier(
            .init(
                rootCertificates: [chain.root], bundleId: "com.example.app", appAppleId: nil,
                environment: .sandbox, onlineChecks: false))
        XCTAssertEqual(verifier.verifyTransaction(try XCTUnwrap(info.signedTransactionInfo)).payload?.transactionId, "2000000123456789")
        XCTAssertEqual(standIn.requests.last?.path, "/inApps/v1/transactions/2000000123456789")
    }

    func testHistoryToTheEndAndIncrementally() async throws {
        let (all, revision) = try await client().getAllTransactionHistory("1000", query: [("productType", "AUTO_RENEWABLE")])
        XCTAssertEqual(all.count, 6)
        XCTAssertEqual(revision, "r3")
        let queries = standIn.requests.map { String($0.query ?? "") }
        XCTAssertEqual(
            queries,
            [
                "productType=AUTO_RENEWABLE", "productType=AUTO_RENEWABLE&revision=r1",
                "productType=AUTO_RENEWABLE&revision=r2",
            ], "the same filters on every page")
        let (changed, same) = try await client().getAllTransactionHistory("1000", since: "r3")
        XCTAssertEqual(changed, [], "a later call from the stored revision asks only for changes")
        XCTAssertEqual(same, "r3")
    }

    func testOtherEndpoints() async throws {
        let statuses = try await client().getAllSubscriptionStatuses("1000", status: [1, 4])
        XCTAssertEqual(statuses.lastTransactions.first?.group, "G1")
        XCTAssertEqual(standIn.requests.last?.query, "status=1&status=4", "array parameters repeat the name")
        let first = try await client().getNotificationHistory(startDate: 1, endDate: 2)
        XCTAssertEqual(first.signedPayloads, ["n1"])
        XCTAssertTrue(first.hasMore)
        let second = try await client().getNotificationHistory(startDate: 1, endDate: 2, paginationToken: first.paginationToken)
        XCTAssertEqual(second.signedPayloads, ["n2"])
        XCTAssertFalse(second.hasMore)
        let test = try await client().requestTestNotification()
        let testStatus = try await client().getTestNotificationStatus(try XCTUnwrap(test.testNotificationToken))
        XCTAssertEqual(testStatus.sendAttemptResults, ["SUCCESS"])
        try await client().setAppAccountToken("1000", appAccountToken: "7E3FB20B-4CDB-47CC-936D-99D65F608138")
        XCTAssertEqual(
            try JSONParser.parse(try XCTUnwrap(standIn.requests.last?.body))["appAccountToken"],
            "7e3fb20b-4cdb-47cc-936d-99d65f608138", "UUIDs sent lower case")
        _ = try? await client().getTransactionInfo("a/b c")
        XCTAssertEqual(standIn.requests.last?.target, "/inApps/v1/transactions/a%2Fb%20c", "path segments are escaped")
    }

    func testEveryOtherEndpoint() async throws {
        let api = try client()
        let refunds = try await api.getRefundHistory("1000")
        XCTAssertEqual(refunds.signedTransactions.count, 1)
        XCTAssertEqual(standIn.requests.last?.path, "/inApps/v2/refund/lookup/1000")
        let order = try await api.lookUpOrderId("MK5TTTVWJH")
        XCTAssertEqual(order.status, 0)
        let appTransaction = try await api.getAppTransactionInfo("1000")
        XCTAssertEqual(appTransaction.signedAppTransactionInfo, "app-transaction-jws")
        try await api.finishTransaction("1000")
        XCTAssertEqual(standIn.requests.last?.method, "POST")
        try await api.sendConsumptionInformation(
            "1000", ["customerConsented": true, "deliveryStatus": "DELIVERED", "sampleContentProvided": false])
        XCTAssertEqual(try JSONParser.parse(try XCTUnwrap(standIn.requests.last?.body))["deliveryStatus"], "DELIVERED")
        // The stand-in refuses what Apple refuses: no consent, an unknown status, a percentage out of
        // range, GRANT_PRORATED without a share strictly inside, a share for undelivered content.
        let refused: [JSONObject] = [
            ["customerConsented": false, "deliveryStatus": "DELIVERED", "sampleContentProvided": false],
            ["customerConsented": true, "deliveryStatus": "LOST", "sampleContentProvided": false],
            ["customerConsented": true, "deliveryStatus": "DELIVERED"],
            ["customerConsented": true, "deliveryStatus": "DELIVERED", "sampleContentProvided": false, "consumptionPercentage": 100_001],
            [
                "customerConsented": true, "deliveryStatus": "DELIVERED", "sampleContentProvided": false, "consumptionPercentage": 100_000,
                "refundPreference": "GRANT_PRORATED",
            ],
            [
                "customerConsented": true, "deliveryStatus": "UNDELIVERED_OTHER", "sampleContentProvided": false,
                "consumptionPercentage": 5_000,
            ],
        ]
        for body in refused {
            await assertThrowsAsync({ try await api.sendConsumptionInformation("1000", body) }) { error in
                guard case AppStoreAPIError.api(let status, _, _, _, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(status, 400)
            }
        }
        try await api.sendConsumptionData("1000", ["customerConsented": true, "consumptionStatus": 1, "appAccountToken": ""])
        let extended = try await api.extendSubscriptionRenewalDate("2312412", extendByDays: 7, reasonCode: 1, requestIdentifier: "r-1")
        XCTAssertTrue(extended.success)
        XCTAssertEqual(extended.effectiveDate, 1_698_148_900_000)
        XCTAssertEqual(try JSONParser.parse(try XCTUnwrap(standIn.requests.last?.body))["extendByDays"], .int(7))
        let mass = try await api.extendRenewalDateForAllActiveSubscribers([
            "extendByDays": 3, "extendReasonCode": 3, "requestIdentifier": "m-1", "productId": "pro.monthly",
        ])
        XCTAssertEqual(mass.requestIdentifier, "758883e8-151b-47b7-abd0-60c4d804c2f5")
        let massStatus = try await api.getStatusOfSubscriptionRenewalDateExtensions(productId: "pro.monthly", requestIdentifier: "m-1")
        XCTAssertTrue(massStatus.complete)
    }

    /// The async face of the HTTP client (Dispatch does the waiting, not Swift's cooperative pool).
    func testAsyncHTTPClient() async throws {
        let response = try await HTTPClient().send(HTTPClientRequest(url: standIn.baseURL + "/inApps/v1/transactions/1"))
        XCTAssertEqual(response.status, 401, "no bearer token")
    }

    func testSlowAnswersTimeOut() async throws {
        let impatient = try AppStoreServerAPIClient(
            environment: "Sandbox",
            tokens: BearerTokenFactory(privateKey: key, keyId: "KEY1", issuerId: "i", bundleId: "com.example.app"),
            baseURL: standIn.baseURL, timeout: 1)
        let started = Date()
        await assertThrowsAsync({ try await impatient.getTransactionInfo("slow") }) { error in
            guard case AppStoreAPIError.transport(let failure, _) = error, failure.kind == .timeout else { return XCTFail("\(error)") }
            XCTAssertTrue((error as? AppStoreAPIError)?.isRetryable == true)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5)
    }

    /// A cancelled task aborts its call (libcurl's progress callback): the caller gets a
    /// cancellation, which no retry policy retries, instead of waiting for Apple or the timeout.
    func testCancellingTheTaskAbortsTheCall() async throws {
        let api = try client()
        let before = standIn.requests.count
        let call = Task { try await api.getTransactionInfo("slow") }
        while standIn.requests.count == before { try await Task.sleep(nanoseconds: 10_000_000) }
        call.cancel()
        await assertThrowsAsync({ try await call.value }) { error in
            guard case AppStoreAPIError.transport(let failure, _) = error, failure.kind == .cancelled else { return XCTFail("\(error)") }
            XCTAssertEqual((error as? AppStoreAPIError)?.isRetryable, false)
        }
        let retried = Task { try await RetryPolicy().run { try await api.getTransactionInfo("slow") } }
        while standIn.requests.count < before + 2 { try await Task.sleep(nanoseconds: 10_000_000) }
        retried.cancel()
        await assertThrowsAsync({ try await retried.value })
        XCTAssertEqual(standIn.requests.count, before + 2, "a cancelled call is not retried")
    }

    func testErrorsAreTyped() async throws {
        standIn.script(
            AppStoreStandIn.error(404, 4040010, "Transaction id not found."),
            AppStoreStandIn.error(400, 9990000, "Testing error."),
            AppStoreStandIn.error(429, 4290000, "Rate limit exceeded.", headers: [("Retry-After", "1700000000000")]),
            HTTPResponse(status: 502, body: Array("<html>bad gateway</html>".utf8)))
        func failure(_ call: () async throws -> Void) async -> AppStoreAPIError? {
            do {
                try await call()
                return nil
            } catch { return error as? AppStoreAPIError }
        }
        let notFound = await failure { _ = try await client().getTransactionInfo("1") }
        XCTAssertEqual(notFound?.apiCode, .transactionIdNotFound)
        XCTAssertEqual(notFound?.apiCode?.name, "transactionIdNotFound")
        XCTAssertEqual(notFound?.isRetryable, false)
        XCTAssertTrue(notFound?.description.contains("(Sandbox)") == true, "errors name the environment called")
        let unknown = await failure { _ = try await client().getTransactionInfo("1") }
        XCTAssertEqual(unknown?.apiCode, APIErrorCode(9990000))
        XCTAssertNil(unknown?.apiCode?.name)
        guard
            case .api(429, _, "Rate limit exceeded.", 1_700_000_000_000, _)? = await failure({
                _ = try await client().getTransactionInfo("1")
            })
        else {
            return XCTFail("429 with Retry-After")
        }
        guard case .api(502, nil, nil, nil, _)? = await failure({ _ = try await client().getTransactionInfo("1") }) else {
            return XCTFail("a non-JSON error body still yields the status")
        }
        guard
            case .api(401, _, _, _, _)? = await failure({ _ = try await client(key: try P256.Signing.PrivateKey()).getTransactionInfo("1") }
            )
        else {
            return XCTFail("a token signed with the wrong key is refused with 401")
        }
        standIn.script(HTTPResponse.json(200, Array(#"{"signedTransactions":"not an array"}"#.utf8)))
        guard case .decoding? = await failure({ _ = try await client().getTransactionHistory("1") }) else {
            return XCTFail("an answer that does not decode is a decoding failure, not an API error")
        }
        guard
            case .transport? = await failure({
                _ = try await client(baseURL: "http://127.0.0.1:\(freeLoopbackPort())").getTransactionInfo("1")
            })
        else {
            return XCTFail("nobody listening is a transport failure")
        }
    }

    /// The waits between attempts are the policy's `pause` (a timer in the server): recorded here.
    func testRetriesStopAtTheirBounds() async throws {
        let sleeps = Sleeps()
        var policy = RetryPolicy()
        policy.pause = { sleeps.add($0) }
        standIn.script(AppStoreStandIn.error(500, 5000001, "retry me"), AppStoreStandIn.error(404, 4040002, "retry me too"))
        let api = try client()
        let info = try await policy.run { try await api.getTransactionInfo("1") }
        XCTAssertNotNil(info.signedTransactionInfo)
        XCTAssertEqual(sleeps.count, 2, "two retryable failures, then success")

        func fails(_ policy: RetryPolicy) async -> Bool {
            do {
                _ = try await policy.run { try await api.getTransactionInfo("1") }
                return false
            } catch { return true }
        }
        standIn.script(AppStoreStandIn.error(400, 4000006, "Invalid transaction id."))
        let before = standIn.requests.count
        let refused = await fails(policy)
        XCTAssertTrue(refused)
        XCTAssertEqual(standIn.requests.count - before, 1, "a final 4xx is not retried")

        standIn.script(
            AppStoreStandIn.error(500, 5000000, "x"), AppStoreStandIn.error(500, 5000000, "x"),
            AppStoreStandIn.error(500, 5000000, "x"), AppStoreStandIn.error(500, 5000000, "x"))
        let start = standIn.requests.count
        let exhausted = await fails(policy)
        XCTAssertTrue(exhausted)
        XCTAssertEqual(standIn.requests.count - start, policy.maxAttempts, "bounded in attempts")

        // Retry-After (epoch ms) decides the wait, capped by the policy.
        let soon = Int64((Date().timeIntervalSince1970 + 2) * 1000)
        standIn.script(AppStoreStandIn.error(429, 4290000, "slow down", headers: [("Retry-After", String(soon))]))
        let waits = Sleeps()
        policy.pause = { waits.add($0) }
        _ = try await policy.run { try await api.getTransactionInfo("1") }
        XCTAssertEqual(waits.all.first ?? 0, 2, accuracy: 0.5)
    }

    func testFallbackToSandbox() async throws {
        let sandbox = try AppStoreStandIn(publicKey: key.publicKey, keyId: "KEY1", bundleId: "com.example.app", chain: chain)
        standIn.script(AppStoreStandIn.error(404, 4040010, "Transaction id not found."))
        let fallback = EnvironmentFallback(
            production: try client(environment: "Production"),
            sandbox: try client(environment: "Sandbox", baseURL: sandbox.baseURL))
        let (info, environment) = try await fallback.run { client throws(AppStoreAPIError) in try await client.getTransactionInfo("42") }
        XCTAssertEqual(environment, "Sandbox")
        XCTAssertNotNil(info.signedTransactionInfo)
        standIn.script(AppStoreStandIn.error(400, 4000006, "Invalid transaction id."))
        await assertThrowsAsync({ try await fallback.run { client throws(AppStoreAPIError) in try await client.getTransactionInfo("42") } })
        XCTAssertEqual(standIn.requests.last?.path, "/inApps/v1/transactions/42", "only TransactionIdNotFound falls back")
    }

    /// Apple's own response fixtures decode as its libraries expect (conformance README).
    func testAppleResponseFixtures() async throws {
        let conformance = try conformanceDirectory()
        let models = conformance.appendingPathComponent("apple-library-fixtures/models")
        func serve(_ name: String, status: Int = 200) throws {
            standIn.script(HTTPResponse.json(status, [UInt8](try Data(contentsOf: models.appendingPathComponent(name)))))
        }
        try serve("getAllSubscriptionStatusesResponse.json")
        let fixtureStatuses = try await client().getAllSubscriptionStatuses("1")
        XCTAssertEqual(fixtureStatuses.lastTransactions.map(\.status), [1, 5, 2])
        try serve("transactionHistoryResponse.json")
        let history = try await client().getTransactionHistory("1")
        XCTAssertEqual(history.revision, "revision_output")
        XCTAssertTrue(history.hasMore)
        try serve("transactionHistoryResponseWithMalformedEnvironment.json")
        let malformed = try await client().getTransactionHistory("1")
        XCTAssertEqual(malformed.environment, "LocalTestingxxx", "unknown values kept raw")
        try serve("transactionHistoryResponseWithMalformedAppAppleId.json")
        await assertThrowsAsync({ try await client().getTransactionHistory("1") }) { error in
            guard case AppStoreAPIError.decoding = error else { return XCTFail("\(error)") }
        }
        try serve("getNotificationHistoryResponse.json")
        let notificationPage = try await client().getNotificationHistory(startDate: 1, endDate: 2)
        XCTAssertEqual(notificationPage.paginationToken, "57715481-805a-4283-8499-1c19b5d6b20a")
        try serve("apiTooManyRequestsException.json", status: 429)
        await assertThrowsAsync({ try await client().getTransactionInfo("1") }) { error in
            XCTAssertEqual((error as? AppStoreAPIError)?.apiCode, .rateLimitExceeded)
            XCTAssertEqual((error as? AppStoreAPIError)?.isRetryable, true)
        }
        for (file, status, code) in [
            ("invalidAppAccountTokenUUIDError.json", 400, 4000183), ("familyTransactionNotSupportedError.json", 400, 4000185),
            ("transactionIdNotOriginalTransactionId.json", 400, 4000187), ("apiException.json", 500, 5000000),
        ] {
            try serve(file, status: status)
            await assertThrowsAsync({ try await client().getTransactionInfo("1") }) { error in
                XCTAssertEqual((error as? AppStoreAPIError)?.apiCode, APIErrorCode(Int64(code)), file)
            }
        }
    }
}

private final class Sleeps: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [TimeInterval] = []
    func add(_ value: TimeInterval) {
        lock.lock()
        values.append(value)
        lock.unlock()
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return values.count
    }
    var all: [TimeInterval] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}
