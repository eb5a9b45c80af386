import Crypto
import JSON
import XCTest

final class JWSTests: XCTestCase {
    func testSignAndParseRoundTrip() throws {
        let key = try P256.Signing.PrivateKey()
        let token = try JWSSigner.sign(header: ["alg": "ES256", "kid": "K"], payload: ["sub": "x", "n": 5], with: key)
        let jws = try CompactJWS(token)
        XCTAssertEqual(jws.header["kid"], "K")
        XCTAssertEqual(jws.payload["n"], .int(5))
        XCTAssertEqual(jws.signature.count, 64)
        XCTAssertEqual(jws.algorithm, "ES256")
        XCTAssertTrue(jws.isValidES256Signature(publicKey: try key.publicKey))
        XCTAssertFalse(jws.isValidES256Signature(publicKey: try P256.Signing.PrivateKey().publicKey))
        XCTAssertFalse(token.contains("="), "base64url without padding")
    }

    func testPreciseParseErrors() throws {
        let key = try P256.Signing.PrivateKey()
        let token = try JWSSigner.sign(header: ["alg": "ES256"], payload: ["a": 1], with: key)
        let parts = token.split(separator: ".").map(String.init)

        XCTAssertThrowsError(try CompactJWS(parts[0] + "." + parts[1])) {
            XCTAssertEqual($0 as? JWSError, .segmentCount(2))
        }
        XCTAssertThrowsError(try CompactJWS(token + ".x")) { XCTAssertEqual($0 as? JWSError, .segmentCount(4)) }
        XCTAssertThrowsError(try CompactJWS("a+b." + parts[1] + "." + parts[2])) {
            XCTAssertEqual($0 as? JWSError, .invalidBase64URL(segment: "header"))
        }
        XCTAssertThrowsError(try CompactJWS(parts[0] + "." + parts[1] + "=." + parts[2])) {
            XCTAssertEqual($0 as? JWSError, .invalidBase64URL(segment: "payload"))
        }
        XCTAssertThrowsError(try CompactJWS(parts[0] + "." + parts[1] + ".")) {
            XCTAssertEqual($0 as? JWSError, .invalidBase64URL(segment: "signature"))
        }
        let notJSON = Base64.encodeURL(Array("{not json".utf8))
        XCTAssertThrowsError(try CompactJWS(parts[0] + "." + notJSON + "." + parts[2])) {
            guard case JWSError.invalidJSON(segment: "payload", _) = $0 else { return XCTFail("\($0)") }
        }
        let array = Base64.encodeURL(Array("[1]".utf8))
        XCTAssertThrowsError(try CompactJWS(array + "." + parts[1] + "." + parts[2])) {
            XCTAssertEqual($0 as? JWSError, .notAnObject(segment: "header"))
        }
    }

    func testTamperedPayloadFailsVerification() throws {
        let key = try P256.Signing.PrivateKey()
        let token = try JWSSigner.sign(header: ["alg": "ES256"], payload: ["price": 100], with: key)
        let parts = token.split(separator: ".").map(String.init)
        let forged = Base64.encodeURL(Array(#"{"price":1}"#.utf8))
        let jws = try CompactJWS(parts[0] + "." + forged + "." + parts[2])
        XCTAssertFalse(jws.isValidES256Signature(publicKey: try key.publicKey))
        // A truncated signature cannot verify.
        let shortSignature = Base64.encodeURL(try Base64.decodeURL(parts[2]).dropLast())
        let truncated = try CompactJWS(parts[0] + "." + parts[1] + "." + shortSignature)
        XCTAssertFalse(truncated.isValidES256Signature(publicKey: try key.publicKey))
    }
}
