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
final class EntitleClientTests: EntitleKitTestCase {
    private func buy() throws {
        let (status, answer) = admin(
            "POST", "/v1/test-store/apple/purchases",
            ["appAccountToken": .string(token.uuidString.lowercased()), "productId": "pro.monthly"])
        XCTAssertEqual(status, 200, "\(answer)")
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

    /// A refresh of an unchanged customer is a conditional GET: Entitle answers 304 without the
    /// body, signed over the body the client kept, and the client answers that body; a changed
    /// customer is a 200 again.
    func testAnUnchangedCustomerIsNotSentAgain() async throws {
        try buy()
        let entitle = try client()
        let first = try await entitle.customer()
        let body = server.handle(
            HTTPRequest(
                method: "GET", target: "/v1/subscribers/\(token.uuidString.lowercased())",
                headers: [("authorization", "Bearer client_key_0123456789")], body: []))
        let tag = try XCTUnwrap(body.header("etag"))
        let unchanged = server.handle(
            HTTPRequest(
                method: "GET", target: "/v1/subscribers/\(token.uuidString.lowercased())",
                headers: [("authorization", "Bearer client_key_0123456789"), ("if-none-match", tag)], body: []))
        XCTAssertEqual(unchanged.status, 304)
        XCTAssertEqual(unchanged.body, [])
        let again = try await entitle.customer()
        XCTAssertEqual(again.customer, first.customer)
        XCTAssertTrue(again.verified)
        XCTAssertEqual(admin("POST", "/v1/test-store/clock", ["advance": "P1M"]).0, 200)
        let renewed = try await entitle.customer()
        XCTAssertNotEqual(renewed.customer.entitlements["pro"]?.expiresDate, first.customer.entitlements["pro"]?.expiresDate)
    }

    /// A man in the middle answers 304 for a customer that changed (it saw the new tag, and the
    /// client's request named the old one): the signature covers the current body, not the kept
    /// one, and the answer is refused.
    func testANotModifiedAnswerForAChangedCustomerIsRefused() async throws {
        try buy()
        let proxy = try startProxy("not-modified")
        let entitle = try client(port: proxy)
        _ = try await entitle.customer()
        XCTAssertEqual(admin("POST", "/v1/test-store/clock", ["advance": "P1M"]).0, 200)
        do {
            _ = try await entitle.customer()
            XCTFail("an old body passed for the current one")
        } catch let error as UntrustedAnswer {
            XCTAssertEqual(error, .changedBody)
        }
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
}
