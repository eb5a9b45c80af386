import AppStore
import Entitlements
import JSON
import XCTest

/// The write path without HTTP: a batch through the in-memory store's `FactWriter`, its events
/// made by the domain's composer with a fixed clock and fixed ids.
final class EventComposerTests: XCTestCase {
    private let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    private func composer(endpoints: [EventEndpoint] = []) -> EventComposer {
        let ids = IdSource()
        return EventComposer(
            appId: "app",
            rules: SubscriberViewRules(
                environments: [.sandbox], products: ["pro.monthly": CatalogProduct(subscriptionGroup: "G1", entitlements: ["pro"])],
                billingRetryGrantsAccess: false, sandboxAccess: .all),
            endpoints: endpoints, clock: { 1_800_000_000_000 }, newId: { ids.next() })
    }

    private func purchase(signed: Int64, expires: Int64) -> FactBatch {
        var batch = FactBatch(appId: "app", environment: "Sandbox")
        let record = TransactionRecord(
            transactionId: "1000", originalTransactionId: "1000", productId: "pro.monthly", subscriptionGroupIdentifier: "G1",
            purchaseDate: expires - 2_592_000_000, expiresDate: expires, environment: "Sandbox", signedDate: signed,
            appAccountToken: token)
        batch.transactions = [(record, "jws")]
        return batch
    }

    func testAPurchaseWritesItsEventsWithTheInjectedClockAndIds() throws {
        let store = InMemoryFactStore()
        var batch = purchase(signed: 10, expires: 1_800_000_100_000)
        batch.eventWriter = composer(endpoints: [
            EventEndpoint(url: "https://hooks.example/all", environments: nil, types: nil),
            EventEndpoint(url: "https://hooks.example/renewals", environments: nil, types: ["RENEWAL"]),
        ])
        let applied = try store.write(batch)
        XCTAssertEqual(applied.outcome, .applied)
        XCTAssertEqual(applied.events.map(\.type), ["INITIAL_PURCHASE"])
        let event = try XCTUnwrap(applied.events.first)
        XCTAssertEqual(event.id, "event-1")
        XCTAssertEqual(event.createdAt, 1_800_000_000_000)
        XCTAssertEqual(event.endpoints, ["https://hooks.example/all"], "the renewals endpoint does not take a purchase")
        let body = try JSONParser.parse(event.body)
        XCTAssertEqual(body["id"], "event-1")
        XCTAssertEqual(body["sequence"], 1)
        XCTAssertEqual(body["appAccountToken"]?.stringValue, token)
        XCTAssertEqual(body["createdAt"], "2027-01-15T08:00:00.000Z")
        XCTAssertEqual(body["subscriber"]?["entitlements"]?["pro"]?["isActive"], true, "the subscriber as it is after the purchase")
        XCTAssertEqual(try store.events(appId: "app", after: 0, limit: 10).map(\.id), ["event-1"], "stored with its facts")
    }

    func testFactsAlreadyStoredCauseNoEventAndAnOlderCopyChangesNothing() throws {
        let store = InMemoryFactStore()
        var first = purchase(signed: 10, expires: 1_800_000_100_000)
        first.eventWriter = composer()
        XCTAssertEqual(try store.write(first).events.count, 1)
        var again = first
        again.eventWriter = composer()
        XCTAssertEqual(try store.write(again).events, [], "the same facts again")
        XCTAssertFalse(try store.write(again).wroteToOutbox)
    }
}

/// Ids `event-1`, `event-2`, … in the order asked for.
private final class IdSource: @unchecked Sendable {
    private var count = 0
    private let lock = NSLock()

    func next() -> String {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return "event-\(count)"
    }
}
