import AppStore
import Crypto
import Foundation
import JSON
import TestSupport
import XCTest

/// Every status of docs/APP_STORE.md §3.2 on chains minted by `make-chain.sh`.
final class SignedDataVerifierTests: XCTestCase {
    /// Minted once for the whole class (a few `openssl` runs).
    private static let sharedChain = Result { try TestChain() }
    private var chain: TestChain { try! Self.sharedChain.get() }

    /// The shared chain lives as long as the process; its folder goes when the class is done.
    override class func tearDown() {
        if let folder = try? sharedChain.get().folder { try? FileManager.default.removeItem(at: folder) }
    }

    private func verifier(
        roots: [Certificate]? = nil, bundleId: String = "com.example.app",
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            .init(
                rootCertificates: roots ?? [chain.root], bundleId: bundleId, appAppleId: nil,
                environment: .sandbox, onlineChecks: false), clock: clock)
    }

    private func transaction(signedAt date: Date? = nil, extra: JSONObject = [:]) -> JSONObject {
        var payload: JSONObject = [
            "transactionId": "1000", "originalTransactionId": "1000", "bundleId": "com.example.app",
            "productId": "pro.monthly", "environment": "Sandbox",
            "signedDate": .int(TestChain.milliseconds(date ?? chain.mintedAt.addingTimeInterval(3600))),
        ]
        for member in extra.members { payload[member.key] = member.value }
        return payload
    }

    private func status(_ jws: String, _ verifier: SignedDataVerifier? = nil) throws -> String {
        try (verifier ?? self.verifier()).verifyTransaction(jws).statusName
    }

    func testValidAndTheUntrustedThirdCertificate() throws {
        let valid = try chain.sign(transaction())
        XCTAssertEqual(try status(valid), "VALID")
        XCTAssertEqual(try verifier().verifyTransaction(valid).payload?.transactionId, "1000")
        var header = try chain.header()
        header["x5c"] = .array([
            .string(try chain.x5c("leaf.pem")), .string(try chain.x5c("intermediate.pem")),
            .string(try chain.x5c("other-root.pem")),
        ])
        XCTAssertEqual(try status(try chain.sign(transaction(), header: header)), "VALID", "x5c[2] is never used")
        XCTAssertEqual(try status(valid, try verifier(roots: [chain.otherRoot])), "INVALID_CHAIN", "trust comes from configuration")
    }

    func testHeaderProblems() throws {
        for alg in ["ES384", "none", "HS256"] {
            var header = try chain.header()
            header["alg"] = .string(alg)
            XCTAssertEqual(try status(try chain.sign(transaction(), header: header)), "INVALID_JWT_FORMAT", alg)
        }
        // RFC 7515 §4.1.11: critical extensions this verifier does not process are refused, as
        // Apple's library (PyJWT under it) refuses them.
        for critical in [JSONValue.array(["exp"]), .array([]), "b64"] {
            var header = try chain.header()
            header["crit"] = critical
            XCTAssertEqual(try status(try chain.sign(transaction(), header: header)), "INVALID_JWT_FORMAT", critical.serializedString)
        }
        var missing = try chain.header()
        missing["x5c"] = nil
        XCTAssertEqual(try status(try chain.sign(transaction(), header: missing)), "INVALID_JWT_FORMAT")
        let x5c = try chain.header()["x5c"]!.arrayValue!
        for certificates in [Array(x5c.prefix(2)), x5c + [x5c[2]], []] {
            var header = try chain.header()
            header["x5c"] = .array(certificates)
            XCTAssertEqual(try status(try chain.sign(transaction(), header: header)), "INVALID_CHAIN_LENGTH", "\(certificates.count)")
        }
        for bad in ["abc", "YWJj"] {
            var header = try chain.header()
            header["x5c"] = .array([.string(bad), x5c[1], x5c[2]])
            XCTAssertEqual(try status(try chain.sign(transaction(), header: header)), "INVALID_CERTIFICATE", bad)
        }
    }

    func testChainProblems() throws {
        func signed(leaf: String, intermediate: String) throws -> String {
            var header = try chain.header()
            header["x5c"] = .array([.string(try chain.x5c(leaf)), .string(try chain.x5c(intermediate)), .string(try chain.x5c("root.pem"))])
            return try chain.sign(transaction(), header: header)
        }
        let noLeafOID = try verifier().verifyTransaction(try signed(leaf: "leaf-no-oid.pem", intermediate: "intermediate.pem"))
        XCTAssertEqual(noLeafOID.failure?.status, .invalidChain)
        XCTAssertTrue(noLeafOID.failure?.reason.contains("leaf lacks") == true)
        let noIntermediateOID = try verifier().verifyTransaction(try signed(leaf: "leaf.pem", intermediate: "intermediate-no-oid.pem"))
        XCTAssertEqual(noIntermediateOID.failure?.status, .invalidChain)
        XCTAssertTrue(noIntermediateOID.failure?.reason.contains("intermediate lacks") == true)
        XCTAssertEqual(try status(try signed(leaf: "rogue-leaf.pem", intermediate: "intermediate.pem")), "INVALID_CHAIN")

        // Offline, the effective date is the payload's signedDate: after the leaf's 30 days it is expired.
        let late = try verifier().verifyTransaction(try chain.sign(transaction(signedAt: chain.mintedAt.addingTimeInterval(40 * 86_400))))
        XCTAssertEqual(late.failure?.status, .invalidChain)
        XCTAssertTrue(late.failure?.reason.contains("leaf certificate expired") == true, late.failure?.reason ?? "")
    }

    func testSignatureProblems() throws {
        let valid = try chain.sign(transaction())
        let parts = valid.split(separator: ".").map(String.init)
        let tampered = Base64.encodeURL(JSONValue.object(transaction(extra: ["productId": "pro.yearly"])).serializedBytes)
        XCTAssertEqual(try status(parts[0] + "." + tampered + "." + parts[2]), "VERIFICATION_FAILURE")
        XCTAssertEqual(try status(try chain.sign(transaction(), key: try P256.Signing.PrivateKey())), "VERIFICATION_FAILURE")
        let short = Base64.encodeURL(try Base64.decodeURL(parts[2]).dropLast())
        XCTAssertEqual(try status(parts[0] + "." + parts[1] + "." + short), "VERIFICATION_FAILURE")
    }

    func testMalformedInput() throws {
        let valid = try chain.sign(transaction())
        XCTAssertEqual(try status("  \n" + valid + "\n"), "VALID", "surrounding whitespace is stripped")
        for input in ["", "abc", String(valid.prefix(valid.count / 2)), valid + ".x", "a.b.c", "!!!.@@@.###"] {
            XCTAssertEqual(try status(input), "INVALID_JWT_FORMAT", String(input.prefix(20)))
        }
        // A 1 MiB header and deeply nested JSON are refused as format errors.
        var huge = try chain.header()
        huge["padding"] = .string(String(repeating: "a", count: 1 << 20))
        XCTAssertEqual(try status(try chain.sign(transaction(), header: huge)), "INVALID_JWT_FORMAT")
        let nested = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let deep = Base64.encodeURL(Array("{\"x\":\(nested)}".utf8))
        let parts = valid.split(separator: ".").map(String.init)
        XCTAssertEqual(try status(parts[0] + "." + deep + "." + parts[2]), "INVALID_JWT_FORMAT")
        // Type mismatches fail the decode; unknown members and enum values do not.
        XCTAssertEqual(try status(try chain.sign(transaction(extra: ["quantity": "one"]))), "INVALID_JWT_FORMAT")
        XCTAssertEqual(try status(try chain.sign(transaction(extra: ["appAccountToken": "not-a-uuid"]))), "INVALID_JWT_FORMAT")
        let future = try verifier().verifyTransaction(
            try chain.sign(
                transaction(extra: [
                    "offerType": 9, "newField": "x",
                    "type": "Future Type",
                ])))
        XCTAssertEqual(future.payload?.offerType, OfferType(rawValue: 9))
        XCTAssertEqual(future.payload?.offerType?.isKnown, false)
        XCTAssertEqual(future.payload?.type?.rawValue, "Future Type")
        XCTAssertNil(future.payload?.knownJSON["newField"])
    }

    func testIdentityAndEnvironment() throws {
        XCTAssertEqual(try status(try chain.sign(transaction()), try verifier(bundleId: "com.other")), "INVALID_APP_IDENTIFIER")
        XCTAssertEqual(try status(try chain.sign(transaction(extra: ["environment": "Production"]))), "INVALID_ENVIRONMENT")
        XCTAssertEqual(try status(try chain.sign(transaction(extra: ["environment": "Sandboxx"]))), "INVALID_ENVIRONMENT")
        let both = try chain.sign(transaction(extra: ["environment": "Production"]))
        XCTAssertEqual(try status(both, try verifier(bundleId: "com.other")), "INVALID_APP_IDENTIFIER", "identity is checked first")
        XCTAssertThrowsError(
            try SignedDataVerifier(
                .init(
                    rootCertificates: [chain.root], bundleId: "b", appAppleId: nil,
                    environment: .production, onlineChecks: false)))
    }

    func testNestedItemsOfANotificationAreVerified() throws {
        let transaction = try chain.sign(transaction())
        func notification(_ nested: String) throws -> String {
            try chain.sign([
                "notificationType": "DID_RENEW", "notificationUUID": "7a0b1c2d-0000-4000-8000-000000000001",
                "signedDate": .int(TestChain.milliseconds(chain.mintedAt.addingTimeInterval(3600))),
                "data": .object([
                    "bundleId": "com.example.app", "environment": "Sandbox",
                    "signedTransactionInfo": .string(nested),
                ]),
            ])
        }
        let valid = try verifier().verifyNotificationAndContents(try notification(transaction))
        XCTAssertEqual(valid.payload?.transaction?.transactionId, "1000")
        // The outer signature is good, the nested transaction is forged: as in Apple's library the
        // notification is VALID, and the nested verdict says the item is not.
        let forged = try chain.sign(self.transaction(), key: try P256.Signing.PrivateKey())
        let result = try verifier().verifyNotificationAndContents(try notification(forged))
        XCTAssertEqual(result.statusName, "VALID")
        XCTAssertEqual(result.payload?.transactionResult?.failure?.status, .verificationFailure)
        XCTAssertNil(result.payload?.transaction)
        XCTAssertTrue(
            result.payload?.firstNestedFailure?.reason.hasPrefix("signedTransactionInfo:") == true,
            result.payload?.firstNestedFailure?.reason ?? "")
        let garbage = try verifier().verifyNotificationAndContents(try notification("not.a-jws"))
        XCTAssertEqual(garbage.statusName, "VALID")
        XCTAssertEqual(garbage.payload?.transactionResult?.failure?.status, .invalidJWTFormat)
        XCTAssertEqual(
            try verifier().verifyNotification(try notification(forged)).statusName, "VALID",
            "the outer operation alone does not vouch for nested items")
    }

    func testChainCache() throws {
        let clock = TestClock(chain.mintedAt.addingTimeInterval(7200))
        let verifier = try verifier(clock: { clock.now })
        let valid = try chain.sign(transaction())
        XCTAssertEqual(try status(valid, verifier), "VALID")
        XCTAssertEqual(try status(valid, verifier), "VALID")
        XCTAssertEqual(verifier.chainValidationCount, 1, "the second verify reuses the validated chain")

        // A hit still honours each payload's effective date.
        let late = try chain.sign(transaction(signedAt: chain.mintedAt.addingTimeInterval(40 * 86_400)))
        XCTAssertEqual(try status(late, verifier), "INVALID_CHAIN")
        XCTAssertEqual(verifier.chainValidationCount, 1)

        var header = try chain.header()
        header["x5c"] = .array([
            .string(try chain.x5c("leaf.pem")), .string(try chain.x5c("intermediate-no-oid.pem")),
            .string(try chain.x5c("root.pem")),
        ])
        XCTAssertEqual(try status(try chain.sign(transaction(), header: header), verifier), "INVALID_CHAIN")
        XCTAssertEqual(verifier.chainValidationCount, 2, "another intermediate is another chain")
        XCTAssertEqual(try status(try chain.sign(transaction(), header: header), verifier), "INVALID_CHAIN")
        XCTAssertEqual(verifier.chainValidationCount, 3, "failures are not cached")

        clock.advance(899)
        XCTAssertEqual(try status(valid, verifier), "VALID")
        XCTAssertEqual(verifier.chainValidationCount, 3)
        clock.advance(1)
        XCTAssertEqual(try status(valid, verifier), "VALID")
        XCTAssertEqual(verifier.chainValidationCount, 4, "stale at exactly 15 minutes")
    }
}

final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    init(_ start: Date) { current = start }
    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }
    func advance(_ seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }
}
