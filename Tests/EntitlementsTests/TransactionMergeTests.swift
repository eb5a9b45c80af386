import Entitlements
import XCTest

/// `TransactionRecord.merged`: each transaction once (its newest copy), in purchase order.
final class TransactionMergeTests: XCTestCase {
    private func record(_ id: String, purchased: Int64, signed: Int64, expires: Int64 = 9_000) -> TransactionRecord {
        TransactionRecord(
            transactionId: id, originalTransactionId: "1", productId: "pro.monthly", subscriptionGroupIdentifier: "G1",
            purchaseDate: purchased, expiresDate: expires, environment: "Sandbox", signedDate: signed)
    }

    func testWhatIsMergedAlreadyStaysAsItIs() {
        let stored = [record("1", purchased: 10, signed: 1), record("2", purchased: 20, signed: 2), record("3", purchased: 30, signed: 3)]
        XCTAssertEqual(TransactionRecord.merged(stored), stored)
    }

    func testACopyInOrderButRepeatedKeepsOnlyItsNewest() {
        // In purchase order, yet transaction 2 twice (its purchase date corrected by a newer copy).
        let older = record("2", purchased: 15, signed: 1, expires: 5_000)
        let newer = record("2", purchased: 20, signed: 7, expires: 8_000)
        let merged = TransactionRecord.merged([record("1", purchased: 10, signed: 1), older, newer])
        XCTAssertEqual(merged.map(\.transactionId), ["1", "2"])
        XCTAssertEqual(merged.last, newer)
    }

    func testOutOfOrderIsSorted() {
        let merged = TransactionRecord.merged([record("3", purchased: 30, signed: 1), record("1", purchased: 10, signed: 1)])
        XCTAssertEqual(merged.map(\.transactionId), ["1", "3"])
    }
}
