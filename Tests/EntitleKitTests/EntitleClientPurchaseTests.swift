import Crypto
import EntitleKit
import Foundation
import JSON
import TestSupport
import XCTest

/// EntitleKit's purchases against a real server, the test store standing in for StoreKit (it
/// checks a promotional offer's signature as the App Store does): an offer signed then bought,
/// never the regular price in its place; a trial, a refund seen on the next refresh, Ask to Buy
/// through the listener, a cancelled purchase, restore, a purchase queued offline and posted
/// after a restart, and an answer changed on the way (refused, the transaction not finished).
final class EntitleClientPurchaseTests: EntitleKitTestCase {
    override class var issuerId: String? { "57246542-96fe-1a63-e053-0824d011072a" }

    private func purchased(
        _ result: EntitleClient.PurchaseResult, file: StaticString = #filePath, line: UInt = #line
    ) throws
        -> (StoreTransaction, CustomerState)
    {
        guard case .purchased(let transaction, let state) = result else {
            XCTFail("not purchased: \(result)", file: file, line: line)
            throw CancellationError()
        }
        return (transaction, state)
    }

    /// A promotional offer for a lapsed customer: Entitle signs it (the JWS: the key has an issuer
    /// ID), the test store checks the signature as the App Store does and sells it, the client
    /// posts the transaction and finishes it only after.
    func testAPromotionalOfferIsSignedBoughtPostedThenFinished() async throws {
        let store = purchaser()
        let entitle = try client()
        let (first, state) = try purchased(try await entitle.purchase("pro.monthly", using: store))
        XCTAssertTrue(state.customer.isEntitled(to: "pro"), "stored by the client's post: the test store notified nothing")
        let finished = await store.finished
        XCTAssertEqual(finished, [first.transactionId])
        XCTAssertEqual(admin("POST", "/v1/test-store/apple/subscriptions/\(first.transactionId)/cancel").0, 200)
        XCTAssertEqual(admin("POST", "/v1/test-store/clock", ["advance": "P1M"]).0, 200)
        let lapsed = try await entitle.customer()
        XCTAssertFalse(lapsed.customer.isEntitled(to: "pro"))

        let (second, resubscribed) = try purchased(try await entitle.purchase("pro.monthly", offer: "comeback", using: store))
        XCTAssertTrue(resubscribed.customer.isEntitled(to: "pro"))
        let bought = await store.bought
        XCTAssertEqual(bought.map(\.transactionId), [first.transactionId, second.transactionId])
        let offer = try CompactJWS(second.jwsRepresentation).payload
        XCTAssertEqual(offer["offerIdentifier"], "pro_monthly_comeback", "bought with the offer, not at the regular price")
        XCTAssertEqual(offer["offerType"], 2)
    }

    /// An offer Entitle will not sign (a win-back offer for a customer who never subscribed):
    /// `OFFER_UNAVAILABLE` is thrown and nothing is bought.
    func testAnOfferEntitleRefusesBuysNothing() async throws {
        let store = purchaser()
        do {
            _ = try await client().purchase("pro.monthly", offer: "comeback", using: store)
            XCTFail("bought without a signed offer")
        } catch let error as EntitleError {
            XCTAssertEqual(error.code, "OFFER_UNAVAILABLE")
            XCTAssertEqual(error.status, 422)
            XCTAssertNotNil(error.requestId, "the server's X-Request-Id, to quote")
        }
        let bought = await store.bought
        XCTAssertEqual(bought, [], "never the regular price instead")
        let entitled = try await client().customer().customer.isEntitled(to: "pro")
        XCTAssertFalse(entitled)
    }

    /// Eligible for the introductory offer (Entitle's signed decision), a free trial bought, no
    /// longer eligible; a refund at the App Store is seen on the next refresh.
    func testATrialThenARefundSeenOnTheNextRefresh() async throws {
        let entitle = try client()
        let eligible = try await entitle.introductoryEligibility(productIds: ["pro.monthly"])
        XCTAssertEqual(eligible["pro.monthly"]?.eligible, true)
        XCTAssertNil(eligible["pro.monthly"]?.jws, "a new customer: StoreKit's own decision stands, there is no transaction to sign for")
        let store = purchaser()
        await store.setNext(.buy, introductoryOffer: (discountType: "FREE_TRIAL", period: "P1W"))
        let (transaction, state) = try purchased(try await entitle.purchase("pro.monthly", using: store))
        XCTAssertEqual(state.customer.entitlements["pro"]?.periodType, "TRIAL")
        let after = try await entitle.introductoryEligibility(productIds: ["pro.monthly"])
        XCTAssertEqual(after["pro.monthly"]?.eligible, false)
        XCTAssertNotNil(after["pro.monthly"]?.jws, "signed for StoreKit with the customer's transaction (the key has an issuer ID)")

        XCTAssertEqual(admin("POST", "/v1/test-store/apple/subscriptions/\(transaction.transactionId)/refund").0, 200)
        let refreshed = try await entitle.customer()
        XCTAssertEqual(refreshed.customer.entitlements["pro"]?.state, "REVOKED")
        XCTAssertFalse(refreshed.customer.isEntitled(to: "pro"))
    }

    /// Ask to Buy: the purchase is pending; once a parent approves, the transaction arrives
    /// through the store's updates, and the listener posts and finishes it.
    func testAskToBuyIsPendingThenTheListenerPostsTheApproval() async throws {
        let entitle = try client()
        let store = purchaser()
        let heard = LockedList<EntitleClient.PurchaseResult>()
        let listener = await entitle.listen(using: store) { result in
            if case .success(let outcome) = result { heard.append(outcome) }
        }
        defer { listener.cancel() }
        await store.setNext(.askToBuy)
        let pending = try await entitle.purchase("pro.monthly", using: store)
        XCTAssertEqual(pending, .pending)
        let entitledBeforeApproval = try await entitle.customer().customer.isEntitled(to: "pro")
        XCTAssertFalse(entitledBeforeApproval)
        try await store.approveAskToBuy()
        for _ in 0..<200 where heard.all.isEmpty { try await Task.sleep(nanoseconds: 25_000_000) }
        let (transaction, state) = try purchased(try XCTUnwrap(heard.all.first))
        XCTAssertTrue(state.customer.isEntitled(to: "pro"))
        let finished = await store.finished
        XCTAssertEqual(finished, [transaction.transactionId])
    }

    /// `customerUpdates()` hears each new customer once: not entitled, then entitled after a
    /// purchase; a refresh that changes nothing announces nothing.
    func testCustomerUpdatesAnnounceEachChange() async throws {
        let entitle = try client()
        let updates = await entitle.customerUpdates()
        var iterator = updates.makeAsyncIterator()
        _ = try await entitle.customer()
        let first = await iterator.next()
        XCTAssertEqual(first?.customer.isEntitled(to: "pro"), false)
        _ = try await entitle.customer()  // the same customer: nothing announced
        _ = try await entitle.purchase("pro.monthly", using: purchaser())
        let second = await iterator.next()
        XCTAssertEqual(second?.customer.isEntitled(to: "pro"), true, "the next announcement is the purchase, not the repeated refresh")
    }

    /// An upgrade: another product of the group bought while subscribed; the App Store changes the
    /// plan now (a new transaction), the client posts and finishes it, and the customer's
    /// entitlement comes from the new product.
    func testAnUpgradeIsBoughtPostedAndFinished() async throws {
        let entitle = try client()
        let store = purchaser()
        _ = try purchased(try await entitle.purchase("pro.monthly", using: store))
        await store.setNext(.changePlan("upgrade"))
        let (upgrade, state) = try purchased(try await entitle.purchase("pro.yearly", using: store))
        XCTAssertEqual(state.customer.entitlements["pro"]?.productId, "pro.yearly")
        XCTAssertEqual(try CompactJWS(upgrade.jwsRepresentation).payload["productId"], "pro.yearly")
        let finished = await store.finished
        XCTAssertTrue(finished.contains(upgrade.transactionId))
    }

    /// The customer cancels at the sheet: nothing is bought, posted or finished.
    func testACancelledPurchaseBuysNothing() async throws {
        let store = purchaser()
        await store.setNext(.userCancels)
        let result = try await client().purchase("pro.monthly", using: store)
        XCTAssertEqual(result, .userCancelled)
        let bought = await store.bought
        XCTAssertEqual(bought, [])
        let entitledAfterCancel = try await client().customer().customer.isEntitled(to: "pro")
        XCTAssertFalse(entitledAfterCancel)
    }

    /// Bought while Entitle could not be reached: queued on disk, not finished; after a restart
    /// (a new client over the same folder, and a store that remembers nothing) the queue is
    /// posted, then finished.
    func testAPurchaseMadeOfflineIsPostedAfterARestart() async throws {
        let store = purchaser()
        let unreachable = try client(port: 9, cache: true)  // the discard port: nothing answers there
        let result = try await unreachable.purchase("pro.monthly", using: store)
        guard case .queued(let transaction) = result else { return XCTFail("\(result)") }
        let finishedOffline = await store.finished
        XCTAssertEqual(finishedOffline, [], "not finished before Entitle has stored it")

        let restartedStore = purchaser()
        let restarted = try client(cache: true)
        let posted = try await restarted.postPendingTransactions(using: restartedStore)
        XCTAssertEqual(posted, 1, "read back from the disk")
        let finished = await restartedStore.finished
        XCTAssertEqual(finished, [transaction.transactionId])
        let entitled = try await restarted.customer().customer.isEntitled(to: "pro")
        XCTAssertTrue(entitled)
        let postedAgain = try await restarted.postPendingTransactions(using: restartedStore)
        XCTAssertEqual(postedAgain, 0, "nothing left")
    }

    /// Restore: what the store holds but Entitle never heard of (bought on another device, its
    /// post lost) is posted, and the customer read again.
    func testRestorePostsWhatTheStoreHolds() async throws {
        let store = purchaser()
        let outcome = try await store.purchase(productId: "pro.monthly", appAccountToken: token, offer: nil)
        guard case .purchased = outcome else { return XCTFail("\(outcome)") }
        let entitle = try client()
        let before = try await entitle.customer()
        XCTAssertFalse(before.customer.isEntitled(to: "pro"), "the test store notified nothing")
        let restored = try await entitle.restore(using: store)
        XCTAssertTrue(restored.customer.isEntitled(to: "pro"))
    }

    /// A man in the middle changes the answer to the post: the client refuses it and does not
    /// finish the transaction; the next post (the store still holds it unfinished) finishes it.
    func testAChangedAnswerToThePostLeavesTheTransactionUnfinished() async throws {
        let store = purchaser()
        let flipping = try startProxy("flip")
        do {
            _ = try await client(port: flipping).purchase("pro.monthly", using: store)
            XCTFail("a changed answer was taken")
        } catch let error as UntrustedAnswer {
            XCTAssertEqual(error, .changedBody)
        }
        var finished = await store.finished
        XCTAssertEqual(finished, [])
        stopProxy()
        let postedOnceTrusted = try await client().postPendingTransactions(using: store)
        XCTAssertEqual(postedOnceTrusted, 1)
        finished = await store.finished
        XCTAssertEqual(finished.count, 1)
    }

    /// The guide's purchase snippet (docs/SWIFT_CLIENT.md, "Purchases") as written, but for the
    /// store: the test store's instead of StoreKit's, and the offer the test's catalog has.
    func testTheGuidesPurchaseSnippet() async throws {
        let entitle = try client()
        // A lapsed subscriber: the App Store sells promotional offers only to customers who have or had the group.
        let (_, first) = admin(
            "POST", "/v1/test-store/apple/purchases",
            ["appAccountToken": .string(token.uuidString.lowercased()), "productId": "pro.monthly"])
        XCTAssertEqual(
            admin("POST", "/v1/test-store/apple/subscriptions/\(first["originalTransactionId"]?.stringValue ?? "")/cancel").0, 200)
        XCTAssertEqual(admin("POST", "/v1/test-store/clock", ["advance": "P1M"]).0, 200)

        var unlocked: Customer?
        func unlock(_ customer: Customer) { unlocked = customer }
        func showPendingConfirmation() { XCTFail("Entitle is up") }
        func showAskToBuyNote() { XCTFail("no Ask to Buy") }

        let store = purchaser()
        let listener = await entitle.listen(using: store)  // at launch: posts Transaction.unfinished, then Transaction.updates

        switch try await entitle.purchase("pro.monthly", offer: "welcome", using: store) {
        case .purchased(_, let state): unlock(state.customer)
        case .queued: showPendingConfirmation()  // bought; Entitle away: posted when it is back
        case .pending: showAskToBuyNote()  // the approval arrives through the listener
        case .userCancelled: break
        }
        listener.cancel()
        XCTAssertEqual(unlocked?.isEntitled(to: "pro"), true)
    }
}

/// The same with a key without an issuer ID: Entitle signs the v1 signature only, and the test
/// store checks it as the App Store does.
final class EntitleClientV1OfferTests: EntitleKitTestCase {
    func testAV1SignatureIsBought() async throws {
        let entitle = try client()
        let store = purchaser()
        guard case .purchased(let first, _) = try await entitle.purchase("pro.monthly", using: store) else { return XCTFail() }
        XCTAssertEqual(admin("POST", "/v1/test-store/apple/subscriptions/\(first.transactionId)/cancel").0, 200)
        XCTAssertEqual(admin("POST", "/v1/test-store/clock", ["advance": "P1M"]).0, 200)
        guard case .purchased(let second, let state) = try await entitle.purchase("pro.monthly", offer: "comeback", using: store) else {
            return XCTFail()
        }
        XCTAssertTrue(state.customer.isEntitled(to: "pro"))
        XCTAssertEqual(try CompactJWS(second.jwsRepresentation).payload["offerIdentifier"], "pro_monthly_comeback")
    }
}
