import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// The Retention Messaging API served by the test store, driven through Entitle's own
/// `/v1/retention/…` routes: images, messages, default messages, the realtime URL and Apple's
/// performance test, each checked as Apple checks it.
final class TestStoreMessagingTests: TestStoreTestCase {
    private let image = "3f2a1c9e-0d4b-4e1f-9a7c-2b8e5d6f7a10"
    private let message = "9b1e7c3a-5d2f-4a8b-8c6e-1f0a2b3c4d5e"

    func testMessagesImagesDefaultsAndTheRealtimeURL() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 32)
        XCTAssertEqual(
            served(
                "PUT", "/v1/retention/images/\(image)?imageSize=FULL_SIZE", authorization: "Bearer \(admin)", body: Array("GIF89a".utf8),
                contentType: "image/png"
            ).status,
            400,
            "not a PNG: Entitle refuses it before anything is sent")
        let uploaded = served(
            "PUT", "/v1/retention/images/\(image)?imageSize=FULL_SIZE", authorization: "Bearer \(admin)", body: png,
            contentType: "image/png")
        XCTAssertEqual(uploaded.status, 200, String(decoding: uploaded.body, as: UTF8.self))
        let images = call("GET", "/v1/retention/images").1
        XCTAssertEqual(images["imageIdentifiers"]?.arrayValue?.first?["imageState"], "APPROVED", "\(images)")

        let body: JSONObject = [
            "header": "Before you go", "body": "Stay for half price",
            "image": .object(["imageIdentifier": .string(image), "altText": "A gift"]),
        ]
        XCTAssertEqual(call("PUT", "/v1/retention/messages/\(message)", body).0, 200)
        let duplicate = call("PUT", "/v1/retention/messages/\(message)", body)
        XCTAssertEqual(duplicate.0, 409, "\(duplicate.1)")
        XCTAssertEqual(call("GET", "/v1/retention/messages").1["messageIdentifiers"]?.arrayValue?.count, 1)
        XCTAssertEqual(call("DELETE", "/v1/retention/images/\(image)").0, 502, "in use by the message: Apple's 403")
        XCTAssertEqual(call("PUT", "/v1/retention/defaults/pro.monthly/en-US", ["messageIdentifier": .string(message)]).0, 200)
        XCTAssertEqual(call("GET", "/v1/retention/defaults/pro.monthly/en-US").1["messageIdentifier"]?.stringValue, message)
        XCTAssertEqual(call("GET", "/v1/retention/defaults/pro.monthly/fr-FR").0, 404)

        XCTAssertEqual(call("GET", "/v1/retention/realtime-url").0, 404)
        XCTAssertEqual(call("PUT", "/v1/retention/realtime-url", ["realtimeURL": "https://entitle.example.com/v1/retention/apple"]).0, 200)
        XCTAssertEqual(call("GET", "/v1/retention/realtime-url").1["realtimeURL"], "https://entitle.example.com/v1/retention/apple")

        XCTAssertEqual(call("DELETE", "/v1/retention/messages/\(message)").0, 200)
        XCTAssertEqual(call("GET", "/v1/retention/defaults/pro.monthly/en-US").0, 404, "the default went with its message")
        XCTAssertEqual(call("DELETE", "/v1/retention/images/\(image)").0, 200)
        XCTAssertEqual(call("GET", "/v1/retention/images").1["imageIdentifiers"]?.arrayValue?.count, 0)
    }

    /// What Entitle checks before sending, the test store checks again as Apple does: an image
    /// that is not a PNG, or of no size Apple knows, is Apple's 400.
    func testTheServedAPIChecksImagesAsAppleDoes() throws {
        let bearer = "Bearer \(try appleBearer(key: signingKey, issuedAt: Int64(Date().timeIntervalSince1970)))"
        let path = "/v1/test-store/apple/api/inApps/v1/messaging/image/\(image)"
        let gif = served("PUT", path + "?imageSize=FULL_SIZE", authorization: bearer, body: Array("GIF89a".utf8), contentType: "image/png")
        XCTAssertEqual(gif.status, 400)
        XCTAssertEqual(try JSONParser.parse(gif.body)["errorCode"], 4_000_161)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        XCTAssertEqual(
            try JSONParser.parse(served("PUT", path + "?imageSize=HUGE", authorization: bearer, body: png).body)["errorCode"], 4_000_216)
        XCTAssertEqual(served("PUT", path + "?imageSize=BULLET_POINT", authorization: bearer, body: png).status, 200)
        XCTAssertEqual(served("PUT", path + "?imageSize=BULLET_POINT", authorization: bearer, body: png).status, 409)
        XCTAssertEqual(served("GET", "/v1/test-store/apple/api/inApps/v1/messaging/image/list", authorization: nil).status, 401)
    }

    /// Apple's performance test calls the realtime route (this deployment's) ten times and
    /// reports how it did: Entitle answers each, so it passes.
    func testThePerformanceTestCallsTheRealtimeRoute() throws {
        let original = try buy(trial: false)
        XCTAssertEqual(
            call("POST", "/v1/retention/performance-test", ["originalTransactionId": .string(original)]).0, 404, "no realtime URL")
        XCTAssertEqual(call("PUT", "/v1/retention/realtime-url", ["realtimeURL": "https://entitle.example.com/v1/retention/apple"]).0, 200)
        let (status, started) = call("POST", "/v1/retention/performance-test", ["originalTransactionId": .string(original)])
        XCTAssertEqual(status, 200, "\(started)")
        let requestId = try XCTUnwrap(started["requestId"]?.stringValue)
        let (read, result) = call("GET", "/v1/retention/performance-test/\(requestId)")
        XCTAssertEqual(read, 200, "\(result)")
        XCTAssertEqual(result["result"], "PASS", "\(result)")
        XCTAssertEqual(result["successRate"], 100)
        XCTAssertEqual(result["target"], "https://entitle.example.com/v1/retention/apple")
        XCTAssertEqual(call("GET", "/v1/retention/performance-test/unknown").0, 404)
    }
}
