import AppStore
import Crypto
import Entitlements
import Foundation
import JSON
import TestSupport
import XCTest

/// The real Apple-signed subscriber timeline of `../shared/conformance/real-appstore/` (manifest
/// `entitlementTimeline`), replayed through verification and the engine: after each notification
/// the state is what Apple's own `data.status` and the manifest say, traps included.
final class RealTimelineTests: XCTestCase {
    func testTimeline() throws {
        let conformance = try conformanceDirectory()
        let folder = conformance.appendingPathComponent("real-appstore")
        let manifest = try JSONParser.parse([UInt8](Data(contentsOf: folder.appendingPathComponent("manifest.json"))))
        let timeline = try XCTUnwrap(manifest["entitlementTimeline"])
        let roots = try Certificate.load(contentsOf: conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path)
        let verifier = try SignedDataVerifier(
            .init(
                rootCertificates: roots, bundleId: timeline["subscriber"]!["bundleId"]!.stringValue!,
                appAppleId: nil, environment: .sandbox, onlineChecks: false))
        var transactions: [TransactionRecord] = []
        var renewals: [RenewalRecord] = []
        for step in try XCTUnwrap(timeline["steps"]?.arrayValue) {
            let name = step["notification"]!.stringValue!
            let jws = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            let verified = try XCTUnwrap(verifier.verifyNotificationAndContents(jws).payload, name)
            if let transaction = verified.transaction.flatMap(TransactionRecord.init) { transactions.append(transaction) }
            if let renewal = verified.renewalInfo.flatMap(RenewalRecord.init) { renewals.append(renewal) }
            let now = try XCTUnwrap(step["signedDate"]?.int64Value)
            let state = try XCTUnwrap(
                SubscriptionEngine.evaluate(
                    transactions: transactions, renewal: RenewalRecord.newest(renewals),
                    now: now, environment: "Sandbox", billingRetryGrantsAccess: false))
            let expected = try XCTUnwrap(step["expected"])
            XCTAssertEqual(state.isActive, expected["entitled"]?.boolValue, name)
            XCTAssertEqual(state.isActive, step["appleStatus"]?.int64Value == 1, "\(name): Apple's data.status agrees")
            XCTAssertEqual(state.transactionId, expected["currentTransactionId"]?.stringValue, name)
            XCTAssertEqual(state.productId, expected["currentProductId"]?.stringValue, name)
            XCTAssertEqual(state.expiresDate, expected["currentExpiresDate"]?.int64Value, name)
            if let autoRenewProduct = expected["autoRenewProductId"]?.stringValue {
                XCTAssertEqual(state.autoRenewProductId, autoRenewProduct, name)
            }
            if let autoRenew = expected["autoRenewStatus"]?.int64Value {
                XCTAssertEqual(state.willRenew, autoRenew == 1 && state.isActive, name)
            }
        }
    }
}
