import AppStore
import Entitlements
import JSON
import TestSupport
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
        let store = try makeTemporaryStore()
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
        let store = try makeTemporaryStore()
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

/// The subscriber view is written once, into either builder: an event's bytes and a lookup's tree
/// cannot differ.
final class SubscriberViewWritingTests: XCTestCase {
    private let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    private func subscription(_ id: String, environment: String, product: String, expires: Int64) -> SubscriptionFacts {
        SubscriptionFacts(
            originalTransactionId: id, environment: environment, appAccountToken: token,
            transactions: [
                TransactionRecord(
                    transactionId: id, originalTransactionId: id, productId: product, subscriptionGroupIdentifier: "G1",
                    purchaseDate: 1_000, expiresDate: expires, environment: environment, signedDate: 1, appAccountToken: token)
            ], renewal: nil, signals: [])
    }

    private func play(_ purchaseToken: String, kind: PlayPurchase.Kind, base: String?) -> PlayPurchase {
        PlayPurchase(
            purchaseToken: purchaseToken, kind: kind, productId: "pro", basePlanId: base, offerId: nil, environment: "Production",
            googleState: "SUBSCRIPTION_STATE_ACTIVE", startTime: 1_000, expiryTime: 9_000_000, autoRenewing: true,
            linkedPurchaseToken: nil, acknowledged: true, appAccountToken: token, orderId: "GPA.1", voidedAt: nil, readAt: 1_000)
    }

    private func subscriber() -> SubscriberFacts {
        SubscriberFacts(
            appAccountToken: token,
            environments: [
                ("Production", [subscription("1000", environment: "Production", product: "pro.monthly", expires: 9_000_000)]),
                (
                    "Sandbox",
                    [
                        subscription("2000", environment: "Sandbox", product: "pro.monthly", expires: 2_000),
                        subscription("3000", environment: "Sandbox", product: "pro.yearly", expires: 9_000_000),
                    ]
                ),
            ],
            transfers: [("Sandbox", LinkTransfer(originalTransactionId: "4000", from: token, to: "other", at: 1_500))],
            grants: [
                PromotionalGrant(
                    id: "g1", appAccountToken: token, environment: "Sandbox", entitlement: "support", startsAt: 1_000,
                    expiresDate: 9_000_000, reason: "goodwill", grantedBy: "agent")
            ],
            playPurchases: [
                play("p1", kind: .subscription, base: "monthly"), play("p2", kind: .subscription, base: "monthly"),
                play("p3", kind: .product, base: nil),
            ])
    }

    private func rules(_ environments: [AppStoreEnvironment]) -> SubscriberViewRules {
        SubscriberViewRules(
            environments: environments,
            products: [
                "pro.monthly": CatalogProduct(subscriptionGroup: "G1", entitlements: ["pro"]),
                "pro.yearly": CatalogProduct(subscriptionGroup: "G1", entitlements: ["pro"]),
            ], billingRetryGrantsAccess: false, sandboxAccess: .all)
    }

    func testTheWrittenViewIsTheTreeByteForByte() throws {
        for environments in [[AppStoreEnvironment.production, .sandbox], [.sandbox]] {
            let rules = rules(environments)
            var writer = JSONObjectWriter()
            rules.write(view: subscriber(), at: 5_000, into: &writer)
            let tree = rules.view(of: subscriber(), at: 5_000)
            XCTAssertEqual(String(decoding: writer.finish(), as: UTF8.self), JSONValue.object(tree).serializedString, "\(environments)")
            XCTAssertNotNil(tree["transfers"], "the move is the answer's last member")
        }
    }

    func testAProductInTwoEnvironmentsIsListedOnceAndARepeatedPlayPlanByItsLastPurchase() throws {
        let view = rules([.production, .sandbox]).view(of: subscriber(), at: 5_000)
        let subscriptions = try XCTUnwrap(view["subscriptions"]?.objectValue)
        XCTAssertEqual(subscriptions.keys, ["pro.monthly", "pro.yearly", "googlePlay:pro:monthly"])
        XCTAssertEqual(subscriptions["pro.monthly"]?["environment"], "Production", "the active one of the two")
        XCTAssertEqual(subscriptions["googlePlay:pro:monthly"]?["purchaseToken"], "p2")
        XCTAssertEqual(view["nonSubscriptions"]?.arrayValue?.count, 1, "the Play product")
    }
}
