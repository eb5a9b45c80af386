import AppStore
import Entitlements
import Foundation
import JSON
import TestSupport
import XCTest

@testable import Application

/// `POST /v1/verify`'s use case and the retention messages sent to Apple, without HTTP.
final class VerifyAndMessagingUseCaseTests: XCTestCase {
    func testVerifyDecodesWhatTheChainSignedAndRefusesAForgery() throws {
        let fixture = try UseCaseFixture()
        let signed = try fixture.transaction()
        let outcome = try fixture.answer { completion in
            fixture.services.verify(signed, kind: .transaction) { completion(.success($0)) }
        }
        guard case .valid = outcome.result else { return XCTFail("\(outcome.result)") }
        XCTAssertEqual(outcome.environment, .sandbox)
        var forged = Array(signed.utf8)
        forged[forged.count - 5] ^= 1
        let refused = try fixture.answer { completion in
            fixture.services.verify(String(decoding: forged, as: UTF8.self), kind: .transaction) { completion(.success($0)) }
        }
        guard case .invalid = refused.result else { return XCTFail("a forged signature verified") }
        XCTAssertTrue(try fixture.store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000") == nil, "nothing stored")
    }

    func testAMessageIsCheckedAgainstApplesLimitsBeforeItIsSent() async throws {
        let fixture = try UseCaseFixture()
        let messaging = fixture.services.retentionMessaging
        await assertThrowsAsync({
            try await messaging.perform(
                .uploadMessage(id: "long", message: ["header": .string(String(repeating: "h", count: 67)), "body": "b"]),
                environment: .sandbox)
        }) { XCTAssertEqual(($0 as? ServiceError)?.httpStatus, 400, "\($0)") }
        XCTAssertTrue(fixture.apple.uploadedMessages.all.isEmpty, "nothing Apple would refuse is sent")
        let uploaded = try await messaging.perform(
            .uploadMessage(id: "stay", message: ["header": "Stay a little longer", "body": "Your streak is 30 days."]),
            environment: .sandbox)
        XCTAssertEqual(uploaded["state"], "PENDING")
        XCTAssertEqual(fixture.apple.uploadedMessages.all.map(\.0), ["stay"])
        let listed = JSONValue.object(try await messaging.perform(.listMessages, environment: .sandbox))
        XCTAssertEqual(listed["messageIdentifiers"]?.arrayValue?.first?["messageIdentifier"], "stay")
        await assertThrowsAsync({ try await messaging.perform(.listMessages, environment: .production) }) {
            XCTAssertEqual(($0 as? ServiceError)?.code, "RETENTION_API_NOT_CONFIGURED", "Production is not enabled for this app")
        }
    }
}
