import Application
import Crypto
import Foundation
import HTTP
import Instants
import JSON
import Server
import TestSupport
import XCTest

/// A server with a test store, as each test-store test starts it: one app selling a monthly and
/// a yearly subscription in one group (with a promotional offer) and a one-time product, on the
/// App Store and Google Play, its webhooks received, and its App Store Server API and Play
/// Developer API pointed at the test store itself.
class TestStoreTestCase: XCTestCase {
    var folder: URL!
    var receiver: WebhookReceiver!
    var entitle: EntitleServer!
    let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    let admin = "admin_key_0123456789"
    let issuer = "57246542-96fe-1a63-e053-0824d011072a"
    /// The Pub/Sub push subscription's service account the app's `googlePlay.pubsub` names.
    static let pushAccount = "play-rtdn@entitle-test-store.iam.gserviceaccount.com"
    /// More members of the app's configuration, for the tests of one class.
    class var appSettings: String { "" }
    /// Whether the deployment signs its answers (`responseSigning`, with `response.p8`).
    class var signsResponses: Bool { false }
    /// The app's In-App Purchase key (offers are signed with it), made anew for each server.
    var signingKey: P256.Signing.PrivateKey!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory("entitle-test-store")
        receiver = try WebhookReceiver()
        try writeChain(to: folder.appendingPathComponent("chain"))
        entitle = try server(environments: #"["Sandbox"]"#)
        entitle.start()
    }

    override func tearDownWithError() throws {
        entitle?.shutdown()
        entitle?.waitUntilStopped()
        entitle = nil
        receiver = nil
        try? FileManager.default.removeItem(at: folder)
    }

    /// Stops the server (a test that starts another, or lets a command use the database).
    func stop() {
        entitle.shutdown()
        entitle.waitUntilStopped()
        entitle = nil
    }

    func writeChain(to chainFolder: URL) throws {
        let made = try SigningChainMaker.make(name: "Test", now: Date())
        let chain = TestStoreChain(
            root: made.root, intermediate: made.intermediate, leaf: made.leaf, leafKey: made.leafKey,
            google: try TestStoreGoogleKey(privateKey: try RSA.PrivateKey(generatingBits: 2048)))
        try FileManager.default.createDirectory(at: chainFolder, withIntermediateDirectories: true)
        for (name, text) in try chain.files() { try writeFile(chainFolder.appendingPathComponent(name), text) }
    }

    func configuration(environments: String, roots: String = "[]", testStore: Bool = true) -> String {
        """
        {"server": {"port": 0}, "storage": {"sqlite": "entitle.sqlite3"},
         "delivery": {"caFile": "\(receiver.caFile)"},
         \(testStore ? #""testStore": {"enabled": true, "chain": "chain"},"# : "")
         \(type(of: self).signsResponses ? #""responseSigning": {"keyId": "response-key-1", "privateKeyFile": "response.p8"},"# : "")
         "apps": [{"id": "app", "bundleId": "com.example.app", "environments": \(environments), "appAppleId": 1234,
           "signingKey": {"keyId": "KEY1", "issuerId": "\(issuer)", "privateKeyFile": "key.p8"},
           "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "server_key_0123456789", "role": "server"},
                       {"key": "\(admin)", "role": "admin"}],
           "verification": {"rootCertificates": \(roots), "allowPrivateRoots": true},
           "webhooks": [{"url": "\(receiver.url("/hooks"))", "secret": "\(receiver.secret)"}],
           "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1M",
                                        "googlePlay": {"productId": "pro", "basePlanId": "monthly"}},
                        "pro.yearly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1Y",
                                       "googlePlay": {"productId": "pro", "basePlanId": "yearly"}},
                        "gems": {"entitlements": [], "googlePlay": {"productId": "gems"}},
                        "pass.month": {"entitlements": ["pass"], "duration": "P1M"}},
           "retention": {"defaultMessage": "msg-stay"}, \(type(of: self).appSettings)
           "googlePlay": {"packageName": "com.example.app", "serviceAccountKeyFile": "chain/google-service-account.json",
             "pubsub": {"audience": "https://entitle.example/v1/notifications/google", "serviceAccountEmail": "\(Self.pushAccount)"},
             "jwks": "chain/google-jwks.json"},
           "offers": {"welcome": {"productId": "pro.monthly", "offerIdentifier": "pro_monthly_welcome", "eligibility": "any"},
                      "winback": {"productId": "pro.yearly", "offerIdentifier": "pro_yearly_winback", "eligibility": "lapsed"}}}]}
        """
    }

    func server(environments: String, roots: String = "[]", testStore: Bool = true) throws -> EntitleServer {
        signingKey = try P256.Signing.PrivateKey()
        try writeFile(folder.appendingPathComponent("key.p8"), try signingKey.pemRepresentation)
        try writeFile(folder.appendingPathComponent("response.p8"), try P256.Signing.PrivateKey().pemRepresentation)
        try writeFile(
            folder.appendingPathComponent("entitle.json"), configuration(environments: environments, roots: roots, testStore: testStore))
        return try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: nil)
    }

    @discardableResult
    func call(_ method: String, _ path: String, key: String? = nil, _ body: JSONObject? = nil) -> (Int, JSONValue) {
        var headers: [(name: String, value: String)] = [("content-type", "application/json")]
        headers.append(("authorization", "Bearer \(key ?? admin)"))
        let response = entitle.handle(
            HTTPRequest(method: method, target: path, headers: headers, body: body.map { JSONValue.object($0).serializedBytes } ?? []))
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    /// The notifications a call's answer says were sent, as `TYPE/SUBTYPE`, each delivered.
    func notified(_ answer: JSONValue, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let happened = answer["happened"]?.arrayValue ?? []
        for step in happened {
            XCTAssertEqual(step["delivered"], true, "\(step)", file: file, line: line)
            XCTAssertEqual(step["status"], 200, "Entitle's route took it: \(step)", file: file, line: line)
        }
        return happened.compactMap { $0["notification"]?.stringValue }
    }

    func pro() -> JSONValue? {
        call("GET", "/v1/subscribers/\(token)", key: "client_key_0123456789").1["subscriber"]?["entitlements"]?["pro"]
    }

    func advance(_ duration: String) -> [String] {
        let (status, answer) = call("POST", "/v1/test-store/clock", ["advance": .string(duration)])
        XCTAssertEqual(status, 200, "\(answer)")
        return notified(answer)
    }

    func buy(trial: Bool = true, notified expected: String = "SUBSCRIBED/INITIAL_BUY") throws -> String {
        var body: JSONObject = ["appAccountToken": .string(token), "productId": "pro.monthly"]
        if trial { body["offer"] = .object(["type": "introductory", "discountType": "FREE_TRIAL", "period": "P1W"]) }
        let (status, answer) = call("POST", "/v1/test-store/apple/purchases", body)
        XCTAssertEqual(status, 200, "\(answer)")
        XCTAssertEqual(notified(answer), [expected])
        return try XCTUnwrap(answer["originalTransactionId"]?.stringValue)
    }

    func act(_ original: String, _ action: String, _ body: JSONObject? = nil) -> (Int, JSONValue) {
        call("POST", "/v1/test-store/apple/subscriptions/\(original)/\(action)", body)
    }

    /// An App Store Server API bearer token as Apple's API takes it, signed with `key`.
    func appleBearer(key: P256.Signing.PrivateKey, issuedAt: Int64) throws -> String {
        try JWSSigner.sign(
            header: ["alg": "ES256", "kid": "KEY1", "typ": "JWT"],
            payload: [
                "iss": .string(issuer), "iat": .int(issuedAt), "exp": .int(issuedAt + 600), "aud": "appstoreconnect-v1",
                "bid": "com.example.app",
            ], with: key)
    }

    /// A request to the server as is: the test store's App Store Server API takes Apple's token,
    /// and images are not JSON.
    func served(
        _ method: String, _ path: String, authorization: String?, body: [UInt8] = [], contentType: String = "application/json"
    ) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("content-type", contentType)]
        if let authorization { headers.append(("authorization", authorization)) }
        return entitle.handle(HTTPRequest(method: method, target: path, headers: headers, body: body))
    }
}
