import Crypto
import Foundation
import TestSupport
import XCTest

/// ECDSA P-256 against OpenSSL's command line as the independent reference.
final class ECDSATests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    private func opensslKey(_ name: String) throws -> P256.Signing.PrivateKey {
        try runProcess("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path(name)])
        return try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: path(name), encoding: .utf8))
    }

    func testOurSignatureVerifiesWithOpenSSL() throws {
        let key = try opensslKey("key.pem")
        let message = Array("the message Entitle signs".utf8)
        let signature = try key.signature(for: message)
        try writeFile(folder.appendingPathComponent("message"), bytes: message)
        try writeFile(folder.appendingPathComponent("sig.der"), bytes: signature.derRepresentation)
        try writeFile(folder.appendingPathComponent("pub.pem"), try key.publicKey.pemRepresentation)
        let result = try runProcess(
            "openssl",
            [
                "dgst", "-sha256", "-verify", path("pub.pem"), "-signature",
                path("sig.der"), path("message"),
            ])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("Verified OK"))
    }

    func testOpenSSLSignatureVerifiesWithUsAndDamagedOnesAreRejected() throws {
        let key = try opensslKey("key.pem")
        let message = Array("signed by openssl".utf8)
        try writeFile(folder.appendingPathComponent("message"), bytes: message)
        try runProcess("openssl", ["dgst", "-sha256", "-sign", path("key.pem"), "-out", path("sig.der"), path("message")])
        let der = [UInt8](try Data(contentsOf: folder.appendingPathComponent("sig.der")))
        let publicKey = try key.publicKey

        let signature = try ECDSASignature(derRepresentation: der)
        XCTAssertTrue(publicKey.isValidSignature(signature, for: message))
        XCTAssertEqual(signature.derRepresentation, der, "DER round trip is canonical")

        // A flipped bit in the signature value: still well-formed, no longer valid.
        var flipped = signature.rawRepresentation
        flipped[40] ^= 0x01
        XCTAssertFalse(publicKey.isValidSignature(try ECDSASignature(rawRepresentation: flipped), for: message))
        // A flipped bit in the message.
        var otherMessage = message
        otherMessage[0] ^= 0x01
        XCTAssertFalse(publicKey.isValidSignature(signature, for: otherMessage))
        // The wrong key.
        let otherKey = try opensslKey("other.pem").publicKey
        XCTAssertFalse(otherKey.isValidSignature(signature, for: message))
        // Truncated DER is malformed, not merely invalid.
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: der.dropLast())) { error in
            guard case CryptoError.malformedSignature = error else { return XCTFail("\(error)") }
        }
        // Trailing garbage after the SEQUENCE.
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: der + [0])) { error in
            guard case CryptoError.malformedSignature = error else { return XCTFail("\(error)") }
        }
        // Not a SEQUENCE at all.
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: [0x31] + der.dropFirst()))
        // A 63-byte raw signature is a length error.
        XCTAssertThrowsError(try ECDSASignature(rawRepresentation: signature.rawRepresentation.dropLast())) { error in
            XCTAssertEqual(error as? CryptoError, .invalidSignatureLength(63))
        }
    }

    func testNonCanonicalDERIsRejected() throws {
        let r = [UInt8](repeating: 0x11, count: 32)
        let s = [UInt8](repeating: 0x22, count: 32)
        let canonical: [UInt8] = [0x30, 0x44, 0x02, 0x20] + r + [0x02, 0x20] + s
        XCTAssertNoThrow(try ECDSASignature(derRepresentation: canonical))
        // Needless leading zero on r.
        let padded: [UInt8] = [0x30, 0x45, 0x02, 0x21, 0x00] + r + [0x02, 0x20] + s
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: padded))
        // Negative s (high bit set without a leading zero).
        let negative: [UInt8] = [0x30, 0x44, 0x02, 0x20] + r + [0x02, 0x20, 0x80] + s.dropFirst()
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: negative))
        // Zero r.
        let zero: [UInt8] = [0x30, 0x25, 0x02, 0x01, 0x00, 0x02, 0x20] + s
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: zero))
        // Long-form length where the short form fits.
        let longForm: [UInt8] = [0x30, 0x81, 0x44, 0x02, 0x20] + r + [0x02, 0x20] + s
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: longForm))
    }

    func testHighSSignatureIsAccepted() throws {
        // (r, n - s) is as valid as (r, s); OpenSSL accepts both and so do we.
        let key = try P256.Signing.PrivateKey()
        let message = Array("malleable".utf8)
        let signature = try key.signature(for: message)
        let order = Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!
        let s = Array(signature.rawRepresentation[32...])
        let highS = subtract(order, s)
        let other = try ECDSASignature(rawRepresentation: Array(signature.rawRepresentation[..<32]) + highS)
        XCTAssertNotEqual(other, signature)
        XCTAssertTrue(try key.publicKey.isValidSignature(other, for: message))
    }

    func testKeysRoundTripAndWrongCurvesAreRefused() throws {
        let key = try P256.Signing.PrivateKey()
        let reread = try P256.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
        XCTAssertEqual(try reread.publicKey.derRepresentation, try key.publicKey.derRepresentation)
        XCTAssertTrue(try key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: key.publicKey.pemRepresentation)
        XCTAssertEqual(try publicKey.derRepresentation, try key.publicKey.derRepresentation)

        // SEC1 ("BEGIN EC PRIVATE KEY") is read too.
        try runProcess("openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path("sec1.pem")])
        let sec1 = try String(contentsOfFile: path("sec1.pem"), encoding: .utf8)
        XCTAssertTrue(sec1.contains("BEGIN EC PRIVATE KEY"))
        XCTAssertNoThrow(try P256.Signing.PrivateKey(pemRepresentation: sec1))

        try runProcess("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", path("p384.pem")])
        XCTAssertThrowsError(try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: path("p384.pem"), encoding: .utf8))) {
            error in
            XCTAssertEqual(error as? CryptoError, .unsupportedKey("EC key on curve secp384r1"))
        }
        try runProcess("openssl", ["genpkey", "-algorithm", "ED25519", "-out", path("ed.pem")])
        XCTAssertThrowsError(try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: path("ed.pem"), encoding: .utf8))) {
            error in
            guard case CryptoError.unsupportedKey = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try P256.Signing.PrivateKey(pemRepresentation: "not a key")) { error in
            guard case CryptoError.invalidKey = error else { return XCTFail("\(error)") }
        }
    }

    func testSHA256KnownAnswers() {
        XCTAssertEqual(SHA256.hexDigest([UInt8]()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hexDigest(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// Big-endian a - b for 32-byte numbers with a ≥ b.
    private func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var digit = Int(a[index]) - Int(b[index]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            result[index] = UInt8(digit)
        }
        return result
    }
}
