import EntitleKit
import Foundation
import XCTest

/// The app's download posted once, against a real server, the test store standing in for
/// StoreKit's `AppTransaction.shared`: stored and shown on the customer, not posted again (not
/// even after a restart), told later when Entitle cannot be reached, posted by the listener at
/// launch, and never taken as posted from an answer that was changed on the way.
final class EntitleClientAppTransactionTests: EntitleKitTestCase {
    func testTheDownloadIsPostedOnceAndShownOnTheCustomer() async throws {
        let store = purchaser()
        let entitle = try client(cache: true)
        let posted = try await entitle.postAppTransaction(using: store)
        XCTAssertTrue(posted)
        let download = try await entitle.customer().customer.appDownload
        XCTAssertEqual(download?.environment, "Sandbox")
        XCTAssertEqual(download?.originalApplicationVersion, "1.0")
        XCTAssertNotNil(download?.originalPurchaseDate)
        let again = try await entitle.postAppTransaction(using: store)
        XCTAssertFalse(again, "the customer shows this download already")

        let restarted = try client(cache: true)
        let afterRestart = try await restarted.postAppTransaction(using: purchaser())
        XCTAssertFalse(afterRestart, "the verified customer kept on disk remembers it")
        let fresh = try client()
        let withoutCache = try await fresh.postAppTransaction(using: purchaser())
        XCTAssertTrue(withoutCache, "without a cache it is posted again, and Entitle keeps the same download")
        let same = try await fresh.customer().customer.appDownload
        XCTAssertEqual(same?.appTransactionId, download?.appTransactionId)
    }

    func testOfflineTheDownloadIsToldLater() async throws {
        let unreachable = try client(port: 9, cache: true)  // the discard port: nothing answers there
        do {
            try await unreachable.postAppTransaction(using: purchaser())
            XCTFail("posted to nobody")
        } catch is EntitleUnreachable {}
        let back = try client(cache: true)
        let posted = try await back.postAppTransaction(using: purchaser())
        XCTAssertTrue(posted, "nothing marked it posted while Entitle was away")
    }

    func testTheListenerPostsTheDownloadAtLaunch() async throws {
        let entitle = try client()
        let updates = await entitle.customerUpdates()
        let listener = await entitle.listen(using: purchaser())
        defer { listener.cancel() }
        var iterator = updates.makeAsyncIterator()
        let heard = await iterator.next()
        XCTAssertNotNil(heard?.customer.appDownload, "the customer with the download the listener posted")
    }

    func testAChangedAnswerDoesNotMarkTheDownloadPosted() async throws {
        let flipping = try startProxy("flip")
        do {
            try await client(port: flipping, cache: true).postAppTransaction(using: purchaser())
            XCTFail("a changed answer was trusted")
        } catch is UntrustedAnswer {}
        stopProxy()
        let posted = try await client(cache: true).postAppTransaction(using: purchaser())
        XCTAssertTrue(posted, "the refused answer was not kept")
    }

    /// The guide's snippet (docs/SWIFT_CLIENT.md, "The AppTransaction") as written: a customer who
    /// first downloaded 1.0 (the test store's default) is one of the earlier buyers.
    func testTheGuidesAppTransactionSnippet() async throws {
        let entitle = try client()
        try await entitle.postAppTransaction(using: purchaser())
        var unlockedForEarlierBuyers = false
        if let download = try await entitle.customer().customer.appDownload,
            let version = download.originalApplicationVersion, version.compare("2.0", options: .numeric) == .orderedAscending
        {
            // bought the app before it went free: unlock what buyers of 1.x had
            unlockedForEarlierBuyers = true
        }
        XCTAssertTrue(unlockedForEarlierBuyers)
    }
}
