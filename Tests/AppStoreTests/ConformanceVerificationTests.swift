import AppStore
import Crypto
import Entitlements
import Foundation
import JSON
import TestSupport
import XCTest

/// Real Apple-signed data and Apple's library fixtures from `../shared/conformance`, with the
/// verdicts their READMEs and manifest list.
final class ConformanceVerificationTests: XCTestCase {
    private func text(_ url: URL) throws -> String {
        try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func verifier(
        roots: [Certificate], bundleId: String, environment: AppStoreEnvironment = .sandbox,
        appAppleId: Int64? = nil, now: Date = Date()
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            .init(
                rootCertificates: roots, bundleId: bundleId, appAppleId: appAppleId,
                environment: environment, onlineChecks: false), clock: { now })
    }

    private func verify(_ verifier: SignedDataVerifier, _ kind: String, _ jws: String, at date: Date? = nil) -> String {
        switch kind {
        case "transaction": verifier.verifyTransaction(jws, effectiveDate: date).statusName
        case "renewalInfo": verifier.verifyRenewalInfo(jws, effectiveDate: date).statusName
        case "notification": verifier.verifyNotification(jws, effectiveDate: date).statusName
        case "appTransaction": verifier.verifyAppTransaction(jws, effectiveDate: date).statusName
        default: "unknown kind \(kind)"
        }
    }

    func testRealAppStoreManifest() throws {
        let conformance = try conformanceDirectory()
        let folder = conformance.appendingPathComponent("real-appstore")
        let manifest = try JSONParser.parse([UInt8](Data(contentsOf: folder.appendingPathComponent("manifest.json"))))
        let g3 = try Certificate.load(contentsOf: conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path)
        XCTAssertEqual(AppleRootCertificates.appleRootName(of: g3[0]), "Apple Root CA - G3")
        let files = try XCTUnwrap(manifest["files"]?.arrayValue)
        XCTAssertEqual(files.count, 46)
        let now = ISO8601DateFormatter().date(from: "2026-11-29T00:00:00Z")!
        var validNow = 0
        for file in files {
            let name = try XCTUnwrap(file["file"]?.stringValue)
            let kind = try XCTUnwrap(file["kind"]?.stringValue)
            let jws = try text(folder.appendingPathComponent(name))
            let bundleId = file["bundleId"]?.stringValue ?? "any.bundle"
            let expected = try XCTUnwrap(file["expected"])
            let sandbox = try verifier(roots: g3, bundleId: bundleId)
            XCTAssertEqual(verify(sandbox, kind, jws), expected["atSignedDate"]?.stringValue, "\(name) at signedDate")
            let atNow = try XCTUnwrap(expected["atNow"]?["examples"]?["2026-11-29T00:00:00Z"]?.stringValue)
            XCTAssertEqual(verify(sandbox, kind, jws, at: now), atNow, "\(name) at 2026-11-29")
            if atNow == "VALID" { validNow += 1 }
            let wrong = try verifier(roots: g3, bundleId: "com.example.not-this-app")
            XCTAssertEqual(verify(wrong, kind, jws), expected["wrongBundleId"]?.stringValue, "\(name) wrong bundle")
            let production = try verifier(roots: g3, bundleId: bundleId, environment: .production, appAppleId: 1_470_168_868)
            XCTAssertEqual(verify(production, kind, jws), expected["productionVerifier"]?.stringValue, "\(name) production")
        }
        XCTAssertEqual(validNow, 42)

        // The negative controls.
        let testCA = try Certificate.load(contentsOf: conformance.appendingPathComponent("apple-library-fixtures/certs/testCA.der").path)
        let foreign = try text(folder.appendingPathComponent("negative/apple-library-testCA-transactionInfo.jws"))
        XCTAssertEqual(try verifier(roots: g3, bundleId: "com.example").verifyTransaction(foreign).statusName, "INVALID_CHAIN")
        XCTAssertEqual(try verifier(roots: testCA, bundleId: "com.example").verifyTransaction(foreign).statusName, "VALID")
        let xcode = try text(folder.appendingPathComponent("negative/xcode-signed-app-transaction.jws"))
        let xcodeBundle = "com.example.naturelab.backyardbirds.example"
        XCTAssertEqual(try verifier(roots: g3, bundleId: xcodeBundle).verifyAppTransaction(xcode).statusName, "INVALID_CHAIN_LENGTH")
        XCTAssertEqual(
            try verifier(roots: g3, bundleId: xcodeBundle, environment: .production, appAppleId: 1)
                .verifyAppTransaction(xcode).statusName, "INVALID_CHAIN_LENGTH")
        XCTAssertEqual(try verifier(roots: [], bundleId: xcodeBundle, environment: .xcode).verifyAppTransaction(xcode).statusName, "VALID")
    }

    func testRealTransactionFieldsDecode() throws {
        let conformance = try conformanceDirectory()
        let folder = conformance.appendingPathComponent("real-appstore")
        let manifest = try JSONParser.parse([UInt8](Data(contentsOf: folder.appendingPathComponent("manifest.json"))))
        let g3 = try Certificate.load(contentsOf: conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path)
        for file in manifest["files"]!.arrayValue! where file["kind"]?.stringValue == "transaction" {
            let jws = try text(folder.appendingPathComponent(file["file"]!.stringValue!))
            let payload = try XCTUnwrap(try verifier(roots: g3, bundleId: file["bundleId"]!.stringValue!).verifyTransaction(jws).payload)
            let fields = try XCTUnwrap(file["fields"]?.objectValue)
            for (key, value) in fields.members {
                switch key {
                case "transactionId": XCTAssertEqual(payload.transactionId, value.stringValue)
                case "originalTransactionId": XCTAssertEqual(payload.originalTransactionId, value.stringValue)
                case "productId": XCTAssertEqual(payload.productId, value.stringValue)
                case "expiresDate": XCTAssertEqual(payload.expiresDate, value.int64Value)
                case "purchaseDate": XCTAssertEqual(payload.purchaseDate, value.int64Value)
                case "revocationDate": XCTAssertEqual(payload.revocationDate, value.int64Value)
                case "isUpgraded": XCTAssertEqual(payload.isUpgraded, value.boolValue)
                default: continue
                }
            }
        }
    }

    func testAppleLibraryMockSignedData() throws {
        let conformance = try conformanceDirectory()
        let fixtures = conformance.appendingPathComponent("apple-library-fixtures")
        let testCA = try Certificate.load(contentsOf: fixtures.appendingPathComponent("certs/testCA.der").path)
        func mock(_ name: String) throws -> String { try text(fixtures.appendingPathComponent("mock_signed_data/\(name)")) }
        let sandbox = try verifier(roots: testCA, bundleId: "com.example")

        let notification = try mock("testNotification")
        let decoded = try XCTUnwrap(sandbox.verifyNotification(notification).payload)
        XCTAssertEqual(decoded.notificationType?.rawValue, "TEST")
        XCTAssertEqual(
            try verifier(roots: testCA, bundleId: "com.example", environment: .production, appAppleId: 1234)
                .verifyNotification(notification).statusName, "INVALID_ENVIRONMENT")
        XCTAssertEqual(
            try verifier(roots: testCA, bundleId: "com.example", environment: .production, appAppleId: 1235)
                .verifyNotification(notification).statusName, "INVALID_APP_IDENTIFIER")
        XCTAssertEqual(sandbox.verifyTransaction(notification).statusName, "INVALID_APP_IDENTIFIER")

        XCTAssertEqual(sandbox.verifyTransaction(try mock("transactionInfo")).statusName, "VALID")
        XCTAssertEqual(
            try verifier(roots: testCA, bundleId: "com.example.x").verifyTransaction(try mock("transactionInfo")).statusName,
            "INVALID_APP_IDENTIFIER")
        XCTAssertEqual(sandbox.verifyRenewalInfo(try mock("renewalInfo")).statusName, "VALID")
        XCTAssertEqual(sandbox.verifyNotification(try mock("wrongBundleId")).statusName, "INVALID_APP_IDENTIFIER")
        XCTAssertEqual(sandbox.verifyNotification(try mock("missingX5CHeaderClaim")).statusName, "INVALID_JWT_FORMAT")
        XCTAssertEqual(sandbox.verifyTransaction(try mock("legacyTransaction")).statusName, "INVALID_JWT_FORMAT")
    }

    func testAppleLibraryXcodeData() throws {
        let conformance = try conformanceDirectory()
        let folder = conformance.appendingPathComponent("apple-library-fixtures/xcode")
        let xcode = try verifier(roots: [], bundleId: "com.example.naturelab.backyardbirds.example", environment: .xcode)
        let app = try XCTUnwrap(xcode.verifyAppTransaction(try text(folder.appendingPathComponent("xcode-signed-app-transaction"))).payload)
        XCTAssertEqual(app.receiptCreationDate, 1_697_680_122_257, "fractional milliseconds truncate")
        XCTAssertEqual(app.json["originalPurchaseDate"]?.int64Value, -62_135_769_600_000)
        XCTAssertNil(app.appAppleId)
        let transaction = try XCTUnwrap(
            xcode.verifyTransaction(try text(folder.appendingPathComponent("xcode-signed-transaction"))).payload)
        XCTAssertEqual(transaction.productId, "pass.premium")
        XCTAssertEqual(transaction.purchaseDate, 1_697_679_936_049)
        XCTAssertEqual(transaction.offerType, OfferType(rawValue: 1))
        XCTAssertEqual(transaction.type, .autoRenewable)
        let renewal = try XCTUnwrap(xcode.verifyRenewalInfo(try text(folder.appendingPathComponent("xcode-signed-renewal-info"))).payload)
        XCTAssertEqual(renewal.autoRenewStatus, AutoRenewStatus(rawValue: 1))
        XCTAssertEqual(renewal.renewalDate, 1_700_358_336_049)
    }

    /// Apple's signed-model fixtures, wrapped in a JWS signed by a random key and verified with a
    /// LocalTesting verifier (no cryptography), then compared field by field.
    func testAppleLibraryModelsDecode() throws {
        let conformance = try conformanceDirectory()
        let folder = conformance.appendingPathComponent("apple-library-fixtures/models")
        let key = try P256.Signing.PrivateKey()
        let local = try verifier(roots: [], bundleId: "com.example", environment: .localTesting)
        func signed(_ name: String) throws -> String {
            let json = try JSONParser.parse([UInt8](Data(contentsOf: folder.appendingPathComponent(name))))
            return try JWSSigner.sign(header: ["alg": "ES256"], payload: json.objectValue!, with: key)
        }
        let transaction = try XCTUnwrap(local.verifyTransaction(try signed("signedTransaction.json")).payload)
        XCTAssertEqual(transaction.transactionId, "23456")
        XCTAssertEqual(transaction.appAccountToken, "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        XCTAssertEqual(transaction.revocationReason, RevocationReason(rawValue: 1))
        XCTAssertEqual(transaction.price, 10990)
        XCTAssertEqual(transaction.json["advancedCommerceInfo"]?["items"]?.arrayValue?.first?["SKU"]?.stringValue != nil, true)
        let revoked = try XCTUnwrap(local.verifyTransaction(try signed("signedTransactionWithRevocation.json")).payload)
        XCTAssertEqual(revoked.revocationType?.rawValue, "REFUND_PRORATED")
        XCTAssertEqual(revoked.revocationPercentage, 50000)
        let renewal = try XCTUnwrap(local.verifyRenewalInfo(try signed("signedRenewalInfo.json")).payload)
        XCTAssertEqual(renewal.eligibleWinBackOfferIds, ["eligible1", "eligible2"])
        XCTAssertEqual(renewal.gracePeriodExpiresDate, 1_698_148_900_000)
        // The 12-month commitment billed monthly, as the facts Entitle keeps of it.
        let record = try XCTUnwrap(TransactionRecord(transaction))
        XCTAssertEqual(record.billingPlanType, "MONTHLY")
        XCTAssertEqual(
            record.commitment,
            TransactionCommitment(
                billingPeriodNumber: 3, totalBillingPeriods: 12, commitmentExpiresDate: 1_698_150_000_000, commitmentPrice: 119_880))
        let renewalRecord = try XCTUnwrap(RenewalRecord(renewal))
        XCTAssertEqual(renewalRecord.renewalBillingPlanType, "MONTHLY")
        XCTAssertEqual(
            renewalRecord.commitment,
            RenewalCommitment(
                autoRenewStatus: 1, autoRenewProductId: "com.example.product.commitment", renewalBillingPlanType: "MONTHLY",
                renewalDate: 1_698_149_500_000, renewalPrice: 9_990))
        let notification = try XCTUnwrap(local.verifyNotification(try signed("signedNotification.json")).payload)
        XCTAssertEqual(notification.subtype?.rawValue, "INITIAL_BUY")
        XCTAssertEqual(notification.data?.status, SubscriptionStatus(rawValue: 1))
        let consumption = try XCTUnwrap(local.verifyNotification(try signed("signedConsumptionRequestNotification.json")).payload)
        XCTAssertEqual(consumption.data?.consumptionRequestReason?.rawValue, "UNINTENDED_PURCHASE")
        XCTAssertEqual(local.verifyNotification(try signed("signedSummaryNotification.json")).statusName, "VALID")
        XCTAssertEqual(local.verifyNotification(try signed("signedRescindConsentNotification.json")).statusName, "VALID")
        // External purchase tokens derive their environment; a LocalTesting verifier rejects both.
        XCTAssertEqual(
            local.verifyNotification(try signed("signedExternalPurchaseTokenNotification.json")).statusName,
            "INVALID_ENVIRONMENT")
        let sandboxToken = try signed("signedExternalPurchaseTokenSandboxNotification.json")
        let decodedToken = try XCTUnwrap(try CompactJWS(sandboxToken).payload["externalPurchaseToken"]?.objectValue)
        XCTAssertEqual(
            try ResponseBodyV2DecodedPayload(decoding: ["externalPurchaseToken": .object(decodedToken)]).identity.environment,
            "Sandbox")
        let app = try XCTUnwrap(local.verifyAppTransaction(try signed("appTransaction.json")).payload)
        XCTAssertEqual(app.appAppleId, 531_412)
        XCTAssertEqual(app.originalPlatform?.rawValue, "iOS")
        let realtime = try XCTUnwrap(local.verifyRealtimeRequest(try signed("decodedRealtimeRequest.json")).payload)
        XCTAssertEqual(realtime.appAppleId, 531_412)
    }
}
