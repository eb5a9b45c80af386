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

/// EntitleKit against a real server (`EntitleServer` on a port, its test store selling, its
/// answers signed): the customer as a verified answer, refused when signed by another key,
/// changed on the way or replayed (a man in the middle, `tamper-proxy.py`), and the last verified
/// answer standing while the server is away.
final class EntitleClientTests: XCTestCase {
    private var folder: URL!
    private var server: EntitleServer!
    private let token = UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138")!
    private let admin = "admin_key_0123456789"
    private var proxy: Process?
    /// One session a test, invalidated after it: no transfer thread of it outlives the test (the
    /// tests after it in this process spawn processes).
    private var session: URLSession!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory("entitlekit")
        let made = try SigningChainMaker.make(name: "Test", now: Date())
        let chain = TestStoreChain(root: made.root, intermediate: made.intermediate, leaf: made.leaf, leafKey: made.leafKey, google: nil)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("chain"), withIntermediateDirectories: true)
        for (name, text) in try chain.files() { try writeFile(folder.appendingPathComponent("chain/\(name)"), text) }
        try writeFile(folder.appendingPathComponent("key.p8"), try P256.Signing.PrivateKey().pemRepresentation)
        try writeFile(folder.appendingPathComponent("response.p8"), try P256.Signing.PrivateKey().pemRepresentation)
        try writeFile(
            folder.appendingPathComponent("entitle.json"),
            """
            {"server": {"host": "127.0.0.1", "port": 0}, "storage": {"sqlite": "entitle.sqlite3"},
             "testStore": {"enabled": true, "chain": "chain"},
             "responseSigning": {"keyId": "app-key-1", "privateKeyFile": "response.p8"},
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"], "appAppleId": 1234,
               "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
               "apiKeys": [{"key": "client_key_0123456789", "role": "client"}, {"key": "\(admin)", "role": "admin"}],
               "verification": {"rootCertificates": [], "allowPrivateRoots": true},
               "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1M"}}}]}
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

    private func buy() throws {
        let answer = server.handle(
            HTTPRequest(
                method: "POST", target: "/v1/test-store/apple/purchases",
                headers: [("authorization", "Bearer \(admin)"), ("content-type", "application/json")],
                body: JSONValue.object(["appAccountToken": .string(token.uuidString.lowercased()), "productId": "pro.monthly"])
                    .serializedBytes))
        XCTAssertEqual(answer.status, 200, String(decoding: answer.body, as: UTF8.self))
    }

    /// The keys the app pins: the server's JWKS, as published.
    private func pinnedKeys() throws -> [ResponseSigningKey] {
        let jwks = server.handle(HTTPRequest(method: "GET", target: "/.well-known/entitle/jwks.json", headers: [], body: []))
        return try ResponseSigningKey.keys(jwks: Data(jwks.body))
    }

    private func client(
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

    func testTheCustomerIsAVerifiedAnswer() async throws {
        let before = try await client().customer()
        XCTAssertEqual(before.customer.entitlements, [:], "a customer Entitle does not know yet")
        XCTAssertTrue(before.verified)
        try buy()
        let state = try await client().customer()
        XCTAssertEqual(state.source, .server)
        XCTAssertTrue(state.verified)
        XCTAssertTrue(state.customer.isEntitled(to: "pro"))
        XCTAssertEqual(state.customer.entitlements["pro"]?.productId, "pro.monthly")
        XCTAssertEqual(state.customer.entitlements["pro"]?.store, "app_store")
    }

    /// The guide's snippet (docs/SWIFT_CLIENT.md) as written, but for the server's address,
    /// folder and the test's session: the token is made once and kept; a new customer has no entitlements.
    func testTheGuidesSnippetConfiguresAClient() async throws {
        let applicationSupport = folder.appendingPathComponent("Application Support")
        let token = try AppAccountToken.stored(in: applicationSupport.appendingPathComponent("entitle/app-account-token"))
        XCTAssertEqual(try AppAccountToken.stored(in: applicationSupport.appendingPathComponent("entitle/app-account-token")), token)
        let pinnedJWKS = Data(
            server.handle(HTTPRequest(method: "GET", target: "/.well-known/entitle/jwks.json", headers: [], body: [])).body)
        let entitle = EntitleClient(
            configuration: EntitleClient.Configuration(
                serverURL: URL(string: "http://127.0.0.1:\(server.port)")!,
                clientKey: "client_key_0123456789",
                appAccountToken: token,
                signingKeys: try ResponseSigningKey.keys(jwks: pinnedJWKS),
                cacheDirectory: applicationSupport.appendingPathComponent("entitle")),
            session: session)
        let state = try await entitle.customer()
        XCTAssertTrue(state.verified)
        XCTAssertFalse(state.customer.isEntitled(to: "pro"))
    }

    /// An answer signed by a key the app did not pin is refused, or (informational mode) shown
    /// as unverified.
    func testAnotherKeyIsRefused() async throws {
        try buy()
        let other = ResponseSigningKey(keyId: "app-key-1", x: Data(repeating: 1, count: 32), y: Data(repeating: 2, count: 32))
        do {
            _ = try await client(keys: [other]).customer()
            XCTFail("an answer that does not verify with the pinned key was taken")
        } catch let error as UntrustedAnswer {
            XCTAssertEqual(error, .badSignature)
        }
        let unpinned = ResponseSigningKey(keyId: "someone-else", x: other.x, y: other.y)
        do {
            _ = try await client(keys: [unpinned]).customer()
            XCTFail("an answer signed with a key the app did not pin was taken")
        } catch let error as UntrustedAnswer {
            XCTAssertEqual(error, .unknownKey("app-key-1"))
        }
        let shown = try await client(keys: [other], verification: .informational).customer()
        XCTAssertFalse(shown.verified)
        XCTAssertTrue(shown.customer.isEntitled(to: "pro"))
    }

    /// A man in the middle: a byte changed in the body, or the first answer replayed for a later
    /// request, is refused.
    func testAChangedOrReplayedAnswerIsRefused() async throws {
        try buy()
        let flipping = try startProxy("flip")
        do {
            _ = try await client(port: flipping).customer()
            XCTFail("a changed answer was taken")
        } catch let error as UntrustedAnswer {
            XCTAssertEqual(error, .changedBody, "the signature is checked before the body is read")
        }
        stopProxy()
        let replaying = try startProxy("replay")
        let replayingClient = try client(port: replaying)
        _ = try await replayingClient.customer()  // the first answer, genuine
        do {
            _ = try await replayingClient.customer()
            XCTFail("a replayed answer was taken")
        } catch let error as UntrustedAnswer {
            XCTAssertEqual(error, .anotherRequest, "its nonce is the first request's")
        }
    }

    /// Offline: the last verified answer (kept on disk) stands while the server is away, within
    /// the staleness allowed; beyond it, the client says the server is unreachable.
    func testTheLastVerifiedAnswerStandsOffline() async throws {
        try buy()
        let port = server.port
        _ = try await client(cache: true).customer()
        server.shutdown()
        server.waitUntilStopped()
        server = nil
        let offline = try await client(port: port, keys: [], cache: true).customer()
        guard case .cache = offline.source else { return XCTFail("\(offline.source)") }
        XCTAssertTrue(offline.customer.isEntitled(to: "pro"))
        XCTAssertFalse(offline.customer.isEntitled(to: "pro", at: Date().addingTimeInterval(40 * 86_400)), "not past its expiry")
        do {
            _ = try await client(port: port, keys: [], cache: true, staleness: 0).customer()
            XCTFail("a stale answer stood in")
        } catch is EntitleUnreachable {}
    }

    /// SIGKILL: the proxy inherits the test runner's ignored SIGTERM.
    private func stopProxy() {
        guard let proxy, proxy.isRunning else { return }
        kill(proxy.processIdentifier, SIGKILL)
        proxy.waitUntilExit()
        self.proxy = nil
    }

    private func startProxy(_ mode: String) throws -> Int {
        let portFile = folder.appendingPathComponent("proxy-port-\(mode)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: systemPython)
        process.arguments = [
            packageRoot.appendingPathComponent("Tests/TestSupport/tamper-proxy.py").path, "--upstream-port", String(server.port),
            "--mode", mode, "--port-file", portFile.path,
        ]
        try process.run()
        proxy = process
        for _ in 0..<200 {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) { return port }
            usleep(50_000)
        }
        throw XCTSkip("the proxy did not start")
    }
}
