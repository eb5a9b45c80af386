import Application
import Crypto
import EntitleKit
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real server for EntitleKit's tests: `EntitleServer` on a port, its test store selling, its
/// answers signed (`responseSigning`), one app selling a monthly subscription with a promotional
/// offer any customer may have (`welcome`) and a win-back offer only a lapsed one may (`comeback`),
/// and an offering of both on the `onboarding` placement.
/// A man in the middle (`tamper-proxy.py`) can stand between the client and the server.
class EntitleKitTestCase: XCTestCase {
    var folder: URL!
    var server: EntitleServer!
    let token = UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138")!
    let admin = "admin_key_0123456789"
    private var proxy: Process?
    /// One session a test, invalidated after it: no transfer thread of it outlives the test (the
    /// tests after it in this process spawn processes).
    var session: URLSession!
    /// The app's key's issuer ID: with one, Entitle signs offers as JWS too; without, v1 only.
    class var issuerId: String? { nil }

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory("entitlekit")
        let made = try SigningChainMaker.make(name: "Test", now: Date())
        let chain = TestStoreChain(root: made.root, intermediate: made.intermediate, leaf: made.leaf, leafKey: made.leafKey, google: nil)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("chain"), withIntermediateDirectories: true)
        for (name, text) in try chain.files() { try writeFile(folder.appendingPathComponent("chain/\(name)"), text) }
        try writeFile(folder.appendingPathComponent("key.p8"), try P256.Signing.PrivateKey().pemRepresentation)
        try writeFile(folder.appendingPathComponent("response.p8"), try P256.Signing.PrivateKey().pemRepresentation)
        let issuer = type(of: self).issuerId.map { #", "issuerId": "\#($0)""# } ?? ""
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"host": "127.0.0.1", "port": 0}, "storage": {"sqlite": "entitle.sqlite3"},
             "testStore": {"enabled": true, "chain": "chain"},
             "responseSigning": {"keyId": "app-key-1", "privateKeyFile": "response.p8"},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"], "appAppleId": 1234,
               "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"\(issuer)},
               "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "\(admin)", "role": "admin"}],
               "verification": {"rootCertificates": [], "allowPrivateRoots": true},
               "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1M"},
                            "pro.yearly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1Y"}},
               "offers": {"welcome": {"productId": "pro.monthly", "offerIdentifier": "pro_monthly_welcome", "eligibility": "any"},
                          "comeback": {"productId": "pro.monthly", "offerIdentifier": "pro_monthly_comeback", "eligibility": "lapsed"}},
               "offerings": {"main": {"packages": {"monthly": {"appStore": {"productId": "pro.monthly", "offerId": "comeback"}},
                                                   "annual": {"appStore": {"productId": "pro.yearly"}}},
                                      "metadata": {"title": "Go Pro", "order": [2, 1]}}},
               "placements": {"onboarding": {"offering": "main", "rules": [
                 {"name": "subscribers", "when": {"state": "active"}, "offering": null},
                 {"name": "beta", "when": {"attributes": {"cohort": "beta"}, "country": "DE", "appVersionAtLeast": "2"},
                  "offering": "main"}]}}}]}
            """)
        server = try EntitleServer(
            configuration: ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path, environment: [:]),
            logOutput: nil)
        server.start()
        session = URLSession(configuration: .ephemeral)
    }

    override func tearDownWithError() throws {
        session?.invalidateAndCancel()
        stopProxy()
        server?.shutdown()
        server?.waitUntilStopped()
        try? FileManager.default.removeItem(at: folder)
    }

    /// An admin call to the server (the test store's routes), its status and JSON.
    @discardableResult
    func admin(_ method: String, _ path: String, _ body: JSONObject = [:]) -> (Int, JSONValue) {
        let answer = server.handle(
            HTTPRequest(
                method: method, target: path, headers: [("authorization", "Bearer \(admin)"), ("content-type", "application/json")],
                body: method == "GET" ? [] : JSONValue.object(body).serializedBytes))
        return (answer.status, (try? JSONParser.parse(answer.body)) ?? .null)
    }

    /// The keys the app pins: the server's JWKS, as published.
    func pinnedKeys() throws -> [ResponseSigningKey] {
        let jwks = server.handle(HTTPRequest(method: "GET", target: "/.well-known/entitle/jwks.json", headers: [], body: []))
        return try ResponseSigningKey.keys(jwks: Data(jwks.body))
    }

    func client(
        port: Int? = nil, keys: [ResponseSigningKey]? = nil, verification: EntitleClient.Configuration.Verification = .required,
        cache: Bool = false, staleness: TimeInterval = 3 * 86_400
    ) throws -> EntitleClient {
        EntitleClient(
            configuration: EntitleClient.Configuration(
                serverURL: URL(string: "http://127.0.0.1:\(port ?? server.port)")!, clientKey: "client_key_0123456789",
                appAccountToken: token, signingKeys: try keys ?? pinnedKeys(), verification: verification,
                maximumStaleness: staleness, cacheDirectory: cache ? folder.appendingPathComponent("cache") : nil),
            session: session)
    }

    /// The test store as the client's store; `notifies` false: Apple's notifications are not
    /// sent, so what Entitle stores came from the client's own post.
    func purchaser(notifies: Bool = false) -> TestStorePurchaser {
        TestStorePurchaser(
            serverURL: URL(string: "http://127.0.0.1:\(server.port)")!, adminKey: admin, session: session, notifiesEntitle: notifies)
    }

    /// SIGKILL: the proxy inherits the test runner's ignored SIGTERM.
    func stopProxy() {
        guard let proxy, proxy.isRunning else { return }
        kill(proxy.processIdentifier, SIGKILL)
        proxy.waitUntilExit()
        self.proxy = nil
    }

    struct ProxyDidNotStart: Error {}

    func startProxy(_ mode: String) throws -> Int {
        let portFile = folder.appendingPathComponent("proxy-port-\(mode)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: systemPython)
        process.arguments = [
            packageRoot.appendingPathComponent("Tests/TestSupport/tamper-proxy.py").path, "--upstream-port", String(server.port),
            "--mode", mode, "--port-file", portFile.path,
        ]
        process.environment = inheritedEnvironment  // see inheritedEnvironment: never the live environ
        try process.run()
        proxy = process
        for _ in 0..<200 {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) { return port }
            usleep(50_000)
        }
        throw ProxyDidNotStart()
    }
}
