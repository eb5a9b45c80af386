import Entitlements
import Foundation
import Instants
import JSON
import TestSupport
import XCTest

@testable import Application

/// The event feed and webhook deliveries, without Entitle's HTTP: a notification's events are in
/// the feed in order, delivered signed to a real HTTPS receiver, listed with their outcome, and a
/// delivery support retries is delivered again.
final class EventsUseCaseTests: XCTestCase {
    func testANotificationsEventsAreListedDeliveredAndRetried() throws {
        let receiver = try WebhookReceiver()
        let fixture = try UseCaseFixture(webhooks: receiver)
        let events = fixture.services.events
        let posted = try fixture.notification("n-1", type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        XCTAssertEqual(
            try fixture.answer {
                fixture.application.ingestNotification(signedPayload: posted, receivedAt: fixture.clock.now(), completion: $0)
            }, .applied)

        let page = JSONValue.object(try fixture.answer { events.events(after: 0, limit: 10, completion: $0) })
        let listed = page["events"]?.arrayValue ?? []
        XCTAssertFalse(listed.isEmpty, "\(page)")
        XCTAssertEqual(listed.first?["appAccountToken"]?.stringValue, fixture.token, "\(page)")
        let eventId = try XCTUnwrap(listed.first?["id"]?.stringValue)
        XCTAssertEqual(
            JSONValue.object(try XCTUnwrap(try fixture.answer { events.event(id: eventId, completion: $0) }))["id"]?.stringValue, eventId)
        let next = JSONValue.object(
            try fixture.answer { events.events(after: page["nextAfter"]?.int64Value ?? 0, limit: 10, completion: $0) })
        XCTAssertEqual(next["events"]?.arrayValue?.count, 0, "the feed goes on after its last event")

        let pending = try deliveries(fixture, .pending)
        XCTAssertEqual(pending.count, listed.count, "one delivery an event for the one endpoint")
        fixture.application.startDeliveries()
        defer { fixture.application.stopDeliveries() }
        let received = receiver.wait(for: "/hooks") { $0.count >= listed.count }
        XCTAssertEqual(received.count, listed.count)
        XCTAssertTrue(received.allSatisfy(\.signatureValid), "signed with the endpoint's secret (Standard Webhooks)")
        XCTAssertEqual(received.first?.json["id"]?.stringValue, eventId)
        try waitFor { try self.deliveries(fixture, .delivered).count == listed.count }

        let deliveryId = try XCTUnwrap(try deliveries(fixture, .delivered).first?["id"]?.stringValue)
        let rearmed = JSONValue.object(
            try XCTUnwrap(try fixture.answer { events.retry(deliveryId: deliveryId, now: fixture.clock.now(), completion: $0) }))
        XCTAssertEqual(rearmed["status"], "pending", "support's retry makes it due now")
        _ = receiver.wait(for: "/hooks") { $0.count > listed.count }
        XCTAssertEqual(receiver.deliveries("/hooks").filter { $0.json["id"]?.stringValue == eventId }.count, 2, "delivered again")
        XCTAssertNil(try fixture.answer { events.retry(deliveryId: "no-such-delivery", now: fixture.clock.now(), completion: $0) })
    }

    func testATestEventNeedsAnEndpoint() throws {
        let fixture = try UseCaseFixture()
        XCTAssertThrowsError(try fixture.answer { fixture.services.events.sendTest(now: fixture.clock.now(), completion: $0) }) {
            XCTAssertEqual(($0 as? ServiceError)?.code, "NO_WEBHOOKS")
        }
    }

    private func deliveries(_ fixture: UseCaseFixture, _ status: WebhookDelivery.Status) throws -> [JSONValue] {
        let answer = try fixture.answer { fixture.services.events.deliveries(status: status, limit: 100, completion: $0) }
        return JSONValue.object(answer)["deliveries"]?.arrayValue ?? []
    }

    private func waitFor(_ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while try !condition() {
            guard Date() < deadline else { return XCTFail("not within 20 s") }
            usleep(50_000)
        }
    }
}
