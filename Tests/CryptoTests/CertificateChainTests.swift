import Crypto
import Foundation
import TestSupport
import XCTest

/// X.509 parsing and chain validation at a chosen time, on a chain minted by `Tests/TestSupport/make-chain.sh`
/// and on the certificates of Apple's library tests in `../shared/conformance`.
final class CertificateChainTests: XCTestCase {
    private var folder: URL!
    private var mintedAt = Date()

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory()
        mintedAt = Date()
        let script = packageRoot.appendingPathComponent("Tests/TestSupport/make-chain.sh").path
        let result = try runProcess("/bin/sh", [script, folder.path])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func certificate(_ name: String) throws -> Certificate {
        try Certificate(pemEncoded: String(contentsOfFile: folder.appendingPathComponent(name).path, encoding: .utf8))
    }

    func testParsesFields() throws {
        let leaf = try certificate("leaf.pem")
        XCTAssertEqual(leaf.subject, "O=Entitle Tests,CN=Entitle Test Leaf")
        XCTAssertEqual(leaf.issuer, "O=Entitle Tests,CN=Entitle Test Intermediate")
        XCTAssertEqual(leaf.serialNumberHex, "03")
        XCTAssertEqual(leaf.notBefore.timeIntervalSince1970, mintedAt.timeIntervalSince1970, accuracy: 120)
        XCTAssertEqual(leaf.notAfter.timeIntervalSince(leaf.notBefore), 30 * 86_400, accuracy: 1)
        XCTAssertTrue(leaf.hasExtension(oid: "1.2.840.113635.100.6.11.1"))
        XCTAssertFalse(leaf.hasExtension(oid: "1.2.840.113635.100.6.2.1"))
        XCTAssertTrue(try certificate("intermediate.pem").hasExtension(oid: "1.2.840.113635.100.6.2.1"))
        XCTAssertTrue(leaf.hasExtension(oid: "2.5.29.15"), "key usage")

        let key = try P256.Signing.PrivateKey(
            pemRepresentation: String(contentsOfFile: folder.appendingPathComponent("leaf.key").path, encoding: .utf8))
        XCTAssertEqual(leaf.publicKeyDER, try key.publicKey.derRepresentation)
        XCTAssertNotNil(leaf.p256PublicKey)

        let der = [UInt8](try Data(contentsOf: folder.appendingPathComponent("leaf.der")))
        XCTAssertEqual(try Certificate(derEncoded: der), leaf, "DER and PEM give the same certificate")
        XCTAssertEqual(leaf.sha256Fingerprint, SHA256.hexDigest(der))
        XCTAssertThrowsError(try Certificate(derEncoded: der.dropLast()))
        XCTAssertThrowsError(try Certificate(derEncoded: Array("abc".utf8)))
    }

    func testChainOutcomes() throws {
        let leaf = try certificate("leaf.pem")
        let intermediate = try certificate("intermediate.pem")
        let root = try certificate("root.pem")
        let verifier = try CertificateChainVerifier(trustedRoots: [root])
        let inside = mintedAt.addingTimeInterval(86_400)

        guard case .valid(let chain) = verifier.verify(leaf: leaf, intermediates: [intermediate], at: inside) else {
            return XCTFail("valid chain rejected")
        }
        XCTAssertEqual(chain, [leaf, intermediate, root])

        let afterExpiry = mintedAt.addingTimeInterval(60 * 86_400)
        XCTAssertEqual(
            failure(verifier.verify(leaf: leaf, intermediates: [intermediate], at: afterExpiry)),
            .expired(depth: 0))
        let beforeIssue = mintedAt.addingTimeInterval(-86_400)
        // OpenSSL checks validity from the root down; at this time every certificate is in its future.
        XCTAssertEqual(
            failure(verifier.verify(leaf: leaf, intermediates: [intermediate], at: beforeIssue)),
            .notYetValid(depth: 2))

        let wrongRoot = try CertificateChainVerifier(trustedRoots: [try certificate("other-root.pem")])
        XCTAssertEqual(
            failure(wrongRoot.verify(leaf: leaf, intermediates: [intermediate], at: inside)),
            .noPathToTrustedRoot(depth: 1))

        XCTAssertEqual(
            failure(verifier.verify(leaf: leaf, intermediates: [], at: inside)),
            .noPathToTrustedRoot(depth: 0), "missing intermediate")

        XCTAssertEqual(
            failure(
                verifier.verify(
                    leaf: try certificate("rogue-leaf.pem"), intermediates: [intermediate],
                    at: inside)),
            .badSignature(depth: 0), "leaf signed by another key")

        // The intermediate is never a trust anchor, even when it is the only root offered.
        let intermediateOnly = try CertificateChainVerifier(trustedRoots: [intermediate])
        XCTAssertNotNil(failure(intermediateOnly.verify(leaf: leaf, intermediates: [], at: inside)))
    }

    /// The chain tests of Apple's libraries (conformance README, "Chain tests").
    func testAppleLibraryChainVectors() throws {
        let conformance = try conformanceDirectory()
        let certs = conformance.appendingPathComponent("apple-library-fixtures/certs")
        func load(_ path: String) throws -> Certificate {
            try Certificate.load(contentsOf: certs.appendingPathComponent(path).path)[0]
        }
        let testCA = try load("testCA.der")
        let leaf = try load("test-chain/testLeaf.pem")
        let intermediate = try load("test-chain/testIntermediate.pem")
        let verifier = try CertificateChainVerifier(trustedRoots: [testCA])
        let effective = Date(timeIntervalSince1970: 1_761_962_975)

        guard case .valid(let chain) = verifier.verify(leaf: leaf, intermediates: [intermediate], at: effective) else {
            return XCTFail("Apple's test chain rejected")
        }
        XCTAssertEqual(chain.count, 3)
        let spki = [UInt8](try Data(contentsOf: certs.appendingPathComponent("test-chain/testLeaf.pubkey.spki.der")))
        XCTAssertEqual(chain[0].publicKeyDER, spki)
        XCTAssertEqual(testCA.sha256Fingerprint, "48aa70550eab2cd71d51dced44e88f9143b6bc0e1a6f430c19ba9a7cf36654e6")
        XCTAssertEqual(testCA.serialNumberHex, "B51CE402E21F9A5B")
        XCTAssertTrue(leaf.hasExtension(oid: "1.2.840.113635.100.6.11.1"))
        XCTAssertTrue(intermediate.hasExtension(oid: "1.2.840.113635.100.6.2.1"))
        XCTAssertFalse(try load("test-chain/testInvalidOIDLeaf.pem").hasExtension(oid: "1.2.840.113635.100.6.11.1"))
        XCTAssertFalse(try load("test-chain/testInvalidOIDIntermediate.pem").hasExtension(oid: "1.2.840.113635.100.6.2.1"))

        XCTAssertEqual(
            failure(
                verifier.verify(
                    leaf: leaf, intermediates: [intermediate],
                    at: Date(timeIntervalSince1970: 2_280_946_846))),
            .expired(depth: 2), "in 2042 the whole test chain has expired, the root first")
        let g3 = try load("real-apple/AppleRootCA-G3.der")
        XCTAssertEqual(g3.sha256Fingerprint, "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        XCTAssertNil(g3.p256PublicKey, "G3 is a P-384 root")
        let appleVerifier = try CertificateChainVerifier(trustedRoots: [g3])
        XCTAssertNotNil(failure(appleVerifier.verify(leaf: leaf, intermediates: [intermediate], at: effective)))

        let realLeaf = try load("real-apple/ProdECC-MacAppStore-iTunesStore-ReceiptSigning-2025.der")
        let realIntermediate = try load("real-apple/AppleWWDRCA-G6.der")
        XCTAssertEqual(realLeaf.serialNumberHex, "47C287CDD9F9E7867F528ADA74DC7DB7")
        guard case .valid = appleVerifier.verify(leaf: realLeaf, intermediates: [realIntermediate], at: effective) else {
            return XCTFail("Apple's real chain rejected")
        }
    }

    private func failure(_ result: ChainVerificationResult) -> ChainFailure? {
        if case .invalid(let failure) = result { return failure }
        return nil
    }
}

/// The test store's chain maker: OpenSSL verifies the chain in strict mode and the markers are
/// where Apple puts them (TestStoreTests: Entitle and Apple's Python library verify its data).
final class SigningChainMakerTests: XCTestCase {
    func testAMadeChainVerifiesStrictlyWithOpenSSLAndCarriesApplesMarkers() throws {
        let chain = try SigningChainMaker.make(name: "Unit", now: Date())
        let folder = try makeTemporaryDirectory("entitle-chain")
        for (name, certificate) in [("root", chain.root), ("intermediate", chain.intermediate), ("leaf", chain.leaf)] {
            try writeFile(folder.appendingPathComponent("\(name).pem"), certificate.pemRepresentation)
        }
        let verified = try runProcess(
            "openssl",
            [
                "verify", "-x509_strict", "-CAfile", folder.appendingPathComponent("root.pem").path, "-untrusted",
                folder.appendingPathComponent("intermediate.pem").path, folder.appendingPathComponent("leaf.pem").path,
            ])
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
        let leaf = try runProcess("openssl", ["x509", "-noout", "-text", "-in", folder.appendingPathComponent("leaf.pem").path]).stdout
        XCTAssert(leaf.contains("1.2.840.113635.100.6.11.1"), leaf)
        XCTAssert(leaf.contains("CA:FALSE"))
        let intermediate = try runProcess(
            "openssl", ["x509", "-noout", "-text", "-in", folder.appendingPathComponent("intermediate.pem").path]
        ).stdout
        XCTAssert(intermediate.contains("1.2.840.113635.100.6.2.1"), intermediate)
        XCTAssertEqual(try Certificate(pemEncoded: chain.leaf.pemRepresentation), chain.leaf, "PEM round trip")
    }
}
