import Application
import Crypto
import Entitlements
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// The offer endpoints called in-process through the real router, with every error case.
final class OfferEndpointTests: XCTestCase {
    private static let client = "Bearer client_example_not_secret_0001"
    private static let server = "Bearer server_example_not_secret_0001"
    private var entitle: EntitleServer!

    override func setUpWithError() throws {
        var configuration = try ConfigurationLoader.load(
            path: packageRoot.appendingPathComponent("Keys.example/entitle.json").path,
            environment: [:])
        configuration.server.port = 0
        configuration.server.eventLoops = 1
        entitle = try EntitleServer(configuration: configuration, logOutput: nil, store: try makeTemporaryStore())
    }

    private var publicKeyPEM: String {
        get throws { try String(contentsOf: packageRoot.appendingPathComponent("Keys.example/EXAMPLEKEY.pub.pem"), encoding: .utf8) }
    }

    private func post(
        _ path: String, _ body: String, authorization: String? = client,
        contentType: String? = "application/json"
    ) -> (status: Int, json: JSONValue) {
        var headers: [(name: String, value: String)] = []
        if let authorization { headers.append(("authorization", authorization)) }
        if let contentType { headers.append(("content-type", contentType)) }
        let response = entitle.handle(HTTPRequest(method: "POST", target: path, headers: headers, body: Array(body.utf8)))
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    private func assertError(
        _ path: String, _ body: String, authorization: String? = client, contentType: String? = "application/json",
        status: Int, code: String, reason: String? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        let (actualStatus, json) = post(path, body, authorization: authorization, contentType: contentType)
        XCTAssertEqual(actualStatus, status, "\(json)", file: file, line: line)
        XCTAssertEqual(json["error"]?["code"]?.stringValue, code, file: file, line: line)
        XCTAssertNotNil(json["error"]?["message"]?.stringValue, file: file, line: line)
        if let reason { XCTAssertEqual(json["error"]?["reason"]?.stringValue, reason, file: file, line: line) }
    }

    func testSignAnswerVerifiesIndependently() throws {
        let (status, answer) = post(
            "/v1/promotional-offers/sign",
            #"{"productId":"pro.monthly","offerId":"welcome20","appAccountToken":"7E3FB20B-4CDB-47CC-936D-99D65F608138","transactionId":"2000000123456789"}"#
        )
        XCTAssertEqual(status, 200)
        XCTAssertEqual(answer["offerIdentifier"], "pro_monthly_welcome_20")
        XCTAssertEqual(answer["keyIdentifier"], "EXAMPLEKEY")
        let nonce = try XCTUnwrap(answer["nonce"]?.stringValue)
        let timestamp = try XCTUnwrap(answer["timestamp"]?.int64Value)
        let message = [
            "com.example.app", "EXAMPLEKEY", "pro.monthly", "pro_monthly_welcome_20",
            "7e3fb20b-4cdb-47cc-936d-99d65f608138", nonce, String(timestamp),
        ].joined(separator: "\u{2063}")
        XCTAssertTrue(
            try IndependentVerifier.openSSLVerifies(
                publicKeyPEM: publicKeyPEM,
                derSignature: Base64.decode(answer["signature"]!.stringValue!),
                message: Array(message.utf8)))
        let verified = try XCTUnwrap(try IndependentVerifier.pythonVerifiedJWS(answer["jws"]!.stringValue!, publicKeyPEM: publicKeyPEM))
        let claims = try JSONParser.parse(verified)["payload"]
        XCTAssertEqual(claims?["offerIdentifier"], "pro_monthly_welcome_20")
        XCTAssertEqual(claims?["transactionId"], "2000000123456789")
        XCTAssertEqual(claims?["nonce"], .string(nonce))
        XCTAssertEqual(entitle.metrics.total("entitle_offers_signed_total", matching: ["kind": "v1"]), 1)
    }

    func testSignErrors() {
        let path = "/v1/promotional-offers/sign"
        assertError(path, #"{"productId":"pro.monthly""#, status: 400, code: "BAD_REQUEST")  // malformed JSON
        assertError(path, #"[1,2]"#, status: 400, code: "BAD_REQUEST")  // not an object
        assertError(path, "", status: 400, code: "BAD_REQUEST")  // empty body
        assertError(path, #"{"productId":42,"offerId":"welcome20"}"#, status: 400, code: "BAD_REQUEST")  // wrong type
        assertError(path, #"{"productId":"pro.monthly","offerId":"welcome20","appAccountToken":7}"#, status: 400, code: "BAD_REQUEST")
        assertError(path, #"{"offerId":"welcome20"}"#, status: 400, code: "BAD_REQUEST")  // missing field
        assertError(
            path, #"{"productId":"pro.monthly","offerId":"welcome20","appAccountToken":"not-a-uuid"}"#,
            status: 400, code: "BAD_REQUEST")
        assertError(
            path, #"{"productId":"pro.monthly","offerId":"nope"}"#, status: 422, code: "OFFER_UNAVAILABLE",
            reason: "NOT_IN_CATALOG")
        assertError(
            path, #"{"productId":"pro.yearly","offerId":"welcome20"}"#, status: 422, code: "OFFER_UNAVAILABLE",
            reason: "NOT_IN_CATALOG")
        assertError(
            path, #"{"productId":"pro.monthly","offerId":"winback50"}"#, status: 422, code: "OFFER_UNAVAILABLE",
            reason: "NOT_ELIGIBLE")
        assertError(
            path, #"{"productId":"pro.monthly","offerId":"welcome20"}"#, contentType: "text/plain",
            status: 415, code: "UNSUPPORTED_MEDIA_TYPE")
    }

    func testAuthentication() {
        let path = "/v1/promotional-offers/sign"
        let body = #"{"productId":"pro.monthly","offerId":"welcome20"}"#
        assertError(path, body, authorization: nil, status: 401, code: "UNAUTHORIZED")
        assertError(path, body, authorization: "Bearer client_example_not_secret_0002", status: 401, code: "UNAUTHORIZED")
        assertError(path, body, authorization: "Basic abc", status: 401, code: "UNAUTHORIZED")
        XCTAssertEqual(post(path, body, authorization: Self.server).status, 200, "server keys may sign too")
    }

    func testIntroductoryOfferEligibility() throws {
        let path = "/v1/introductory-offers/eligibility"
        assertError(
            path, #"{"productId":"pro.monthly","transactionId":"2000000123456789"}"#, status: 403, code: "TRANSACTION_NOT_PROVEN")
        let (status, answer) = post(path, #"{"productId":"pro.monthly","transactionId":"2000000123456789"}"#, authorization: Self.server)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(answer["subscriptionGroupIdentifier"], "21345678")
        XCTAssertEqual(answer["eligible"], .bool(true))
        XCTAssertEqual(answer["reason"], "NEVER_SUBSCRIBED_TO_GROUP")
        let verified = try XCTUnwrap(try IndependentVerifier.pythonVerifiedJWS(answer["jws"]!.stringValue!, publicKeyPEM: publicKeyPEM))
        let claims = try JSONParser.parse(verified)["payload"]
        XCTAssertEqual(claims?["aud"], "introductory-offer-eligibility")
        XCTAssertEqual(claims?["allowIntroductoryOffer"], .bool(true))

        let (_, withoutTransaction) = post(path, #"{"productId":"pro.monthly"}"#)
        XCTAssertNil(withoutTransaction["jws"], "Apple requires a transactionId in the JWS")

        // Eligibility comes from stored history only; nobody may assert it.
        assertError(path, #"{"productId":"pro.monthly","eligible":false}"#, status: 400, code: "BAD_REQUEST")
        assertError(path, #"{"productId":"pro.monthly","eligible":true}"#, authorization: Self.server, status: 400, code: "BAD_REQUEST")
        assertError(path, #"{"productId":"coins.100"}"#, status: 422, code: "NOT_A_SUBSCRIPTION")
        assertError(path, #"{"productId":"nope"}"#, status: 422, code: "UNKNOWN_PRODUCT")
    }

    func testOperations() throws {
        let health = entitle.handle(HTTPRequest(method: "GET", target: "/healthz"))
        XCTAssertEqual(String(decoding: health.body, as: UTF8.self), #"{"status":"ok"}"#)
        // The example trusts its own example chain (Keys.example/example-chain): ready at once, offline.
        let ready = entitle.handle(HTTPRequest(method: "GET", target: "/readyz"))
        XCTAssertEqual(ready.status, 200)
        let checks = try JSONParser.parse(ready.body)["checks"]
        XCTAssertEqual(checks?["storage"], "ok")
        XCTAssertEqual(checks?["rootCertificates"]?["example"], "private root")
        _ = post("/v1/promotional-offers/sign", #"{"productId":"pro.monthly","offerId":"welcome20"}"#)
        let metrics = String(decoding: entitle.handle(HTTPRequest(method: "GET", target: "/metrics")).body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("entitle_offers_signed_total{app=\"example\",kind=\"v1\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("entitle_offers_signed_total{app=\"example\",kind=\"promotional-jws\"} 1"))
        XCTAssertTrue(metrics.contains("entitle_build_info{version=\"\(EntitleVersion.current)\"} 1"))
        for family in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "entitle_blocking_pool_threads"] {
            XCTAssertTrue(metrics.contains("\n\(family) "), family)
        }
        XCTAssertTrue(metrics.contains("entitle_http_open_connections 0"))
    }
}
