import Crypto
import Entitlements
import Foundation
import GooglePlay
import Instants
import JSON
import Synchronization
import TestSupport
import XCTest

@testable import Application

/// A Pub/Sub push of a real-time developer notification, without Entitle's HTTP: trusted only
/// with an OIDC token Google's keys (the stand-in's JWKS) verify for the configured push account,
/// then the purchase it names is read through the Developer API port and stored once.
final class GooglePushUseCaseTests: XCTestCase {
    /// What the fixture's configuration names for the push subscription.
    private let audience = "https://entitle.example.com/v1/notifications/google"
    private let pushAccount = "pubsub-push@example-project.iam.gserviceaccount.com"

    func testAPushIsTrustedOnlyWithGooglesTokenAndAppliedOnce() async throws {
        let google = RecordingGooglePlay()
        let files = try GooglePlayStandIn(packageName: "com.example.android")
        let fixture = try UseCaseFixture(google: google, googleFiles: files)
        let now = fixture.clock.milliseconds
        google.sell("g-1", to: fixture.token, now: now, expires: now + 86_400_000, acknowledged: true)
        let notification: JSONObject = [
            "version": "1.0", "packageName": "com.example.android", "eventTimeMillis": .string(String(now)),
            "subscriptionNotification": .object([
                "version": "1.0", "notificationType": 4, "purchaseToken": "g-1", "subscriptionId": "pro",
            ]),
        ]
        let body = JSONValue.object(GooglePlayStandIn.pushBody(notification, messageId: "m-1")).serializedBytes
        func push(_ authorization: String?) async throws -> GooglePlayService.PushOutcome {
            try await fixture.application.ingestGooglePush(authorization: authorization, body: body, receivedAt: fixture.clock.now())
        }

        let forged = try GooglePlayStandIn.rsaKey(in: makeTemporaryDirectory(), name: "forger")
        for refused in [
            nil, "Bearer " + (try files.pushToken(audience: "https://elsewhere.example.com/", email: pushAccount)),
            "Bearer " + (try files.pushToken(audience: audience)),  // the app's own service account, not the push account
            "Bearer "
                + (try files.pushToken(audience: audience, email: pushAccount, forgedWith: try .init(pemRepresentation: forged.privatePEM))),
        ] {
            await assertThrowsAsync({ try await push(refused) }) { XCTAssertTrue($0 is PubSubPushVerifier.Refusal, "\($0)") }
        }
        XCTAssertNil(try fixture.subscriber(), "nothing stored from a push that is not Google's")

        let token = "Bearer " + (try files.pushToken(audience: audience, email: pushAccount))
        let applied = try await push(token)
        XCTAssertEqual(applied, .applied)
        XCTAssertEqual(try fixture.subscriber()?["entitlements"]?["pro"]?["store"], "play_store")
        let again = try await push(token)
        XCTAssertEqual(again, .duplicate, "Pub/Sub's redelivery of the same message changes nothing")
        XCTAssertEqual(google.acknowledged.all, [], "Google says it is acknowledged already")
    }
}
