import Application
import Crypto
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// An `entitle serve` of one app on a real loopback port, with an App Store stand-in (order
/// lookups, re-syncs) and a customer whose facts are signed by a minted chain: the admin API's and
/// the console's tests share it.
final class SupportFixture {
    let chain: TestChain
    let folder: URL
    let standIn: AppStoreStandIn
    let entitle: EntitleServer
    let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    /// Instants inside the minted chain's validity: facts are signed just after it was minted.
    let base: Int64
    static let day: Int64 = 86_400_000
    static let admin = "admin_key_0123456789"
    static let otherAdmin = "second_admin_key_0123456789"
    static let server = "server_key_0123456789"
    static let client = "client_key_0123456789"

    /// `top` and `app` add members to the configuration's top level and to the app.
    /// `googlePlayProducts` maps the catalog onto Google Play (product `pro`, base plans `monthly`
    /// and `yearly`) and adds Play offers.
    init(top: String = "", app: String = "", environments: String = #"["Sandbox"]"#, googlePlayProducts: Bool = false) throws {
        chain = try TestChain()
        base = TestChain.milliseconds(chain.mintedAt)
        folder = try makeTemporaryDirectory("entitle-support")
        standIn = try AppStoreStandIn.withFreshKey(in: folder, chain: chain)
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"port": 0}, "storage": {"sqlite": "facts.sqlite3"}\(top),
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": \(environments), "appAppleId": 1234567890,
              "signingKey": {"keyId": "KEY1", "issuerId": "57246542-96fe-1a63-e053-0824d011072a", "privateKeyFile": "key.p8"},
              "apiKeys": [{"key": "\(Self.client)", "role": "client"}, {"key": "\(Self.server)", "role": "server"},
                          {"key": "\(Self.admin)", "role": "admin", "name": "Dana (support)"},
                          {"key": "\(Self.otherAdmin)", "role": "admin"}],
              "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"], "allowPrivateRoots": true},
              "appStoreServerAPI": {"sandboxURL": "\(standIn.baseURL)", "productionURL": "\(standIn.baseURL)"},
              "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]\(googlePlayProducts ? #", "googlePlay": {"productId": "pro", "basePlanId": "monthly"}"# : "")},
                           "pro.yearly": {"subscriptionGroup": "G1", "entitlements": ["pro"]\(googlePlayProducts ? #", "googlePlay": {"productId": "pro", "basePlanId": "yearly"}"# : "")},
                           "extras": {"entitlements": ["extras"]\(googlePlayProducts ? #", "googlePlay": {"productId": "extras"}"# : "")}}\(googlePlayProducts ? Self.playOffers : "")\(app)}]}
            """)
        entitle = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: nil)
        entitle.start()
    }

    static let playOffers = #"""
        , "offers": {"playwinback": {"productId": "pro.monthly", "offerIdentifier": "pro_monthly_winback", "eligibility": "lapsed",
                                     "googlePlay": {"basePlanId": "monthly", "offerId": "winback-offer"}},
                     "welcome": {"productId": "pro.monthly", "offerIdentifier": "pro_monthly_welcome"}}
        """#

    deinit {
        entitle.shutdown()
        entitle.waitUntilStopped()
        try? FileManager.default.removeItem(at: folder)
    }

    var url: String { "http://127.0.0.1:\(entitle.port)" }

    struct Reply {
        let status: Int
        let json: JSONValue
        let headers: [String: String]
        let text: String
    }

    /// One request over a real connection.
    func call(
        _ method: String, _ path: String, key: String? = SupportFixture.admin, cookie: String? = nil, csrf: String? = nil,
        body: JSONObject? = nil, headers extra: [String] = []
    ) throws -> Reply {
        var headers = extra
        if let key { headers.append("Authorization: Bearer \(key)") }
        if let cookie { headers.append("Cookie: entitle_session=\(cookie)") }
        if let csrf { headers.append("X-CSRF-Token: \(csrf)") }
        let text = body.map { JSONValue.object($0).serializedString }
        if text != nil { headers.append("Content-Type: application/json") }
        let client = try TestHTTPClient(port: entitle.port)
        try client.send(rawRequest(method, path, headers: headers, body: text))
        let response = try client.readResponse()
        return Reply(
            status: response.status, json: (try? JSONParser.parse(response.body)) ?? .null, headers: response.headers,
            text: response.text)
    }

    // MARK: - Signed facts

    /// A monthly subscription of the customer, `1000`, bought 40 days ago: it expired 10 days ago.
    func expiredTransaction(id: String = "1000", signed: Int64? = nil) throws -> String {
        try chain.sign([
            "transactionId": .string(id), "originalTransactionId": "1000", "bundleId": "com.example.app",
            "productId": "pro.monthly", "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription",
            "purchaseDate": .int(base - 40 * Self.day), "originalPurchaseDate": .int(base - 40 * Self.day),
            "expiresDate": .int(base - 10 * Self.day), "inAppOwnershipType": "PURCHASED", "environment": "Sandbox",
            "signedDate": .int(signed ?? base + 1), "appAccountToken": .string(token), "appTransactionId": "704000000000001",
            "price": 4990, "currency": "EUR",
        ])
    }

    func renewalInfo(signed: Int64) throws -> String {
        try chain.sign([
            "originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly", "autoRenewStatus": 0,
            "expirationIntent": 1, "environment": "Sandbox", "signedDate": .int(signed),
        ])
    }

    func notification(
        _ uuid: String, type: String, subtype: String?, transaction: String, renewal: String?, signed: Int64
    ) throws
        -> String
    {
        var data: JSONObject = ["bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(transaction)]
        if let renewal { data["signedRenewalInfo"] = .string(renewal) }
        var payload: JSONObject = [
            "notificationType": .string(type), "notificationUUID": .string(uuid), "version": "2.0", "signedDate": .int(signed),
            "data": .object(data),
        ]
        if let subtype { payload["subtype"] = .string(subtype) }
        return try chain.sign(payload)
    }

    /// A notification signed by a chain Entitle does not trust: refused, and remembered as such.
    func postForgedNotification() throws -> Reply {
        let forged = try TestChain()
        return try call(
            "POST", "/v1/notifications/apple", key: nil,
            body: [
                "signedPayload": .string(
                    try forged.sign([
                        "notificationType": "DID_RENEW", "notificationUUID": "6f1c0e0a-0000-4000-8000-0000000000ff", "version": "2.0",
                        "signedDate": .int(base + 5), "data": .object(["bundleId": "com.example.app", "environment": "Sandbox"]),
                    ]))
            ])
    }

    /// The customer bought through the app (client post), then Apple told of the expiry.
    func seedCustomer() throws {
        let posted = try call(
            "POST", "/v1/transactions", key: Self.client, body: ["signedTransaction": .string(try expiredTransaction())])
        XCTAssertEqual(posted.status, 200, posted.text)
        let expired = try notification(
            "6f1c0e0a-0000-4000-8000-000000000001", type: "EXPIRED", subtype: "VOLUNTARY",
            transaction: try expiredTransaction(signed: base + 2), renewal: try renewalInfo(signed: base + 2), signed: base + 3)
        let notified = try call("POST", "/v1/notifications/apple", key: nil, body: ["signedPayload": .string(expired)])
        XCTAssertEqual(notified.status, 200, notified.text)
    }
}
