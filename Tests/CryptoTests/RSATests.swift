import Crypto
import Foundation
import JSON
import TestSupport
import XCTest

/// RS256 against OpenSSL's command line: its keys, its signatures, its verdicts.
final class RSATests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = try makeTemporaryDirectory("entitle-rsa") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    /// A fresh key made by `openssl genpkey` (PKCS#8 PEM) and its public half.
    private func opensslKey(bits: Int = 2048) throws -> (privatePEM: String, publicPEM: String, path: URL) {
        let path = folder.appendingPathComponent("rsa-\(bits).pem")
        try runProcess("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", path.path])
        let pub = try runProcess("openssl", ["pkey", "-in", path.path, "-pubout"]).stdout
        return (try String(contentsOf: path, encoding: .utf8), pub, path)
    }

    func testSignaturesVerifyWithOpenSSLAndTheOtherWayRound() throws {
        let (privatePEM, publicPEM, path) = try opensslKey()
        let key = try RSA.PrivateKey(pemRepresentation: privatePEM)
        let message = Array("the assertion's signing input".utf8)
        let signature = try key.signature(for: message)
        XCTAssertEqual(signature.count, 256)
        XCTAssertTrue(try IndependentVerifier.openSSLVerifies(publicKeyPEM: publicPEM, derSignature: signature, message: message))
        XCTAssertFalse(try IndependentVerifier.openSSLVerifies(publicKeyPEM: publicPEM, derSignature: signature, message: message + [0]))
        XCTAssertEqual(try key.publicKey.pemRepresentation, publicPEM, "the public half as OpenSSL writes it")

        let messageFile = folder.appendingPathComponent("message.bin")
        try writeFile(messageFile, bytes: message)
        let signatureFile = folder.appendingPathComponent("openssl.sig")
        try runProcess("openssl", ["dgst", "-sha256", "-sign", path.path, "-out", signatureFile.path, messageFile.path])
        let theirs = Array(try Data(contentsOf: signatureFile))
        let publicKey = try RSA.PublicKey(pemRepresentation: publicPEM)
        XCTAssertTrue(publicKey.isValidSignature(theirs, for: message))
        var tampered = theirs
        tampered[10] ^= 1
        XCTAssertFalse(publicKey.isValidSignature(tampered, for: message))
        XCTAssertFalse(try RSA.PrivateKey(pemRepresentation: try opensslKey().privatePEM).publicKey.isValidSignature(theirs, for: message))
    }

    /// A JWK's `n` and `e` (here read off OpenSSL's own printout of the key) make the same key.
    func testAKeyFromItsModulusAndExponent() throws {
        let (privatePEM, publicPEM, path) = try opensslKey()
        let text = try runProcess("openssl", ["rsa", "-in", path.path, "-noout", "-modulus"]).stdout
        let hex = try XCTUnwrap(text.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        let modulus = try XCTUnwrap(Hex.decode(hex.lowercased()))
        let key = try RSA.PublicKey(modulus: modulus, exponent: [0x01, 0x00, 0x01])
        XCTAssertEqual(try key.pemRepresentation, publicPEM)
        let signature = try RSA.PrivateKey(pemRepresentation: privatePEM).signature(for: Array("x".utf8))
        XCTAssertTrue(key.isValidSignature(signature, for: Array("x".utf8)))
        XCTAssertThrowsError(try RSA.PublicKey(modulus: [], exponent: [1, 0, 1]))
    }

    /// A generated key, checked by OpenSSL's command line: it reads the PEM as a 2048-bit RSA key
    /// with exponent 65537, its modulus is the one `components` gives, and it verifies the key's
    /// signatures.
    func testAGeneratedKeyAndItsComponentsAsOpenSSLReadsThem() throws {
        let key = try RSA.PrivateKey(generatingBits: 2048)
        let path = folder.appendingPathComponent("generated.pem")
        try writeFile(path, try key.pemRepresentation)
        let text = try runProcess("openssl", ["rsa", "-in", path.path, "-noout", "-text"]).stdout
        XCTAssertTrue(text.contains("Private-Key: (2048 bit, 2 primes)"), text)
        XCTAssertTrue(text.contains("publicExponent: 65537 (0x10001)"), text)
        let modulusText = try runProcess("openssl", ["rsa", "-in", path.path, "-noout", "-modulus"]).stdout
        let hex = try XCTUnwrap(modulusText.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        let (modulus, exponent) = try key.publicKey.components
        XCTAssertEqual(modulus, try XCTUnwrap(Hex.decode(hex.lowercased())))
        XCTAssertEqual(exponent, [0x01, 0x00, 0x01])
        let message = Array("a push token's signing input".utf8)
        let signature = try key.signature(for: message)
        XCTAssertTrue(
            try IndependentVerifier.openSSLVerifies(
                publicKeyPEM: try key.publicKey.pemRepresentation, derSignature: signature, message: message))
        XCTAssertTrue(try RSA.PublicKey(modulus: modulus, exponent: exponent).isValidSignature(signature, for: message))
        XCTAssertThrowsError(try RSA.PrivateKey(generatingBits: 1024))
    }

    func testWeakAndOtherKeysAreRefused() throws {
        XCTAssertThrowsError(try RSA.PrivateKey(pemRepresentation: try opensslKey(bits: 1024).privatePEM)) {
            XCTAssertEqual($0 as? CryptoError, .unsupportedKey("RSA key of 1024 bits (at least 2048)"))
        }
        let ec = try P256.Signing.PrivateKey().pemRepresentation
        XCTAssertThrowsError(try RSA.PrivateKey(pemRepresentation: ec)) {
            XCTAssertEqual($0 as? CryptoError, .unsupportedKey("not an RSA key"))
        }
    }

    func testRS256TokensRoundTripAndNeedTheirAlgorithm() throws {
        let (privatePEM, publicPEM, _) = try opensslKey()
        let key = try RSA.PrivateKey(pemRepresentation: privatePEM)
        let token = try JWSSigner.sign(header: ["alg": "RS256", "kid": "k1"], payload: ["aud": "x"], with: key)
        let jws = try CompactJWS(token)
        let publicKey = try RSA.PublicKey(pemRepresentation: publicPEM)
        XCTAssertTrue(jws.isValidRS256Signature(publicKey: publicKey))
        let relabelled = try CompactJWS(
            Base64.encodeURL(JSONValue.object(["alg": "none"]).serializedBytes) + "." + token.split(separator: ".")[1] + "."
                + token.split(separator: ".")[2])
        XCTAssertFalse(relabelled.isValidRS256Signature(publicKey: publicKey), "alg must say RS256")
    }
}
