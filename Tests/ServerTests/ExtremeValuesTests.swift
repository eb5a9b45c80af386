import Application
import Crypto
import Entitlements
import Foundation
import JSON
import Server
import TestSupport
import XCTest

/// No request stops the process. `?at=9223372036854775807`, a grant of `P292277024Y` and signed
/// payloads with extreme dates trapped in the milliseconds conversion ("Illegal instruction"),
/// dropping every request in flight. This walks every route of a real `entitle serve` with
/// extreme numbers in every query parameter and body field the API reads, and posts signed data
/// whose dates no one can mean; after each request the process must still be running, and
/// nothing may answer 500.
final class ExtremeValuesTests: XCTestCase {
    var chain: TestChain!
    var folder: URL!
    private var standIn: AppStoreStandIn!
    var server: Process?
    private var port = 0
    let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    /// Numbers and times at and beyond every edge: Int64's, Double's, past year 9999, before year 1.
    static let extremeTexts = [
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-1", "0", "1e308", "-1e308", "NaN",
        "253402300800000", "-62135596800001", "+292277026-01-01T00:00:00Z", "99999-12-31T23:59:59Z",
        "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "P292277024Y", "P9223372036854775807D", "P99999999999999999999Y",
    ]
    static let extremeNumbers: [JSONValue] = [
        .int(.max), .int(.min), .double(1e308), .double(-1e308), .double(9.3e18), .int(253_402_300_800_000), .int(-1),
    ]

    override func setUpWithError() throws {
        chain = try TestChain()
        folder = try makeTemporaryDirectory()
        standIn = try AppStoreStandIn.withFreshKey(in: folder, chain: chain)
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "storage": {"sqlite": "facts.sqlite3"}, "rateLimits": {"enabled": false},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8", "issuerId": "57246542-96fe-1a63-e053-0824d011072a"},
              "apiKeys": [{"key": "admin_key_0123456789", "role": "admin"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "appStoreServerAPI": {"sandboxURL": "\(standIn.baseURL)"},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]},
                           "pass": {"entitlements": ["pro"], "duration": "P1M"}},
              "offers": {"back": {"productId": "pro.monthly", "offerIdentifier": "back", "eligibility": "lapsed"}}}]}
            """)
        let started = try startEntitleServe(config: folder.appendingPathComponent("entitle.json").path)
        server = started.process
        port = started.port
    }

    override func tearDownWithError() throws {
        if let server, server.isRunning {
            server.terminate()
            server.waitUntilExit()
        }
        server = nil
        standIn = nil
        chain = nil
        try? FileManager.default.removeItem(at: folder)
    }

    func call(_ method: String, _ target: String, _ body: JSONObject? = nil) throws -> Int {
        let client = try TestHTTPClient(port: port, timeout: 30)
        try client.send(
            rawRequest(
                method, target, headers: ["Authorization: Bearer admin_key_0123456789", "Content-Type: application/json"],
                body: body.map { JSONValue.object($0).serializedString }))
        let what = "\(method) \(target) \(body.map { JSONValue.object($0).serializedString } ?? "")"
        guard let status = try? client.readResponse().status else {
            Thread.sleep(forTimeInterval: 0.5)  // a trapped process closes the connection a moment before it is gone
            if server?.isRunning != true { throw ServerStopped(description: "\(what) stopped the server") }
            throw ServerStopped(description: "\(what) got no answer")
        }
        XCTAssertNotEqual(status, 500, what)
        return status
    }

    /// Every member a request body of this API reads, each set to `value`.
    private func body(_ value: JSONValue) -> JSONObject {
        let names = [
            "duration", "expiresDate", "startDate", "endDate", "startTime", "timestamp", "at", "limit", "productId", "offerId",
            "transactionId", "appAccountToken", "environment", "purchaseToken", "key",
        ]
        var object: JSONObject = [:]
        for name in names { object[name] = value }
        return object
    }

    func testEveryRouteSurvivesExtremeNumbersAndTimes() throws {
        let probe = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: nil, store: try makeTemporaryStore())
        let routes = probe.routes
        XCTAssertGreaterThan(routes.count, 30)
        // A customer with a subscription and a grant, so every subscriber route evaluates facts.
        let base = TestChain.milliseconds(chain.mintedAt)
        let signed = try chain.sign([
            "transactionId": "1000", "originalTransactionId": "1000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "type": "Auto-Renewable Subscription", "purchaseDate": .int(base - 1000), "originalPurchaseDate": .int(base - 1000),
            "expiresDate": .int(base + 86_400_000), "environment": "Sandbox", "signedDate": .int(base + 1),
            "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token),
        ])
        XCTAssertEqual(try call("POST", "/v1/transactions", ["signedTransaction": .string(signed)]), 200)
        XCTAssertEqual(try call("POST", "/v1/subscribers/\(token)/entitlements/pro/grants", ["duration": "P1M"]), 201)
        for (method, pattern) in routes {
            let path = pattern.split(separator: "/", omittingEmptySubsequences: false).map { part -> String in
                guard part.hasPrefix("{") else { return String(part) }
                return part.lowercased().contains("token") ? token : part.contains("entitlement") ? "pro" : "1000"
            }.joined(separator: "/")
            for text in Self.extremeTexts {
                let value = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
                // One parameter at a time: a bad `environment` must not keep `at` from being read.
                for name in ["at", "limit", "after", "before", "since", "environment", "query", "status"] {
                    _ = try call(method, path + "?\(name)=\(value)", method == "GET" ? nil : body(.string(text)))
                }
            }
            if method != "GET" {
                for number in Self.extremeNumbers { _ = try call(method, path, body(number)) }
            }
        }
        XCTAssertEqual(try call("GET", "/healthz"), 200)
    }

    /// A grant's length or end past year 9999 is a clear 400, not a trap.
    func testGrantsBeyondTheRangeAre400() throws {
        let grants = "/v1/subscribers/\(token)/entitlements/pro/grants"
        for duration in ["P292277024Y", "P99999Y", "P120000M"] {
            XCTAssertEqual(try call("POST", grants, ["duration": .string(duration)]), 400, duration)
        }
        for until in [JSONValue.int(.max), .string("+292277026-01-01T00:00:00Z"), .double(1e300)] {
            XCTAssertEqual(try call("POST", grants, ["expiresDate": until]), 400, until.serializedString)
        }
        XCTAssertEqual(try call("POST", grants, ["duration": "P1M"]), 201)
        XCTAssertEqual(try call("GET", "/v1/subscribers/\(token)?at=9223372036854775807"), 400)
        XCTAssertEqual(try call("GET", "/v1/subscribers/\(token)?at=9999-12-31T23:59:59.999Z"), 200, "the last instant is fine")
    }

    /// Signed data whose dates lie outside the years 0 to 9999 is refused with the payload.
    func testSignedPayloadsWithExtremeDatesAreRefused() throws {
        let base = TestChain.milliseconds(chain.mintedAt)
        let dates: [JSONValue] = [.int(.max), .int(.min), .double(1e300), .double(-1e300), .int(253_402_300_800_000)]
        for field in ["expiresDate", "purchaseDate", "originalPurchaseDate", "signedDate", "revocationDate"] {
            for date in dates {
                var payload: JSONObject = [
                    "transactionId": "1000", "originalTransactionId": "1000", "bundleId": "com.example.app",
                    "productId": "pro.monthly", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base - 1000),
                    "originalPurchaseDate": .int(base - 1000), "expiresDate": .int(base + 86_400_000), "environment": "Sandbox",
                    "signedDate": .int(base + 1), "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token),
                ]
                payload[field] = date
                let jws = try chain.sign(payload)
                let what = "\(field)=\(date.serializedString)"
                XCTAssertEqual(try call("POST", "/v1/transactions", ["signedTransaction": .string(jws)]), 422, what)
                XCTAssertEqual(try call("POST", "/v1/verify", ["signedTransaction": .string(jws)]), 422, what)
                let notification = try chain.sign([
                    "notificationType": "DID_RENEW", "notificationUUID": .string(UUID().uuidString.lowercased()), "version": "2.0",
                    "signedDate": field == "signedDate" ? date : .int(base + 2),
                    "data": .object(["bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(jws)]),
                ])
                let status = try call("POST", "/v1/notifications/apple", ["signedPayload": .string(notification)])
                XCTAssertEqual(status, 422, what)
            }
        }
        XCTAssertEqual(try call("GET", "/v1/subscribers/\(token)"), 404, "nothing was stored")
    }
}

private struct ServerStopped: Error, CustomStringConvertible {
    let description: String
}
