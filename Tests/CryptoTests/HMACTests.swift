import Crypto
import Foundation
import TestSupport
import XCTest

/// HMAC-SHA256 against RFC 4231's vectors and OpenSSL's command line.
final class HMACTests: XCTestCase {
    func testRFC4231Vectors() {
        XCTAssertEqual(
            Hex.encode(HMACSHA256.authenticationCode(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        XCTAssertEqual(
            Hex.encode(HMACSHA256.authenticationCode(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testAgreesWithOpenSSL() throws {
        let key = (0..<32).map { UInt8($0 * 7 % 256) }
        let message = Array("msg_2Lh9KRb0pzN4LePd3XiA4v12Axj.1674087231.{\"type\":\"TEST\"}".utf8)
        let result = try runProcess(
            "openssl", ["dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:\(Hex.encode(key))", "-r"], input: message)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            result.stdout.split(separator: " ").first.map(String.init),
            Hex.encode(HMACSHA256.authenticationCode(key: key, message: message)))
    }
}
