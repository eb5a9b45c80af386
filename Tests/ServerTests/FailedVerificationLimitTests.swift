import Foundation
import JSON
import TestSupport
import XCTest

/// The routes a signature authenticates (Apple's and Google's notifications, Apple's retention
/// requests) are never limited while their posts verify; posts that fail verification take from
/// their address's `failedVerification` bucket, and an address that has emptied it is refused at
/// once, before its body is read. One client sending 6,600 forged notifications a second cut the
/// server's other throughput from 10,600 to 1,600 requests a second.
final class FailedVerificationLimitTests: XCTestCase {
    private var fixture: SupportFixture!

    override func setUpWithError() throws {
        fixture = try SupportFixture(top: #", "rateLimits": {"failedVerification": {"perSecond": 0.2, "burst": 3}}"#)
    }

    override func tearDownWithError() throws { fixture = nil }

    private func post(_ path: String, _ payload: String, from address: String) throws -> SupportFixture.Reply {
        try fixture.call("POST", path, key: nil, body: ["signedPayload": .string(payload)], headers: ["X-Forwarded-For: \(address)"])
    }

    func testForgedPostsAreLimitedByAddressAndVerifiedOnesNever() throws {
        let forged = "eyJhbGciOiJFUzI1NiJ9.eyJ4IjoxfQ.c2ln"
        for path in ["/v1/notifications/apple", "/v1/retention/apple"] {
            XCTAssertEqual(try post(path, forged, from: "198.51.100.1").status, 422, path)
        }
        XCTAssertEqual(try post("/v1/notifications/apple", forged, from: "198.51.100.1").status, 422, "the third failure")
        for _ in 0..<3 {
            let refused = try post("/v1/notifications/apple", forged, from: "198.51.100.1")
            XCTAssertEqual(refused.status, 429, "the address's failures are used up: refused before verifying")
            XCTAssertEqual(refused.json["error"]?["code"], "RATE_LIMITED")
            XCTAssertNotNil(refused.headers["retry-after"])
        }
        XCTAssertEqual(try post("/v1/notifications/apple", forged, from: "198.51.100.2").status, 422, "another address is verified")
        // Apple's real posts, from another address: verified every time, never counted.
        for index in 0..<10 {
            let uuid = String(format: "6f1c0e0a-0000-4000-8000-%012d", 100 + index)
            let signed = try fixture.notification(
                uuid, type: "DID_RENEW", subtype: nil, transaction: try fixture.expiredTransaction(signed: fixture.base + Int64(index)),
                renewal: nil, signed: fixture.base + Int64(index))
            XCTAssertEqual(try post("/v1/notifications/apple", signed, from: "17.0.0.1").status, 200, "verified post \(index)")
        }
        let metrics = try fixture.call("GET", "/metrics", key: nil)
        XCTAssert(metrics.text.contains(#"entitle_rate_limited_total{scope="failed_verification"} 3"#), metrics.text)
    }
}
