import Entitlements
import Foundation
import JSON
import TestSupport
import XCTest

@testable import Storage

/// The store contract, run here on SQLite (a file in a fresh folder per test) and again on
/// PostgreSQL by `PostgreSQLFactStoreTests`, which makes its stores instead: both stores that
/// ship answer every test the same. (It runs on SQLite itself, rather than in a subclass, so that
/// no test is reported skipped for a base class with no store: a skip here is a real one.)
class FactStoreContract: XCTestCase {
    private var folder: URL?

    override func tearDownWithError() throws { if let folder { try? FileManager.default.removeItem(at: folder) } }

    private var sqlitePath: String {
        get throws {
            if folder == nil { folder = try makeTemporaryDirectory("entitle-db") }
            return try XCTUnwrap(folder).appendingPathComponent("entitle.sqlite3").path
        }
    }

    func makeStore() throws -> any FactStore { try SQLiteFactStore(path: try sqlitePath) }

    /// The database `makeStore()` last made, as the version before the figures' bucket sums left
    /// it (no bucket sums, its moments kept), opened again so that it migrates.
    func migratedFromBeforeTheBucketSums() throws -> any FactStore {
        let path = try sqlitePath
        let database = try SQLiteDatabase(path: path)
        // The tables of the migrations after it go too: migrating runs them again.
        try database.execute(
            "DROP TABLE metric_buckets; DROP TABLE app_downloads; DROP TABLE customer_attributes; DROP TABLE experiments; "
                + "DROP TABLE experiment_assignments; DROP TABLE paywall_events; PRAGMA user_version = 17")
        return try SQLiteFactStore(path: path)
    }

    /// Runs `sql` on the database `makeStore()` last made, behind the store's back.
    func spoil(_ sql: String) throws { try SQLiteDatabase(path: try sqlitePath).execute(sql) }

    private func transaction(
        _ id: String, original: String = "1000", signed: Int64, revoked: Int64? = nil,
        token: String? = nil, environment: String = "Sandbox"
    ) -> TransactionRecord {
        TransactionRecord(
            transactionId: id, originalTransactionId: original, productId: "pro.monthly", subscriptionGroupIdentifier: "G1",
            purchaseDate: 1_000, expiresDate: 2_000, revocationDate: revoked, environment: environment,
            signedDate: signed, appAccountToken: token)
    }

    private func batch(
        _ transactions: [TransactionRecord], notification: String? = nil, link: (String, String)? = nil,
        environment: String = "Sandbox"
    ) -> FactBatch {
        var batch = FactBatch(appId: "app", environment: environment)
        batch.transactions = transactions.map { ($0, "jws-\($0.transactionId)-\($0.signedDate)") }
        if let notification {
            batch.notification = StoredNotification(
                notificationUUID: notification, appId: "app", environment: environment,
                notificationType: "DID_RENEW", subtype: nil, signedDate: 5, receivedAt: 6,
                originalTransactionId: transactions.first?.originalTransactionId, jws: "n")
        }
        if let link { batch.requestedLink = (link.0, link.1) }
        return batch
    }

    func testHealthCheckAnswers() throws {
        let store = try makeStore()
        XCTAssertNoThrow(try store.checkHealth())
    }

    func testNewestSignedCopyWins() throws {
        let store = try makeStore()
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 10, revoked: 9)])), .applied)
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 5)])), .applied, "an older copy is accepted and ignored")
        XCTAssertEqual(
            try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.transactions.first?.revocationDate, 9)
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 20)])), .applied)
        XCTAssertNil(
            try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.transactions.first?.revocationDate)
    }

    /// A partial refund's type and percentage survive the store, read alone and with the subscriber.
    func testAPartialRefundIsStoredWhole() throws {
        let store = try makeStore()
        var refunded = transaction("1", signed: 10, revoked: 9, token: "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        refunded.revocationType = "REFUND_PRORATED"
        refunded.revocationPercentage = 33_333
        refunded.price = 9_990
        refunded.currency = "EUR"
        refunded.offerPeriod = "P1M"
        XCTAssertEqual(try store.apply(batch([refunded], link: ("1000", "7e3fb20b-4cdb-47cc-936d-99d65f608138"))), .applied)
        let read = try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.transactions.first
        XCTAssertEqual(read, refunded)
        XCTAssertEqual(read?.refundedMilliunits, 3_330, "a third of 9.99")
        let whole = try store.subscriber(
            appId: "app", environments: ["Sandbox"], appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        XCTAssertEqual(whole.environments.first?.facts.first?.transactions.first, refunded)
    }

    /// A 12-month commitment billed monthly, both sides, survives the store (read alone and with
    /// the subscriber), and a subscription without one reads without one.
    func testACommitmentIsStoredWhole() throws {
        let store = try makeStore()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        var monthly = transaction("1", signed: 10, token: token)
        monthly.billingPlanType = "MONTHLY"
        monthly.commitment = TransactionCommitment(
            billingPeriodNumber: 3, totalBillingPeriods: 12, commitmentExpiresDate: 1_698_150_000_000, commitmentPrice: 119_880)
        var batch = batch([monthly], link: ("1000", token))
        let renewal = RenewalRecord(
            originalTransactionId: "1000", productId: "p", autoRenewProductId: "p", signedDate: 10, renewalBillingPlanType: "MONTHLY",
            commitment: RenewalCommitment(
                autoRenewStatus: 0, autoRenewProductId: "p.yearly", renewalBillingPlanType: "BILLED_UPFRONT",
                renewalDate: 1_698_150_000_000, renewalPrice: 99_990))
        batch.renewal = (renewal, "renewal-jws")
        XCTAssertEqual(try store.apply(batch), .applied)
        let read = try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")
        XCTAssertEqual(read?.transactions.first, monthly)
        XCTAssertEqual(read?.renewal, renewal)
        let whole = try store.subscriber(appId: "app", environments: ["Sandbox"], appAccountToken: token)
        XCTAssertEqual(whole.environments.first?.facts.first?.transactions.first, monthly)
        XCTAssertEqual(whole.environments.first?.facts.first?.renewal, renewal)
        XCTAssertEqual(try store.apply(self.batch([transaction("2", original: "2000", signed: 10)])), .applied)
        let plain = try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "2000")?.transactions.first
        XCTAssertNil(plain?.commitment)
        XCTAssertNil(plain?.billingPlanType)
    }

    /// Finish Transaction is queued for each one-time purchase a batch stores for the first time
    /// (not a subscription, not one refunded, not one stored before), beside a Set App Account
    /// Token call naming the same id: the queue tells them apart by kind.
    func testFinishCallsAreQueuedForNewOneTimePurchasesOnly() throws {
        let store = try makeStore()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        func purchase(_ id: String, type: String, revoked: Int64? = nil) -> TransactionRecord {
            TransactionRecord(
                transactionId: id, originalTransactionId: id, productId: "coins", type: type, purchaseDate: 1_000,
                revocationDate: revoked, signedDate: 10)
        }
        var first = batch(
            [
                purchase("1000", type: "Consumable"), purchase("2000", type: "Non-Renewing Subscription"),
                purchase("3000", type: "Auto-Renewable Subscription"), purchase("4000", type: "Non-Consumable", revoked: 5),
            ], link: ("1000", token))
        first.finishesPurchases = true
        first.queuesTokenCall = true
        first.requestedAt = 100
        XCTAssertEqual(try store.apply(first), .applied)
        let due = try store.dueAppleCalls(appId: "app", now: 100, limit: 10)
        XCTAssertEqual(
            Set(due.map { "\($0.kind.rawValue) \($0.transactionId)" }),
            ["set_app_account_token 1000", "finish_transaction 1000", "finish_transaction 2000"])
        for call in due {
            var done = FactBatch(appId: "app", environment: "Sandbox")
            done.appleCallOutcome = (call.kind, call.transactionId, nil)
            XCTAssertEqual(try store.apply(done), .applied)
        }
        var again = batch([purchase("1000", type: "Consumable"), purchase("5000", type: "Non-Consumable")])
        again.finishesPurchases = true
        again.requestedAt = 200
        XCTAssertEqual(try store.apply(again), .applied)
        XCTAssertEqual(
            try store.dueAppleCalls(appId: "app", now: 200, limit: 10),
            [PendingAppleCall(appId: "app", environment: "Sandbox", kind: .finishTransaction, transactionId: "5000")],
            "a purchase stored before is not finished again")
    }

    /// Refund reviews' facts on every store: usage in order, an override set and removed, a request
    /// stored once, brought up to date, found when due, and given the store's decision once.
    func testRefundFactsAreStoredWhole() throws {
        let store = try makeStore()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        func usage(_ id: String, at: Int64) -> UsageRecord {
            UsageRecord(
                id: id, appAccountToken: token, transactionId: "1", purchaseToken: nil, consumedPercent: 12.5, delivered: false,
                undeliveredReason: "WRONG_ITEM", events: [UsageRecord.Event(at: 5, description: "opened")], recordedAt: at,
                recordedBy: "server")
        }
        var first = FactBatch(appId: "app", environment: "Sandbox")
        first.usage = [usage("u-2", at: 20), usage("u-1", at: 10)]
        first.refundOverride = (
            token, RefundOverride(appAccountToken: token, override: "ALWAYS_GRANT", reason: "vip", setBy: "support", setAt: 7)
        )
        var request = RefundRequest(
            id: "n-1", store: "app_store", environment: "Sandbox", appAccountToken: token, transactionId: "1", originalTransactionId: "1",
            reason: "LEGAL", requestedAt: 100, deadline: 100 + RefundRequest.appleWindow)
        first.refundRequest = request
        XCTAssertEqual(try store.apply(first), .applied)
        XCTAssertEqual(try store.usage(appId: "app", appAccountToken: token), [usage("u-1", at: 10), usage("u-2", at: 20)])
        // A usage record is a fact: one with a stored id changes nothing (not its body, not when
        // it was recorded); records of one instant are listed by id.
        var rewrite = FactBatch(appId: "app", environment: "Sandbox")
        var changed = usage("u-1", at: 30)
        changed.consumedPercent = 99
        rewrite.usage = [changed, usage("u-0", at: 20), usage("u-3", at: 20)]
        XCTAssertEqual(try store.apply(rewrite), .applied)
        XCTAssertEqual(
            try store.usage(appId: "app", appAccountToken: token),
            [usage("u-1", at: 10), usage("u-0", at: 20), usage("u-2", at: 20), usage("u-3", at: 20)])
        XCTAssertEqual(try store.refundOverride(appId: "app", appAccountToken: token)?.override, "ALWAYS_GRANT")
        XCTAssertEqual(try store.dueRefundRequests(appId: "app", now: 99, limit: 10), [])
        XCTAssertEqual(try store.dueRefundRequests(appId: "app", now: 100, limit: 10), [request])

        var again = FactBatch(appId: "app", environment: "Sandbox")
        var other = request
        other.reason = "OTHER"
        again.refundRequest = other
        again.refundOverride = (token, nil)
        XCTAssertEqual(try store.apply(again), .applied)
        XCTAssertEqual(try store.refundRequests(appId: "app", limit: 10).map(\.reason), ["LEGAL"], "stored once")
        XCTAssertNil(try store.refundOverride(appId: "app", appAccountToken: token))

        request.status = .sent
        request.attempts = 1
        request.answer = ["refundPreference": "GRANT_FULL"]
        request.decidedBy = "override"
        request.sentAt = 150
        var sent = FactBatch(appId: "app", environment: "Sandbox")
        sent.refundRequestUpdate = request
        sent.refundOutcome = ("1", nil, "DECLINED", 200)
        XCTAssertEqual(try store.apply(sent), .applied)
        var decided = FactBatch(appId: "app", environment: "Sandbox")
        decided.refundOutcome = ("1", nil, "REFUNDED", 300)
        XCTAssertEqual(try store.apply(decided), .applied)
        var expected = request
        (expected.outcome, expected.outcomeAt) = ("DECLINED", 200)
        XCTAssertEqual(try store.refundRequests(appId: "app", limit: 10), [expected], "the first decision stands")
        XCTAssertEqual(try store.dueRefundRequests(appId: "app", now: .max, limit: 10), [], "answered: no longer due")
    }

    /// Rows whose stored JSON no longer parses are left out of the reads and reported once each,
    /// a pending refund request with its deadline (the retention record with its request id).
    func testUnreadableRowsAreReportedNotDroppedInSilence() throws {
        let store = try makeStore()
        let record = RetentionRecord(
            requestIdentifier: "r-1", environment: "Sandbox", originalTransactionId: "1000", appAccountToken: nil, productId: "pro.monthly",
            locale: "en-US", answeredAt: 1_000, answer: .message(messageIdentifier: "m"), offerIdentifier: nil, rule: "loyal",
            response: [:])
        var batch = FactBatch(appId: "app", environment: "Sandbox")
        batch.retention = record
        batch.refundRequest = RefundRequest(
            id: "g-1", store: MetricsSubscription.playStore, environment: "Sandbox", appAccountToken: nil, transactionId: nil,
            originalTransactionId: nil, reason: "OTHER", requestedAt: 500, deadline: 500 + RefundRequest.googleWindow)
        XCTAssertEqual(try store.apply(batch), .applied)
        try spoil("UPDATE retention_records SET body = 'nonsense'; UPDATE refund_requests SET body = '{\"id\": 7}'")
        let told = Told()
        store.unreadableRows.observe { told.append($0) }
        XCTAssertNil(try store.retentionRecord(appId: "app", requestIdentifier: "r-1"))
        XCTAssertEqual(try store.retentionRecords(appId: "app", environment: "Sandbox", originalTransactionId: "1000"), [])
        XCTAssertEqual(try store.dueRefundRequests(appId: "app", now: .max, limit: 10), [])
        let expected = [
            UnreadableRow(table: "retention_records", key: "r-1"),
            UnreadableRow(table: "refund_requests", key: "g-1", deadline: 500 + RefundRequest.googleWindow),
        ]
        XCTAssertEqual(store.unreadableRows.rows, expected)
        XCTAssertEqual(told.all, expected, "each told once, however often read")
    }

    /// Retention answers on every store: once per request identifier, by subscription, and the
    /// writer's attribution marking the one a later purchase saved.
    func testRetentionAnswersAreStoredAndSaved() throws {
        let store = try makeStore()
        let record = RetentionRecord(
            requestIdentifier: "r-1", environment: "Sandbox", originalTransactionId: "1000", appAccountToken: nil, productId: "pro.monthly",
            locale: "en-US", answeredAt: 1_000, answer: .promotionalOffer(messageIdentifier: "m", offerId: "o"), offerIdentifier: "pro_o",
            rule: "loyal", response: ["promotionalOffer": .object(["messageIdentifier": "m"])])
        var answered = FactBatch(appId: "app", environment: "Sandbox")
        answered.retention = record
        XCTAssertEqual(try store.apply(answered), .applied)
        XCTAssertEqual(try store.apply(answered), .retentionAlreadyAnswered, "the same request again changes nothing")
        XCTAssertEqual(try store.retentionRecord(appId: "app", requestIdentifier: "r-1"), record)
        // Another request's offer within the cooldown, decided before the first was written, is refused.
        var second = record
        second.requestIdentifier = "r-2"
        second.answeredAt = 2_000
        var racing = FactBatch(appId: "app", environment: "Sandbox")
        racing.retention = second
        racing.retentionOfferCooldown = 30 * 86_400_000
        XCTAssertEqual(try store.apply(racing), .retentionOfferCooling)
        XCTAssertNil(try store.retentionRecord(appId: "app", requestIdentifier: "r-2"), "nothing written")
        XCTAssertEqual(try store.retentionRecords(appId: "app", environment: "Sandbox", originalTransactionId: "1000"), [record])

        struct Window: EventWriting {
            var environments: [String] { ["Sandbox"] }
            var retentionWindow: Int64? { 7 * 86_400_000 }
            func events(for change: FactChange, firstSequence: Int64) -> [OutboxEvent] { [] }
        }
        var redeemed = TransactionRecord(
            transactionId: "1001", originalTransactionId: "1000", productId: "pro.monthly", subscriptionGroupIdentifier: "G1",
            purchaseDate: 2_000, expiresDate: 9_000, signedDate: 2_000)
        redeemed.offerType = 2
        redeemed.offerIdentifier = "pro_o"
        var purchase = FactBatch(appId: "app", environment: "Sandbox")
        purchase.transactions = [(redeemed, "jws")]
        purchase.eventWriter = Window()
        XCTAssertEqual(try store.apply(purchase), .applied)
        let saved = try store.retentionRecord(appId: "app", requestIdentifier: "r-1")
        XCTAssertEqual(saved?.savedAt, 2_000)
        XCTAssertEqual(saved?.savedBy, "offerRedeemed")
    }

    func testNotificationsAreIdempotent() throws {
        let store = try makeStore()
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 10)], notification: "n-1")), .applied)
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 30, revoked: 29)], notification: "n-1")), .duplicateNotification)
        XCTAssertNil(
            try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.transactions.first?.revocationDate,
            "nothing of a duplicate is applied")
        XCTAssertEqual(try store.apply(batch([], notification: "n-2")), .applied)
        let stored = try store.notifications(appId: "app", limit: 10, before: nil)
        XCTAssertEqual(stored.map(\.notificationUUID), ["n-2", "n-1"], "newest first")
        XCTAssertEqual(try store.notifications(appId: "app", limit: 10, before: stored[0].sequence).map(\.notificationUUID), ["n-1"])
        XCTAssertEqual(try store.notifications(appId: "other", limit: 10, before: nil), [])
    }

    func testLinksAndConflicts() throws {
        let store = try makeStore()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138", other = "11111111-2222-4333-8444-555555555555"
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 10)], link: ("1000", token))), .applied)
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", appAccountToken: token).map(\.originalTransactionId), ["1000"])
        XCTAssertEqual(try store.apply(batch([transaction("2", signed: 11)], link: ("1000", other))), .linkConflict(existingToken: token))
        XCTAssertNil(
            try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?
                .transactions.first { $0.transactionId == "2" }, "a conflict changes nothing")
        // A token inside a signed transaction links by itself.
        XCTAssertEqual(try store.apply(batch([transaction("9", original: "9000", signed: 12, token: other)])), .applied)
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", appAccountToken: other).map(\.originalTransactionId), ["9000"])
    }

    func testAnOlderCopyWithAnotherTokenDoesNotMoveTheLink() throws {
        let store = try makeStore()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138", other = "11111111-2222-4333-8444-555555555555"
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 20, token: token)])), .applied)
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 10, token: other)])), .applied)
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.appAccountToken, token)
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", appAccountToken: other), [])
        // A newer copy with another token is the subscription's newest signed word: it moves the link.
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 30, token: other)])), .applied)
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.appAccountToken, other)
    }

    func testATransferMovesTheLinkAndIsRecorded() throws {
        let store = try makeStore()
        let first = "7e3fb20b-4cdb-47cc-936d-99d65f608138", second = "11111111-2222-4333-8444-555555555555"
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 10)], link: ("1000", first))), .applied)
        var moving = batch([transaction("2", signed: 11)], link: ("1000", second))
        moving.transfersLink = true
        moving.requestedAt = 77
        XCTAssertEqual(try store.apply(moving), .transferred(from: first))
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.appAccountToken, second)
        let move = LinkTransfer(originalTransactionId: "1000", from: first, to: second, at: 77)
        XCTAssertEqual(try store.linkTransfers(appId: "app", environment: "Sandbox", appAccountToken: first), [move])
        XCTAssertEqual(try store.linkTransfers(appId: "app", environment: "Sandbox", appAccountToken: second), [move])
        XCTAssertEqual(
            try store.apply(batch([transaction("3", signed: 12)], link: ("1000", first))), .linkConflict(existingToken: second),
            "without transfersLink a different token is still refused")
    }

    /// A subscriber read at once (one statement on PostgreSQL) holds what the reads one by one do.
    func testASubscriberIsReadWholeAsItsPartsAre() throws {
        let store = try makeStore()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138", other = "11111111-2222-4333-8444-555555555555"
        XCTAssertEqual(
            try store.apply(batch([transaction("1", signed: 10), transaction("2", signed: 11)], link: ("1000", token))), .applied)
        var renewal = batch([transaction("5", original: "2000", signed: 12)], link: ("2000", token))
        renewal.renewal = (RenewalRecord(originalTransactionId: "2000", autoRenewStatus: 0, signedDate: 12), "r")
        renewal.signals = [("2000", SubscriptionSignal(.autoRenewDisabled, at: 12))]
        XCTAssertEqual(try store.apply(renewal), .applied)
        XCTAssertEqual(try store.apply(batch([transaction("7", original: "3000", signed: 13)], link: ("3000", other))), .applied)
        var moving = batch([], link: ("3000", token))
        moving.transfersLink = true
        moving.requestedAt = 77
        XCTAssertEqual(try store.apply(moving), .transferred(from: other))
        XCTAssertEqual(
            try store.apply(
                batch(
                    [transaction("9", original: "4000", signed: 14, environment: "Production")], link: ("4000", token),
                    environment: "Production")),
            .applied)
        var grant = FactBatch(appId: "app", environment: "Sandbox")
        grant.grant = PromotionalGrant(
            id: "g1", appAccountToken: token, environment: "Sandbox", entitlement: "pro", startsAt: 1, expiresDate: 9, reason: nil,
            grantedBy: "support")
        XCTAssertEqual(try store.apply(grant), .applied)
        var play = FactBatch(appId: "app", environment: "Production")
        play.playPurchases = [
            (
                PlayPurchase(
                    purchaseToken: "p1", kind: .subscription, productId: "pro", basePlanId: "monthly", offerId: nil,
                    environment: "Production", googleState: "SUBSCRIPTION_STATE_ACTIVE", startTime: 5, expiryTime: 9, autoRenewing: true,
                    linkedPurchaseToken: nil, acknowledged: true, appAccountToken: token, orderId: nil, voidedAt: nil, readAt: 5), "{}"
            )
        ]
        XCTAssertEqual(try store.apply(play), .applied)

        let environments = ["Production", "Sandbox"]
        let whole = try store.subscriber(appId: "app", environments: environments, appAccountToken: token)
        for (environment, facts) in whole.environments {
            XCTAssertEqual(facts, try store.facts(appId: "app", environment: environment, appAccountToken: token), environment)
        }
        XCTAssertEqual(whole.environments.map(\.environment), environments)
        XCTAssertEqual(whole.environments.map { $0.facts.map(\.originalTransactionId) }, [["4000"], ["1000", "2000", "3000"]])
        XCTAssertEqual(whole.transfers.map(\.transfer), [LinkTransfer(originalTransactionId: "3000", from: other, to: token, at: 77)])
        XCTAssertEqual(whole.grants, try store.grants(appId: "app", environment: "Sandbox", appAccountToken: token))
        XCTAssertEqual(whole.playPurchases, try store.playPurchases(appId: "app", appAccountToken: token))
        XCTAssertEqual(whole.playPurchases.map(\.purchaseToken), ["p1"])
    }

    func testTokenCallsAreQueuedWithTheLinkUntilDone() throws {
        let store = try makeStore()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        var linking = batch([transaction("1", signed: 10)], link: ("1000", token))
        linking.queuesTokenCall = true
        linking.requestedAt = 100
        XCTAssertEqual(try store.apply(linking), .applied)
        let call = PendingAppleCall(
            appId: "app", environment: "Sandbox", kind: .setAppAccountToken, transactionId: "1000", appAccountToken: token)
        XCTAssertEqual(try store.dueAppleCalls(appId: "app", now: 99, limit: 10), [], "not due before it was queued")
        XCTAssertEqual(try store.dueAppleCalls(appId: "app", now: 100, limit: 10), [call])
        var retry = FactBatch(appId: "app", environment: "Sandbox")
        retry.appleCallOutcome = (.setAppAccountToken, "1000", 500)
        XCTAssertEqual(try store.apply(retry), .applied)
        XCTAssertEqual(try store.dueAppleCalls(appId: "app", now: 499, limit: 10), [], "deferred")
        XCTAssertEqual(try store.dueAppleCalls(appId: "app", now: 500, limit: 10).map(\.attempts), [1])
        var done = FactBatch(appId: "app", environment: "Sandbox")
        done.appleCallOutcome = (.setAppAccountToken, "1000", nil)
        XCTAssertEqual(try store.apply(done), .applied)
        XCTAssertEqual(try store.dueAppleCalls(appId: "app", now: .max, limit: 10), [])
        XCTAssertEqual(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")?.appAccountToken, token)
    }

    func testSubscriptionsAreFoundByTheirAppTransactionId() throws {
        let store = try makeStore()
        var first = transaction("1", signed: 10)
        first.appTransactionId = "705"
        var other = transaction("9", original: "9000", signed: 11)
        other.appTransactionId = "705"
        XCTAssertEqual(try store.apply(batch([first, other])), .applied)
        var renewal = batch([], environment: "Sandbox")
        renewal.renewal = (RenewalRecord(originalTransactionId: "8000", signedDate: 12, appTransactionId: "706"), "r")
        XCTAssertEqual(try store.apply(renewal), .applied)
        XCTAssertEqual(try store.originalTransactionIds(appId: "app", environment: "Sandbox", appTransactionId: "705"), ["1000", "9000"])
        XCTAssertEqual(try store.originalTransactionIds(appId: "app", environment: "Sandbox", appTransactionId: "706"), ["8000"])
        XCTAssertEqual(try store.originalTransactionIds(appId: "app", environment: "Production", appTransactionId: "705"), [])
    }

    func testSyncRevisionIsStoredWithItsFacts() throws {
        let store = try makeStore()
        var sync = batch([transaction("1", signed: 10)])
        sync.syncRevision = ("1000", "rev-1")
        XCTAssertEqual(try store.apply(sync), .applied)
        XCTAssertEqual(try store.syncRevision(appId: "app", environment: "Sandbox", originalTransactionId: "1000"), "rev-1")
        XCTAssertNil(try store.syncRevision(appId: "app", environment: "Production", originalTransactionId: "1000"))
    }

    func testEnvironmentsAreSeparate() throws {
        let store = try makeStore()
        XCTAssertEqual(try store.apply(batch([transaction("1", signed: 10, environment: "Sandbox")])), .applied)
        XCTAssertNil(try store.facts(appId: "app", environment: "Production", originalTransactionId: "1000"))
    }

    func testRenewalAndSignals() throws {
        let store = try makeStore()
        var first = batch([transaction("1", signed: 10)])
        first.renewal = (
            RenewalRecord(
                originalTransactionId: "1000", autoRenewStatus: 1, eligibleWinBackOfferIds: ["wb1", "wb2"],
                signedDate: 10), "r1"
        )
        first.signals = [("1000", SubscriptionSignal(.autoRenewDisabled, at: 7))]
        XCTAssertEqual(try store.apply(first), .applied)
        var older = batch([])
        older.renewal = (RenewalRecord(originalTransactionId: "1000", autoRenewStatus: 0, signedDate: 5), "r0")
        XCTAssertEqual(try store.apply(older), .applied)
        let facts = try XCTUnwrap(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000"))
        XCTAssertEqual(facts.renewal?.autoRenewStatus, 1, "the newest renewal info wins")
        XCTAssertEqual(facts.renewal?.eligibleWinBackOfferIds, ["wb1", "wb2"])
        XCTAssertEqual(facts.signals, [SubscriptionSignal(.autoRenewDisabled, at: 7)])
    }

    /// The rules that once differed between the stores (PostgreSQL's signals were unique,
    /// SQLite's were not), now `FactWriter`'s on every store.
    func testASignalStoredOnceIsNotStoredAgain() throws {
        let store = try makeStore()
        var first = batch([transaction("1", signed: 10)])
        first.signals = [("1000", SubscriptionSignal(.billingIssue, at: 7))]
        XCTAssertEqual(try store.apply(first), .applied)
        var again = batch([])
        again.signals = [("1000", SubscriptionSignal(.billingIssue, at: 7)), ("1000", SubscriptionSignal(.billingIssue, at: 7))]
        XCTAssertEqual(try store.apply(again), .applied)
        let facts = try XCTUnwrap(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000"))
        XCTAssertEqual(facts.signals, [SubscriptionSignal(.billingIssue, at: 7)])
    }

    /// Renewal info that arrives before any transaction of its subscription is merged like any
    /// other: an older copy afterwards does not replace it.
    func testRenewalInfoBeforeItsTransactionsStillKeepsTheNewest() throws {
        let store = try makeStore()
        var early = batch([])
        early.renewal = (RenewalRecord(originalTransactionId: "1000", autoRenewStatus: 1, signedDate: 10), "r10")
        XCTAssertEqual(try store.apply(early), .applied)
        var older = batch([transaction("1", signed: 3)])
        older.renewal = (RenewalRecord(originalTransactionId: "1000", autoRenewStatus: 0, signedDate: 5), "r5")
        XCTAssertEqual(try store.apply(older), .applied)
        let facts = try XCTUnwrap(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000"))
        XCTAssertEqual(facts.renewal?.signedDate, 10)
        let signed = try store.signedFacts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")
        XCTAssertEqual(Set(signed.map(\.jws)), ["jws-1-3", "r10"], "the stored signed text is the newest copy's")
    }

    /// A purchase Google waits to see acknowledged is queued with it, retried, and leaves the
    /// queue once stored acknowledged; the age of the wait is what the day-old alarm counts.
    func testAcknowledgementsAreQueuedWithThePurchaseUntilStoredAcknowledged() throws {
        let store = try makeStore()
        let day: Int64 = 86_400_000
        var purchase = PlayPurchase(
            purchaseToken: "p1", kind: .subscription, productId: "pro", basePlanId: "monthly", offerId: nil, environment: "Production",
            googleState: "SUBSCRIPTION_STATE_ACTIVE", startTime: 1_000, expiryTime: 9_000, autoRenewing: true, linkedPurchaseToken: nil,
            acknowledged: false, appAccountToken: nil, orderId: "GPA.1", voidedAt: nil, readAt: 10)
        var stored = FactBatch(appId: "app", environment: "Production")
        stored.playPurchases = [(purchase, "{}")]
        stored.requestedAt = 2 * day
        XCTAssertEqual(try store.apply(stored), .applied)
        XCTAssertEqual(try store.dueAcknowledgements(appId: "app", now: 2 * day, limit: 10).map(\.purchaseToken), ["p1"])
        XCTAssertEqual(try store.pendingAcknowledgements(appId: "app", queuedBefore: 3 * day), 1)
        XCTAssertEqual(try store.pendingAcknowledgements(appId: "app", queuedBefore: 2 * day), 0, "not waiting before it was stored")
        XCTAssertEqual(try store.apply(stored), .applied, "the same read again")
        var retry = FactBatch(appId: "app", environment: "Production")
        retry.acknowledgementOutcome = ("p1", 2 * day + 60_000)
        XCTAssertEqual(try store.apply(retry), .applied)
        XCTAssertEqual(try store.dueAcknowledgements(appId: "app", now: 2 * day, limit: 10), [], "not due before its retry")
        let due = try store.dueAcknowledgements(appId: "app", now: 2 * day + 60_000, limit: 10)
        XCTAssertEqual(due.map(\.attempts), [1])
        XCTAssertEqual(due.map(\.queuedAt), [2 * day], "the wait is counted from the first store")
        purchase.acknowledged = true
        var acknowledged = FactBatch(appId: "app", environment: "Production")
        acknowledged.playPurchases = [(purchase, "{}")]
        XCTAssertEqual(try store.apply(acknowledged), .applied)
        XCTAssertEqual(try store.dueAcknowledgements(appId: "app", now: 10 * day, limit: 10), [])
        XCTAssertEqual(try store.pendingAcknowledgements(appId: "app", queuedBefore: 10 * day), 0)
    }

    // MARK: - Support

    private let customer = "6b1f3c8e-2d4a-4e5b-9c7d-8e9f0a1b2c3d"

    func testGrantsAreStoredRevokedAndCountedWhileActive() throws {
        let store = try makeStore()
        var grant = PromotionalGrant(
            id: "g1", appAccountToken: customer, environment: "Sandbox", entitlement: "pro", startsAt: 1_000, expiresDate: 5_000,
            reason: "sorry", grantedBy: "support")
        var batch = FactBatch(appId: "app", environment: "Sandbox")
        batch.grant = grant
        XCTAssertEqual(try store.apply(batch), .applied)
        XCTAssertEqual(try store.grants(appId: "app", environment: "Sandbox", appAccountToken: customer), [grant])
        XCTAssertEqual(try store.grants(appId: "app", environment: "Production", appAccountToken: customer), [])
        XCTAssertEqual(try store.grant(appId: "app", id: "g1"), grant)
        XCTAssertNil(try store.grant(appId: "other", id: "g1"))
        XCTAssertEqual(try store.activeGrants(appId: "app", at: 2_000).map(\.id), ["g1"])
        XCTAssertEqual(try store.activeGrants(appId: "app", at: 5_000), [], "expired")
        grant.revokedAt = 3_000
        grant.revokedBy = "lead"
        batch.grant = grant
        XCTAssertEqual(try store.apply(batch), .applied)
        XCTAssertEqual(try store.grant(appId: "app", id: "g1"), grant, "the revocation is stored on the same grant")
        XCTAssertEqual(try store.activeGrants(appId: "app", at: 2_500).map(\.id), ["g1"], "active before it was revoked")
        XCTAssertEqual(try store.activeGrants(appId: "app", at: 3_000), [])
        var late = grant
        late.revokedAt = 4_000
        late.revokedBy = "someone else"
        batch.grant = late
        XCTAssertEqual(try store.apply(batch), .applied)
        XCTAssertEqual(try store.grant(appId: "app", id: "g1"), grant, "the first revocation stands")
    }

    /// App downloads on every store: one per customer and environment (a later one replaces it),
    /// read with the subscriber in one read, and found again by the download's id.
    func testAppDownloadsArePutPerCustomerAndEnvironmentAndReadWithTheSubscriber() throws {
        let store = try makeStore()
        let customer = self.customer
        func download(_ id: String, _ environment: String, token: String? = nil, version: String? = "1.0") -> AppDownload {
            AppDownload(
                environment: environment, appAccountToken: token ?? customer, appTransactionId: id, originalApplicationVersion: version,
                originalPurchaseDate: 1_000, originalPlatform: "iOS", postedAt: 2_000)
        }
        func put(_ download: AppDownload) throws {
            var batch = FactBatch(appId: "app", environment: download.environment)
            batch.appDownload = download
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        try put(download("70001", "Sandbox"))
        try put(download("70002", "Production", version: nil))
        try put(download("70003", "Sandbox"))
        try put(download("70003", "Sandbox", token: "f0000000-0000-4000-8000-000000000002"))
        let expected = [download("70002", "Production", version: nil), download("70003", "Sandbox")]
        XCTAssertEqual(
            try store.appDownloads(appId: "app", appAccountToken: customer), expected, "the later Sandbox one replaced the first")
        XCTAssertEqual(try store.appDownloads(appId: "other", appAccountToken: customer), [])
        let read = try store.subscriber(appId: "app", environments: ["Production", "Sandbox"], appAccountToken: customer)
        XCTAssertEqual(read.downloads, expected)
        XCTAssertEqual(
            try store.appDownloadTokens(appId: "app", environment: "Sandbox", appTransactionId: "70003"),
            [customer, "f0000000-0000-4000-8000-000000000002"])
        XCTAssertEqual(try store.appDownloadTokens(appId: "app", environment: "Sandbox", appTransactionId: "70001"), [])
        XCTAssertEqual(try store.appDownloadTokens(appId: "app", environment: "Production", appTransactionId: "70003"), [])
    }

    /// Experiments, assignments and paywall reports on every store: an experiment put and read
    /// back whole, an assignment stored once (the second changes nothing), reports kept once.
    func testExperimentsAreKeptAndACustomerIsEnrolledOnce() throws {
        let store = try makeStore()
        var audience = TargetingCondition()
        audience.states = [.neverSubscribed, .lapsed]
        audience.attributes = ["cohort": ["beta"]]
        var experiment = Experiment(
            id: "e1", placement: "onboarding",
            variants: [.init(id: "a", offering: "standard", weight: 0.25), .init(id: "b", offering: "trial", weight: 0.75)],
            audience: audience, enrollment: 0.5, seed: "s", createdAt: 1_000)
        func write(_ change: (inout FactBatch) -> Void) throws {
            var batch = FactBatch(appId: "app", environment: "Sandbox")
            change(&batch)
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        try write { $0.experiment = experiment }
        XCTAssertEqual(try store.experiments(appId: "app"), [experiment])
        experiment.status = .running
        experiment.startedAt = 2_000
        try write { $0.experiment = experiment }
        XCTAssertEqual(try store.experiments(appId: "app"), [experiment], "put again: replaced")
        XCTAssertEqual(try store.experiments(appId: "other"), [])

        let assignment = ExperimentAssignment(
            experiment: "e1", appAccountToken: customer, variant: "b", placement: "onboarding", offering: "trial", enrolledAt: 3_000)
        try write { $0.enrollment = assignment }
        var later = assignment
        later.variant = "a"
        later.enrolledAt = 4_000
        try write { $0.enrollment = later }
        XCTAssertEqual(try store.experimentAssignments(appId: "app", appAccountToken: customer), [assignment], "never drawn again")
        XCTAssertEqual(try store.enrollmentCounts(appId: "app", experiment: "e1"), ["b": 1])
        XCTAssertEqual(
            try store.subscriber(appId: "app", environments: ["Sandbox"], appAccountToken: customer).assignments, [assignment],
            "read with the subscriber, in one read")
        let report = PaywallEvent(appAccountToken: customer, kind: .shown, placement: "onboarding", offering: "trial", at: 3_000)
        try write { $0.paywallEvent = report }
        try write { $0.paywallEvent = report }
    }

    func testACustomersHistoryIsReadBySubscription() throws {
        let store = try makeStore()
        let writer = RecordingWriter(endpoints: ["https://hooks.example/a"])
        var first = batch([transaction("1000", signed: 10, token: customer)], notification: "n-1")
        first.renewal = (
            RenewalRecord(
                originalTransactionId: "1000", productId: "pro.monthly", autoRenewProductId: "pro.monthly", autoRenewStatus: 1,
                isInBillingRetryPeriod: false, gracePeriodExpiresDate: nil, expirationIntent: nil, environment: "Sandbox",
                signedDate: 12), "renewal-jws"
        )
        first.eventWriter = writer
        XCTAssertEqual(try store.apply(first), .applied)
        XCTAssertEqual(try store.apply(batch([transaction("2000", original: "2000", signed: 10)], notification: "n-2")), .applied)
        let signed = try store.signedFacts(appId: "app", environment: "Sandbox", originalTransactionId: "1000")
        XCTAssertEqual(signed.map(\.kind), [.transaction, .renewalInfo], "oldest signature first")
        XCTAssertEqual(signed.map(\.jws), ["jws-1000-10", "renewal-jws"])
        XCTAssertEqual(
            try store.notifications(appId: "app", environment: "Sandbox", originalTransactionId: "1000").map(\.notificationUUID), ["n-1"])
        let events = try store.events(appId: "app", originalTransactionId: "1000")
        XCTAssertEqual(events.map(\.type), ["INITIAL_PURCHASE"])
        XCTAssertEqual(try store.events(appId: "app", originalTransactionId: "2000"), [])
        XCTAssertEqual(try store.deliveries(appId: "app", eventId: events[0].id).map(\.endpoint), ["https://hooks.example/a"])
        let firstPage = try store.subscriptions(appId: "app", environment: "Sandbox", after: nil, limit: 1)
        XCTAssertEqual(
            firstPage, [try XCTUnwrap(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1000"))],
            "a page holds the same facts as reading each subscription")
        XCTAssertEqual(firstPage.first?.appAccountToken, customer)
        XCTAssertNotNil(firstPage.first?.renewal)
        let secondPage = try store.subscriptions(appId: "app", environment: "Sandbox", after: "1000", limit: 10)
        XCTAssertEqual(secondPage, [try XCTUnwrap(try store.facts(appId: "app", environment: "Sandbox", originalTransactionId: "2000"))])
        XCTAssertEqual(try store.subscriptions(appId: "app", environment: "Production", after: nil, limit: 10), [])
        // Both notifications were received at 6 ms (hour 0).
        let counts = try store.notificationCounts(appId: "app", since: 0, width: NotificationCount.hour)
        XCTAssertEqual(counts, [NotificationCount(hourStart: 0, environment: "Sandbox", notificationType: "DID_RENEW", count: 2)])
        XCTAssertEqual(try store.notificationCounts(appId: "app", since: 7, width: NotificationCount.hour), [])
    }

    // MARK: - Google Play

    private func play(_ token: String, state: String, read: Int64, voided: Int64? = nil, customer: String? = nil) -> PlayPurchase {
        PlayPurchase(
            purchaseToken: token, kind: .subscription, productId: "pro", basePlanId: "monthly", offerId: nil, environment: "Production",
            googleState: state, startTime: 1_000, expiryTime: 5_000, autoRenewing: true, linkedPurchaseToken: nil, acknowledged: false,
            appAccountToken: customer, orderId: "GPA.1", voidedAt: voided, readAt: read)
    }

    func testPlayPurchasesKeepTheLatestReadAndNeverForgetAVoid() throws {
        let store = try makeStore()
        var batch = FactBatch(appId: "app", environment: "Production")
        batch.playPurchases = [(play("p1", state: "SUBSCRIPTION_STATE_ACTIVE", read: 10, customer: customer), "{}")]
        batch.pubsubMessageId = "m1"
        XCTAssertEqual(try store.apply(batch), .applied)
        XCTAssertEqual(try store.apply(batch), .duplicateNotification, "the same Pub/Sub message is applied once")
        XCTAssertTrue(try store.hasPubSubMessage(appId: "app", messageId: "m1"))
        XCTAssertFalse(try store.hasPubSubMessage(appId: "app", messageId: "m2"))
        XCTAssertFalse(try store.hasPubSubMessage(appId: "other", messageId: "m1"), "messages are the app's")
        var later = FactBatch(appId: "app", environment: "Production")
        later.playPurchases = [(play("p1", state: "SUBSCRIPTION_STATE_CANCELED", read: 20, voided: 15), #"{"read":20}"#)]
        XCTAssertEqual(try store.apply(later), .applied)
        var older = FactBatch(appId: "app", environment: "Production")
        older.playPurchases = [(play("p1", state: "SUBSCRIPTION_STATE_ON_HOLD", read: 5), "{}")]
        XCTAssertEqual(try store.apply(older), .applied, "an older read is accepted and ignored")
        let stored = try XCTUnwrap(try store.playPurchase(appId: "app", purchaseToken: "p1"))
        XCTAssertEqual(stored.googleState, "SUBSCRIPTION_STATE_CANCELED")
        XCTAssertEqual(stored.voidedAt, 15)
        XCTAssertEqual(stored.appAccountToken, customer, "the link stays when a later read has none")
        var unvoided = FactBatch(appId: "app", environment: "Production")
        unvoided.playPurchases = [(play("p1", state: "SUBSCRIPTION_STATE_CANCELED", read: 30), "{}")]
        XCTAssertEqual(try store.apply(unvoided), .applied)
        XCTAssertEqual(try store.playPurchase(appId: "app", purchaseToken: "p1")?.voidedAt, 15, "a void is never forgotten")
        XCTAssertEqual(try store.playPurchases(appId: "app", appAccountToken: customer).map(\.purchaseToken), ["p1"])
        XCTAssertEqual(try store.playPurchases(appId: "other", appAccountToken: customer), [])
        XCTAssertEqual(try store.playPurchase(appId: "app", orderId: "GPA.1")?.purchaseToken, "p1")
        XCTAssertNil(try store.playPurchase(appId: "app", orderId: "GPA.2"))
        XCTAssertEqual(try store.playPurchaseAnswer(appId: "app", purchaseToken: "p1"), "{}", "the answer of the latest read")
        var second = FactBatch(appId: "app", environment: "Production")
        second.playPurchases = [(play("p2", state: "SUBSCRIPTION_STATE_ACTIVE", read: 40), "{}")]
        XCTAssertEqual(try store.apply(second), .applied)
        XCTAssertEqual(try store.playPurchases(appId: "app", after: nil, limit: 1).map(\.purchaseToken), ["p1"])
        XCTAssertEqual(try store.playPurchases(appId: "app", after: "p1", limit: 10).map(\.purchaseToken), ["p2"])
    }

    final class RecordingWriter: EventWriting, @unchecked Sendable {
        let environments = ["Sandbox"]
        var changes: [FactChange] = []
        let endpoints: [String]
        init(endpoints: [String] = ["https://hooks.example/a", "https://hooks.example/b"]) { self.endpoints = endpoints }

        func events(for change: FactChange, firstSequence: Int64) -> [OutboxEvent] {
            changes.append(change)
            return CustomerEventDerivation.events(change, billingRetryGrantsAccess: false).enumerated().map { index, event in
                OutboxEvent(
                    id: UUID().uuidString, appId: change.batch.appId, sequence: firstSequence + Int64(index), type: event.kind.rawValue,
                    environment: event.environment, originalTransactionId: event.originalTransactionId, appAccountToken: nil,
                    occurredAt: event.occurredAt, createdAt: 100, body: "{\"type\":\"\(event.kind.rawValue)\"}", endpoints: endpoints)
            }
        }
    }

    func testEventsAreWrittenWithTheirFactsNumberedInCommitOrder() throws {
        let store = try makeStore()
        let writer = RecordingWriter()
        var first = batch([transaction("1000", signed: 10)], notification: "n-1")
        first.eventWriter = writer
        let written = try store.write(first)
        XCTAssertEqual(written.outcome, .applied)
        XCTAssertTrue(written.wroteToOutbox)
        var renewal = batch([transaction("1001", signed: 11)], notification: "n-2")
        renewal.transactions[0].record.purchaseDate = 2_000
        renewal.eventWriter = writer
        let second = try store.write(renewal)
        let events = try store.events(appId: "app", after: 0, limit: 10)
        XCTAssertEqual(events.map(\.type), ["INITIAL_PURCHASE", "RENEWAL"])
        XCTAssertEqual(events.map(\.sequence), [1, 2])
        XCTAssertEqual(try store.events(appId: "app", after: 1, limit: 10).map(\.sequence), [2])
        XCTAssertEqual(try store.event(appId: "app", id: events[1].id)?.body, "{\"type\":\"RENEWAL\"}")
        XCTAssertEqual([written, second].map { $0.events.map(\.sequence) }, [[1], [2]], "each write answers its events")
        XCTAssertEqual(writer.changes[1].before["1000"]?.transactions.map(\.transactionId), ["1000"], "read before the write")
        XCTAssertEqual(try store.deliveries(appId: "app", status: .pending, limit: 10).count, 4, "two endpoints each")
    }

    /// Lists with ties, answered the same on every store: the deliveries of one event to every
    /// endpoint (made at one instant) and of the next at that instant, newest made first; the
    /// notifications of one second, newest first, paged one at a time without a row twice or
    /// one skipped.
    func testListsAnswerTiesInOneOrder() throws {
        let store = try makeStore()
        let writer = RecordingWriter(endpoints: ["https://hooks.example/a", "https://hooks.example/b", "https://hooks.example/c"])
        var first = batch([transaction("1000", signed: 10)], notification: "n-1")
        first.eventWriter = writer
        XCTAssertEqual(try store.apply(first), .applied)
        var renewal = batch([transaction("1001", signed: 11)], notification: "n-2")
        renewal.transactions[0].record.purchaseDate = 2_000
        renewal.eventWriter = writer
        XCTAssertEqual(try store.apply(renewal), .applied)
        XCTAssertEqual(try store.apply(batch([], notification: "n-3")), .applied)
        let listed = try store.deliveries(appId: "app", status: nil, limit: 10)
        XCTAssertEqual(Set(listed.map(\.createdAt)).count, 1, "all made at one instant")
        XCTAssertEqual(
            listed.map(\.eventType), ["RENEWAL", "RENEWAL", "RENEWAL", "INITIAL_PURCHASE", "INITIAL_PURCHASE", "INITIAL_PURCHASE"])
        XCTAssertEqual(listed.map(\.endpoint), ["c", "b", "a", "c", "b", "a"].map { "https://hooks.example/\($0)" })
        XCTAssertEqual(listed, listed.sorted(by: WebhookDelivery.listedBefore))
        XCTAssertEqual(try store.deliveries(appId: "app", status: nil, limit: 2), Array(listed.prefix(2)), "a shorter page is its start")
        let notifications = try store.notifications(appId: "app", limit: 10, before: nil)
        XCTAssertEqual(Set(notifications.map(\.receivedAt)).count, 1, "all received in one second")
        XCTAssertEqual(notifications.map(\.notificationUUID), ["n-3", "n-2", "n-1"])
        var paged: [String] = []
        var before: Int64? = nil
        while let next = try store.notifications(appId: "app", limit: 1, before: before).first {
            paged.append(next.notificationUUID)
            before = next.sequence
            XCTAssertLessThanOrEqual(paged.count, 3, "a page came twice")
            if paged.count > 3 { break }
        }
        XCTAssertEqual(paged, ["n-3", "n-2", "n-1"])
    }

    /// The other lists at a tie: refund requests made at one instant, grants expiring at one
    /// instant, notifications of one hour in two environments. Both stores answer one order.
    func testTheOtherListsAnswerTiesInOneOrder() throws {
        let store = try makeStore()
        for id in ["r-b", "r-c", "r-a"] {
            var batch = FactBatch(appId: "app", environment: "Sandbox")
            batch.refundRequest = RefundRequest(
                id: id, store: "app_store", environment: "Sandbox", appAccountToken: customer, transactionId: id,
                originalTransactionId: id, reason: "OTHER", requestedAt: 100, deadline: 100 + RefundRequest.appleWindow)
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        XCTAssertEqual(try store.refundRequests(appId: "app", limit: 10).map(\.id), ["r-a", "r-b", "r-c"], "newest, then by id")
        XCTAssertEqual(try store.refundRequests(appId: "app", limit: 2).map(\.id), ["r-a", "r-b"], "a shorter page is its start")
        XCTAssertEqual(try store.dueRefundRequests(appId: "app", now: 100, limit: 10).map(\.id), ["r-a", "r-b", "r-c"])

        for (id, startsAt, revokedAt) in [("g-b", 1_000, nil), ("g-a", 1_000, 1_500), ("g-c", 3_000, nil)] as [(String, Int64, Int64?)] {
            var batch = FactBatch(appId: "app", environment: "Sandbox")
            batch.grant = PromotionalGrant(
                id: id, appAccountToken: customer, environment: "Sandbox", entitlement: "pro", startsAt: startsAt, expiresDate: 5_000,
                reason: nil, grantedBy: "support", revokedAt: revokedAt, revokedBy: revokedAt.map { _ in "lead" })
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        XCTAssertEqual(try store.grants(appId: "app", unexpiredAt: 2_000).map(\.id), ["g-a", "g-b", "g-c"], "by expiry, then id")
        XCTAssertEqual(try store.activeGrants(appId: "app", at: 2_000).map(\.id), ["g-b"], "neither revoked nor yet to start")
        XCTAssertEqual(try store.grants(appId: "app", unexpiredAt: 5_000), [])

        for (uuid, environment) in [("n-1", "Sandbox"), ("n-2", "Production"), ("n-3", "Sandbox")] {
            var batch = FactBatch(appId: "app", environment: environment)
            batch.notification = StoredNotification(
                notificationUUID: uuid, appId: "app", environment: environment, notificationType: "DID_RENEW", subtype: nil,
                signedDate: 5, receivedAt: 6, originalTransactionId: nil, jws: "n")
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        XCTAssertEqual(
            try store.notificationCounts(appId: "app", since: 0, width: NotificationCount.hour),
            [
                NotificationCount(hourStart: 0, environment: "Production", notificationType: "DID_RENEW", count: 1),
                NotificationCount(hourStart: 0, environment: "Sandbox", notificationType: "DID_RENEW", count: 2),
            ])
    }

    /// A manual retry and an abandonment are written as the domain gives them; what they do not
    /// name (the attempts, the last answer) is kept.
    func testRearmingAndAbandonmentAreWrittenAsGiven() throws {
        let store = try makeStore()
        var first = batch([transaction("1000", signed: 10)])
        first.eventWriter = RecordingWriter(endpoints: ["https://hooks.example/a", "https://hooks.example/b"])
        XCTAssertEqual(try store.apply(first), .applied)
        let claimed = try store.claimDeliveries(appId: "app", endpoint: "https://hooks.example/a", now: 100, leaseUntil: 500, limit: 10)
        try store.record([DeliveryOutcome(id: claimed[0].id, result: .failed(at: 300), httpStatus: 410, error: "gone")])
        let rearming = WebhookDelivery.rearmed(at: 1_000)
        let retried = try XCTUnwrap(try store.retryDelivery(appId: "app", id: claimed[0].id, rearming))
        XCTAssertEqual(
            [retried.status.rawValue, "\(retried.nextAt)", "\(retried.windowStart)", "\(retried.attempts)", "\(retried.lastStatus ?? 0)"],
            [rearming.status.rawValue, "1000", "1000", "1", "410"])
        let abandonment = WebhookDelivery.abandoned(at: 2_000)
        XCTAssertEqual(try store.abandonDeliveries(appId: "app", keeping: [], abandonment), 2)
        let abandoned = try store.deliveries(appId: "app", status: .failed, limit: 10)
        XCTAssertEqual(abandoned.map(\.nextAt), [2_000, 2_000])
        XCTAssertEqual(Set(abandoned.map(\.lastError)), [abandonment.lastError])
        XCTAssertEqual(abandoned.first { $0.id == claimed[0].id }?.lastStatus, 410, "its last answer is kept")
    }

    func testDeliveriesToEndpointsNoLongerConfiguredAreMarkedFailed() throws {
        let store = try makeStore()
        var first = batch([transaction("1000", signed: 10)])
        first.eventWriter = RecordingWriter()
        XCTAssertEqual(try store.apply(first), .applied)
        XCTAssertEqual(
            try store.abandonDeliveries(appId: "app", keeping: ["https://hooks.example/a"], WebhookDelivery.abandoned(at: 50)), 1)
        let failed = try store.deliveries(appId: "app", status: .failed, limit: 10)
        XCTAssertEqual(failed.map(\.endpoint), ["https://hooks.example/b"])
        XCTAssertEqual(failed.first?.lastError, "endpoint no longer configured")
        XCTAssertEqual(try store.deliveries(appId: "app", status: .pending, limit: 10).map(\.endpoint), ["https://hooks.example/a"])
        XCTAssertEqual(try store.abandonDeliveries(appId: "app", keeping: [], WebhookDelivery.abandoned(at: 60)), 1)
    }

    func testADuplicateNotificationWritesNoEvent() throws {
        let store = try makeStore()
        let writer = RecordingWriter()
        var first = batch([transaction("1000", signed: 10)], notification: "n-1")
        first.eventWriter = writer
        XCTAssertEqual(try store.apply(first), .applied)
        XCTAssertEqual(try store.apply(first), .duplicateNotification)
        XCTAssertEqual(try store.events(appId: "app", after: 0, limit: 10).count, 1)
        XCTAssertEqual(writer.changes.count, 1, "a duplicate is not even derived")
    }

    func testALinkConflictWritesNoEvent() throws {
        let store = try makeStore()
        XCTAssertEqual(try store.apply(batch([transaction("1000", signed: 10, token: "a")])), .applied)
        var conflicting = batch([transaction("1001", signed: 11)], link: ("1000", "b"))
        conflicting.eventWriter = RecordingWriter()
        XCTAssertEqual(try store.apply(conflicting), .linkConflict(existingToken: "a"))
        XCTAssertEqual(try store.events(appId: "app", after: 0, limit: 10), [])
    }

    func testClaimedDeliveriesAreLeasedAndSettledByOutcome() throws {
        let store = try makeStore()
        var first = batch([transaction("1000", signed: 10)])
        first.eventWriter = RecordingWriter(endpoints: ["https://hooks.example/a"])
        first.forward = ForwardedNotification(url: "https://old.example/apple", body: "{\"signedPayload\":\"x\"}")
        XCTAssertEqual(try store.apply(first), .applied)
        let claimed = try store.claimDeliveries(appId: "app", endpoint: "https://hooks.example/a", now: 100, leaseUntil: 500, limit: 10)
        XCTAssertEqual(claimed.count, 1)
        XCTAssertEqual(claimed[0].body, "{\"type\":\"INITIAL_PURCHASE\"}", "the event's body")
        XCTAssertEqual(
            try store.claimDeliveries(appId: "app", endpoint: "https://hooks.example/a", now: 100, leaseUntil: 500, limit: 10), [])
        let forward = try store.claimDeliveries(appId: "app", endpoint: "https://old.example/apple", now: 100, leaseUntil: 500, limit: 10)
        XCTAssertEqual(forward.map(\.body), ["{\"signedPayload\":\"x\"}"])
        XCTAssertEqual(forward.first?.kind, .forward)

        try store.record([DeliveryOutcome(id: claimed[0].id, result: .retry(at: 200), httpStatus: 500, error: "answered 500")])
        XCTAssertEqual(
            try store.claimDeliveries(appId: "app", endpoint: "https://hooks.example/a", now: 199, leaseUntil: 900, limit: 10), [])
        let again = try store.claimDeliveries(appId: "app", endpoint: "https://hooks.example/a", now: 200, leaseUntil: 900, limit: 10)
        XCTAssertEqual(again.map(\.id), [claimed[0].id])
        XCTAssertEqual(again.first?.attempts, 1)
        XCTAssertEqual(again.first?.lastStatus, 500)
        try store.record([DeliveryOutcome(id: claimed[0].id, result: .delivered(at: 300), httpStatus: 204, error: nil)])
        try store.record([DeliveryOutcome(id: forward[0].id, result: .failed(at: 300), httpStatus: nil, error: "refused")])
        XCTAssertEqual(try store.deliveries(appId: "app", status: .delivered, limit: 10).map(\.id), [claimed[0].id])
        XCTAssertEqual(try store.deliveries(appId: "app", status: .failed, limit: 10).map(\.id), [forward[0].id])
        XCTAssertEqual(try store.deliveryBacklog(appId: "app"), DeliveryBacklog(pending: 0, failed: 1, oldestPendingCreatedAt: nil))

        let retried = try XCTUnwrap(try store.retryDelivery(appId: "app", id: forward[0].id, WebhookDelivery.rearmed(at: 1_000)))
        XCTAssertEqual(retried.status, .pending)
        XCTAssertEqual(retried.windowStart, 1_000, "a manual retry opens a new window")
        XCTAssertNil(try store.retryDelivery(appId: "app", id: "unknown", WebhookDelivery.rearmed(at: 1_000)))
        XCTAssertEqual(
            try store.claimDeliveries(appId: "app", endpoint: "https://old.example/apple", now: 1_000, leaseUntil: 2_000, limit: 10).count,
            1)
    }

    /// The business figures follow the facts in their commits (docs/METRICS.md, "Kept by the
    /// writer"), whatever order the facts come in, and `rebuildMetrics` gives the same sums again.
    /// Prices no store charges can still reach a store (rows from before prices were checked):
    /// their day sums are held at Int64's bounds, on every store and through PostgreSQL's
    /// roll-up, instead of failing the writer or every read after it.
    func testDaySumsHoldAtInt64sBoundsInsteadOfFailing() throws {
        let store = try makeStore()
        let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
        for index in 0..<3 {
            var batch = FactBatch(appId: "app", environment: "Production")
            batch.transactions = [
                (
                    TransactionRecord(
                        transactionId: "t\(index)", originalTransactionId: "o\(index)", productId: "p", purchaseDate: start + 1000,
                        expiresDate: start + 2_592_000_000, environment: "Production", signedDate: start, price: .max, currency: "USD"),
                    "jws-\(index)"
                )
            ]
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        func revenue() throws -> Int64? {
            try store.metricSums(appId: "app", environment: "Production", fromDay: 0).first { $0.key.figure == .revenue }?.value
        }
        XCTAssertEqual(try revenue(), .max)
        if let postgreSQL = store as? PostgreSQLFactStore {
            try postgreSQL.rollUpMetrics()
            try postgreSQL.rollUpMetrics()
            XCTAssertEqual(try revenue(), .max, "rolled up")
        }
    }

    func testTheFiguresFollowTheFactsAndARebuildGivesTheSame() throws {
        let store = try makeStore()
        let day: Int64 = 86_400_000
        let origin: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
        func d(_ n: Int64) -> Int64 { origin + n * day }
        func write(_ environment: String = "Production", _ edit: (inout FactBatch) -> Void) throws {
            var batch = FactBatch(appId: "app", environment: environment)
            edit(&batch)
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        func transaction(
            _ id: String, _ original: String, _ from: Int64, _ to: Int64, price: Int64, _ currency: String, trial: Bool = false,
            environment: String = "Production", signed: Int64? = nil, refunded: Int64? = nil
        ) -> (TransactionRecord, String) {
            (
                TransactionRecord(
                    transactionId: id, originalTransactionId: original, productId: currency == "EUR" ? "yearly" : "monthly",
                    purchaseDate: d(from), expiresDate: d(to), revocationDate: refunded.map(d), offerType: trial ? 1 : nil,
                    offerDiscountType: trial ? "FREE_TRIAL" : nil, environment: environment, signedDate: signed ?? d(from),
                    price: price, currency: currency), "jws-\(id)"
            )
        }
        // A: a trial, then a paid month, then billing fails for good (involuntary churn on day 37).
        try write { $0.transactions = [transaction("a1", "A", 0, 7, price: 0, "USD", trial: true)] }
        try write { $0.transactions = [transaction("a2", "A", 7, 37, price: 9990, "USD")] }
        try write {
            $0.renewal = (
                RenewalRecord(originalTransactionId: "A", isInBillingRetryPeriod: true, environment: "Production", signedDate: d(37)), "r1"
            )
        }
        try write {
            $0.renewal = (
                RenewalRecord(
                    originalTransactionId: "A", autoRenewStatus: 0, expirationIntent: 2, environment: "Production", signedDate: d(45)), "r2"
            )
        }
        // B: a year in euros from day 3, refunded on day 20 (a newer signed copy says so).
        try write { $0.transactions = [transaction("b1", "B", 3, 368, price: 49_990, "EUR")] }
        try write { $0.transactions = [transaction("b1", "B", 3, 368, price: 49_990, "EUR", signed: d(20), refunded: 20)] }
        // C: Sandbox, never counted in Production.
        try write("Sandbox") { $0.transactions = [transaction("c1", "C", 0, 30, price: 9990, "USD", environment: "Sandbox")] }

        let now = d(50) + 3_600_000
        func ledger() throws -> MetricsLedger {
            let nowDay = now / day
            return MetricsLedger(
                firstDay: 0, sums: try store.metricSums(appId: "app", environment: "Production", fromDay: 0), momentDays: [nowDay],
                moments: try store.metricMoments(appId: "app", environment: "Production", from: nowDay * day, to: (nowDay + 1) * day),
                configuredPeriods: [:], includes: { _, _ in true })
        }
        func sums() throws -> [String] {
            try store.metricSums(appId: "app", environment: "Production", fromDay: 0).filter { $0.value != 0 }
                .map {
                    "\($0.key.store) \($0.key.figure.rawValue) \($0.key.day) \($0.key.productId) \($0.key.currency) \($0.key.period) \($0.key.originDay) \($0.value)"
                }
                .sorted()
        }
        let kept = try ledger()
        XCTAssertEqual(kept.activeSubscriptions(at: d(10)), 2, "A paid, B")
        XCTAssertEqual(kept.activeSubscriptions(at: d(25)), 1, "B refunded on day 20")
        XCTAssertEqual(kept.activeTrials(at: d(3)), 1)
        // EUR 49,990 a year: 49,990 / 12 = 4,165.83 → 4,166.
        XCTAssertEqual(kept.mrr(at: d(10)), ["USD": 9990, "EUR": 4166])
        XCTAssertEqual(kept.churned(from: d(30), to: d(40), now: now), MetricChurn(involuntary: 1))
        XCTAssertEqual(kept.revenue(from: d(0), to: d(40)), ["USD": 9990], "B's price and its refund cancel out")
        XCTAssertEqual(kept.refunds(from: d(0), to: d(40)).amounts, ["EUR": 49_990])
        XCTAssertEqual(kept.trialConversions(from: d(0), to: d(10)), 1)
        XCTAssertEqual(try ledger().activeSubscriptions(at: now), 0)
        let before = try sums()
        XCTAssertFalse(before.isEmpty)
        XCTAssertEqual(
            try store.metricStockSums(appId: "app", environment: "Production", fromDay: d(10) / day).map { "\($0.key) \($0.value)" }
                .sorted(),
            try store.metricSums(appId: "app", environment: "Production", fromDay: d(10) / day).filter { $0.key.figure.isStock }
                .map { "\($0.key) \($0.value)" }.sorted(), "the stocks' day sums are the day sums of the stocks")
        // The hour, ten-minute and minute sums: read back as written, and what they stand for at an instant
        // gives the figures every moment of its day gives.
        func buckets(_ width: MetricBucketWidth, in read: any FactStore = store) throws -> [String] {
            try read.metricBucketSums(appId: "app", environment: "Production", width: width, buckets: Int64.min...Int64.max)
                .filter { $0.value != 0 }.map { "\($0.key) \($0.value)" }.sorted()
        }
        var keptBuckets: [MetricBucketWidth: [String]] = [:]
        for width in MetricBucketWidth.allCases {
            keptBuckets[width] = try buckets(width)
            let readToTheInstant = try store.metricSums(appId: "app", environment: "Production", fromDay: 0)
                .filter { $0.value != 0 && $0.key.figure.isReadToTheInstant }
            XCTAssertFalse(readToTheInstant.isEmpty)
            XCTAssertEqual(
                keptBuckets[width]?.count, readToTheInstant.count,
                "each day change of a figure read to the instant also lands in one bucket of \(width), and no other")
        }
        // A database of the version before the bucket sums gets them from its moments when it
        // migrates: the same the writer keeps.
        let migrated = try migratedFromBeforeTheBucketSums()
        for width in MetricBucketWidth.allCases {
            XCTAssertEqual(try buckets(width, in: migrated), keptBuckets[width], "\(width) migrated")
        }
        func totals(
            _ width: MetricBucketWidth, _ spans: (stocks: MetricBucketSpan, flows: MetricBucketSpan)
        ) throws -> [(key: MetricDayKey, value: Int64)] {
            let summed = try store.metricBucketTotals(
                appId: "app", environment: "Production", width: width, stocks: spans.stocks, flows: spans.flows)
            let rows = MetricBucketSpan.totals(
                try store.metricBucketSums(appId: "app", environment: "Production", width: width, buckets: Int64.min...Int64.max),
                stocks: spans.stocks, flows: spans.flows)
            XCTAssertEqual(
                summed.filter { $0.value != 0 }.map { "\($0.key) \($0.value)" }.sorted(),
                rows.filter { $0.value != 0 }.map { "\($0.key) \($0.value)" }.sorted(), "the store's totals are the rows' sums")
            return summed
        }
        for t in [d(10) + 5_400_123, d(20) + 59_999, d(37) - 1, d(45) + 1, d(7) + 3_600_000, d(37) + 60_000] {
            let standing = try MetricsInstant.standing(
                at: t, totals: totals,
                moments: { from, to in try store.metricMoments(appId: "app", environment: "Production", from: from, to: to) })
            let fine = MetricsLedger(
                firstDay: 0, sums: try store.metricSums(appId: "app", environment: "Production", fromDay: 0), momentDays: [t / day],
                moments: standing, configuredPeriods: [:], includes: { _, _ in true })
            let whole = MetricsLedger(
                firstDay: 0, sums: try store.metricSums(appId: "app", environment: "Production", fromDay: 0), momentDays: [t / day],
                moments: try store.metricMoments(appId: "app", environment: "Production", from: t / day * day, to: (t / day + 1) * day),
                configuredPeriods: [:], includes: { _, _ in true })
            XCTAssertEqual(fine.activeSubscriptions(at: t), whole.activeSubscriptions(at: t), "\(t)")
            XCTAssertEqual(fine.mrr(at: t), whole.mrr(at: t), "\(t)")
            XCTAssertEqual(
                fine.churned(from: t / day * day, to: (t / day + 1) * day, now: t),
                whole.churned(from: t / day * day, to: (t / day + 1) * day, now: t))
        }
        XCTAssertEqual(try store.rebuildMetrics(appId: "app", environment: "Production", pageSize: 1), 2)
        XCTAssertEqual(try sums(), before, "a rebuild gives the sums the writer kept")
        for width in MetricBucketWidth.allCases { XCTAssertEqual(try buckets(width), keptBuckets[width], "\(width)") }
        XCTAssertEqual(try ledger().mrr(at: d(10)), ["USD": 9990, "EUR": 4166])
        XCTAssertEqual(
            try store.metricSums(appId: "app", environment: "Sandbox", fromDay: 0).filter { $0.value != 0 }.count, 7,
            "the Sandbox subscription's own: revenue, paid purchase, active and MRR in and out, its churn")
    }

}

/// The same contract on PostgreSQL: a fresh database per test on the test cluster. Skips (with
/// the reason printed) only when no PostgreSQL server is installed.
final class PostgreSQLFactStoreTests: FactStoreContract {
    private var url: String?

    override func makeStore() throws -> any FactStore {
        do {
            let url = try PostgreSQLTestCluster.freshDatabase()
            self.url = url
            return try PostgreSQLFactStore(url: url, poolSize: 4)
        } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            print("PostgreSQL tests skipped: \(unavailable)")
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
    }

    override func spoil(_ sql: String) throws { try PostgreSQLConnection(conninfo: try XCTUnwrap(url)).executeScript(sql) }

    override func migratedFromBeforeTheBucketSums() throws -> any FactStore {
        let url = try XCTUnwrap(url)
        let connection = try PostgreSQLConnection(conninfo: url)
        try connection.executeScript(
            """
            DELETE FROM metric_deltas WHERE width <> \(MetricMoment.dayMs);
            DROP TABLE metric_buckets; ALTER TABLE metric_deltas DROP COLUMN width;
            DROP TABLE app_downloads; DROP TABLE customer_attributes; DROP TABLE experiments; DROP TABLE experiment_assignments;
            DROP TABLE paywall_events;
            DELETE FROM schema_migrations WHERE version >= 13;
            """)
        return try PostgreSQLFactStore(url: url, poolSize: 1)
    }

    /// On PostgreSQL the writers append their changes to the day sums and a roll-up folds them in
    /// (docs/METRICS.md): the sums read the same before and after, and two writers never wait on
    /// one row of `metric_days` (they never write it).
    func testMetricChangesAreAppendedThenRolledUp() throws {
        let url: String
        do { url = try PostgreSQLTestCluster.freshDatabase() } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
        let store = try PostgreSQLFactStore(url: url, poolSize: 2)
        XCTAssertEqual(try store.apply(Self.aPaidMonth), .applied)
        func count(_ table: String) throws -> String { try Self.rows(of: table, in: url) }
        func sums() throws -> [String] {
            try store.metricSums(appId: "app", environment: "Production", fromDay: 0).map { "\($0.key) \($0.value)" }.sorted()
        }
        let before = try sums()
        XCTAssertEqual(before.count, 7, "revenue, a paid purchase, active and MRR in and out, the churn due at its end: \(before)")
        XCTAssertEqual(try count("metric_days"), "0")
        let widths = MetricBucketWidth.allCases.count
        XCTAssertEqual(
            try count("metric_deltas"), "\(7 + 5 * widths)",
            "each change to a day sum, and one of each bucket width for active, MRR and churn (not revenue, not the paid purchase)")
        let hours = try store.metricBucketSums(appId: "app", environment: "Production", width: .hour, buckets: 0...Int64.max)
            .map { "\($0.key) \($0.value)" }.sorted()
        try store.rollUpMetrics()
        XCTAssertEqual(try count("metric_deltas"), "0")
        XCTAssertEqual(try count("metric_days"), "7")
        XCTAssertEqual(try count("metric_buckets"), "\(5 * widths)")
        XCTAssertEqual(
            try store.metricBucketSums(appId: "app", environment: "Production", width: .hour, buckets: 0...Int64.max)
                .map { "\($0.key) \($0.value)" }.sorted(), hours)
        XCTAssertEqual(try sums(), before)
        XCTAssertEqual(try store.rebuildMetrics(appId: "app", environment: "Production"), 1)
        try store.rollUpMetrics()
        XCTAssertEqual(try sums(), before, "a rebuild forgets the rolled-up sums too")
    }

    /// How many rows `table` holds, as psql reads it.
    private static func rows(of table: String, in url: String) throws -> String {
        try runProcess("psql", [url, "-At", "-c", "SELECT count(*) FROM \(table)"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// One paid month of a subscription: seven metric changes.
    private static var aPaidMonth: FactBatch {
        var batch = FactBatch(appId: "app", environment: "Production")
        batch.transactions = [
            (
                TransactionRecord(
                    transactionId: "1", originalTransactionId: "1", productId: "p", purchaseDate: 1_767_225_600_000,
                    expiresDate: 1_769_904_000_000, environment: "Production", signedDate: 1_767_225_600_000, price: 9990, currency: "USD"),
                "jws"
            )
        ]
        return batch
    }

    /// A roll-up that fails after a group has answered is reported (the server logs and counts
    /// it as `metrics_rollup`), never swallowed; the write stands and its changes stay appended.
    func testAFailedRollUpIsReportedAndTheWriteStands() throws {
        let url: String
        do { url = try PostgreSQLTestCluster.freshDatabase() } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
        let reported = LockedList<String>()
        let wasReported = expectation(description: "the roll-up failure is reported")
        let store = try PostgreSQLFactStore(url: url, poolSize: 2) { task, error in
            reported.append("\(task): \((error as? StorageError)?.sqlState ?? "\(error)")")
            wasReported.fulfill()
        }
        _ = try runProcess("psql", [url, "-At", "-c", "ALTER TABLE metric_days ADD CONSTRAINT refused CHECK (false) NOT VALID"])
        let answered = expectation(description: "the write is answered")
        store.write(Self.aPaidMonth) { result in
            XCTAssertEqual(try? result.get().outcome, .applied, "the write succeeds whatever its roll-up does")
            answered.fulfill()
        }
        wait(for: [answered, wasReported], timeout: 30)
        XCTAssertEqual(reported.all, ["metrics_rollup: 23514"], "the check violation, under its task")
        XCTAssertEqual(
            try Self.rows(of: "metric_deltas", in: url), "\(7 + 5 * MetricBucketWidth.allCases.count)",
            "the changes (day, and the buckets of the figures read to the instant) are still there to fold")
    }

    /// Two instances starting at once on a new database: the advisory lock lets one apply the
    /// migrations and the other find them applied.
    func testMigrationsRunOnceWhenTwoInstancesStartTogether() throws {
        let url: String
        do { url = try PostgreSQLTestCluster.freshDatabase() } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
        let failures = LockedList<String>()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do { _ = try PostgreSQLFactStore(url: url, poolSize: 2) } catch { failures.append("\(error)") }
        }
        XCTAssertEqual(failures.all, [])
        let applied = try runProcess("psql", [url, "-At", "-c", "SELECT count(*), max(version) FROM schema_migrations"])
        XCTAssertEqual(applied.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "16|16", "each of the sixteen migrations once")
        // Migration 5: the signed texts compressed with lz4, where the server was built with it.
        let compression = try runProcess(
            "psql",
            [
                url, "-At", "-c",
                """
                SELECT (SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'),
                    string_agg(attcompression::text, '' ORDER BY attrelid::regclass::text)
                FROM pg_attribute WHERE attname = 'jws' AND attrelid IN ('notifications'::regclass, 'transactions'::regclass)
                """,
            ])
        XCTAssertEqual(
            compression.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
            compression.stdout.hasPrefix("t") ? "t|ll" : "f|", "lz4 where PostgreSQL has it")
    }

    /// A database a newer Entitle migrated is refused at start-up, untouched.
    func testADatabaseFromANewerVersionIsRefused() throws {
        let url: String
        do { url = try PostgreSQLTestCluster.freshDatabase() } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
        _ = try PostgreSQLFactStore(url: url, poolSize: 1)
        XCTAssertEqual(try runProcess("psql", [url, "-c", "INSERT INTO schema_migrations (version) VALUES (99)"]).status, 0)
        XCTAssertThrowsError(try PostgreSQLFactStore(url: url, poolSize: 1)) { error in
            XCTAssert("\(error)".contains("schema version 99, newer than this build"), "\(error)")
        }
    }
}

/// What only the SQLite store promises: its file, its journal, its schema version.
final class SQLiteFactStoreTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = try makeTemporaryDirectory("entitle-db") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    func testDurableAcrossReopenAndMigrationsRunOnce() throws {
        let path = folder.appendingPathComponent("entitle.sqlite3").path
        do {
            let store = try SQLiteFactStore(path: path)
            var batch = FactBatch(appId: "app", environment: "Sandbox")
            batch.transactions = [
                (
                    TransactionRecord(
                        transactionId: "1", originalTransactionId: "1", productId: "p", purchaseDate: 1,
                        signedDate: 1), "jws"
                )
            ]
            XCTAssertEqual(try store.apply(batch), .applied)
        }
        let reopened = try SQLiteFactStore(path: path)
        XCTAssertNotNil(try reopened.facts(appId: "app", environment: "Sandbox", originalTransactionId: "1"))
        XCTAssertEqual(try reopened.integrityCheck(), "ok")
        let mode = try runProcess("sqlite3", [path, "PRAGMA journal_mode; PRAGMA user_version;"])
        XCTAssertEqual(mode.status, 0, "the sqlite3 command line (Debian's sqlite3) is needed: \(mode.stderr)")
        XCTAssertEqual(mode.stdout, "wal\n21\n")
    }

    /// A file a newer Entitle migrated is refused at start-up, untouched.
    func testADatabaseFromANewerVersionIsRefused() throws {
        let path = folder.appendingPathComponent("entitle.sqlite3").path
        _ = try SQLiteFactStore(path: path)
        XCTAssertEqual(try runProcess("sqlite3", [path, "PRAGMA user_version = 99;"]).status, 0)
        XCTAssertThrowsError(try SQLiteFactStore(path: path)) { error in
            XCTAssert("\(error)".contains("schema version 99, newer than this build"), "\(error)")
        }
        XCTAssertEqual(try runProcess("sqlite3", [path, "PRAGMA user_version;"]).stdout, "99\n")
    }

    /// docs/ENTITLEMENTS.md promises WAL and `synchronous = FULL`: an acknowledged fact survives power loss.
    func testWriterRunsInWALWithFullSynchronous() throws {
        let store = try SQLiteFactStore(path: folder.appendingPathComponent("entitle.sqlite3").path)
        XCTAssertEqual(store.journalMode, "wal")
        XCTAssertEqual(store.synchronousLevel, 2, "PRAGMA synchronous = FULL is 2")
    }

    func testDatabaseFilesAreReadableByTheOwnerOnly() throws {
        let path = folder.appendingPathComponent("entitle.sqlite3").path
        let store = try SQLiteFactStore(path: path)
        var batch = FactBatch(appId: "app", environment: "Sandbox")
        batch.transactions = [
            (
                TransactionRecord(
                    transactionId: "1", originalTransactionId: "1", productId: "p", purchaseDate: 1,
                    signedDate: 1), "jws"
            )
        ]
        XCTAssertEqual(try store.apply(batch), .applied)
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int, file)
            XCTAssertEqual(mode & 0o777, 0o600, "\(file) is \(String(mode, radix: 8))")
        }
    }
}

/// What an `UnreadableRows` observer was told, in order.
private final class Told: @unchecked Sendable {
    private let lock = NSLock()
    private var rows: [UnreadableRow] = []
    func append(_ row: UnreadableRow) { lock.withLock { rows.append(row) } }
    var all: [UnreadableRow] { lock.withLock { rows } }
}
