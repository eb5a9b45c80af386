import Crypto
import Foundation
import XCTest

final class Base64Tests: XCTestCase {
    func testRFC4648Vectors() throws {
        let vectors = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(try Base64.decode(encoded), Array(plain.utf8))
            XCTAssertEqual(Base64.encodeURL(Array(plain.utf8)), encoded.replacingOccurrences(of: "=", with: ""))
        }
    }

    func testURLAlphabetAndPaddingTolerance() throws {
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf]
        XCTAssertEqual(Base64.encode(bytes), "+/+/")
        XCTAssertEqual(Base64.encodeURL(bytes), "-_-_")
        XCTAssertEqual(try Base64.decodeURL("-_-_"), bytes)
        XCTAssertEqual(try Base64.decodeURL("Zm8"), Array("fo".utf8), "missing padding is tolerated")
        XCTAssertEqual(try Base64.decodeURL("Zm8="), Array("fo".utf8), "correct padding is accepted")
        XCTAssertEqual(try Base64.decode("Zm8"), Array("fo".utf8))
    }

    func testStrictAlphabet() {
        XCTAssertThrowsError(try Base64.decodeURL("+/+/"), "standard characters in base64url")
        XCTAssertThrowsError(try Base64.decode("-_-_"), "url characters in standard base64")
        XCTAssertThrowsError(try Base64.decode("Zm9v Yg=="), "whitespace")
        XCTAssertThrowsError(try Base64.decode("Z"), "impossible length")
        XCTAssertThrowsError(try Base64.decode("Zm8=="), "wrong padding")
        XCTAssertThrowsError(try Base64.decode("Zm9="), "non-zero trailing bits")
        XCTAssertThrowsError(try Base64.decode("Zg==="), "too much padding")
    }

    func testHex() {
        XCTAssertEqual(Hex.encode([0x00, 0xab, 0xff]), "00abff")
        XCTAssertEqual(Hex.decode("00ABff"), [0x00, 0xab, 0xff])
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
    }
}

final class UUIDTextTests: XCTestCase {
    func testCanonicalTextMatchesFoundation() {
        for text in [
            "7e3fb20b-4cdb-47cc-936d-99d65f608138", "7E3FB20B-4CDB-47CC-936D-99D65F608138", "7e3fb20b4cdb47cc936d99d65f608138",
            "7e3fb20b-4cdb-47cc-936d-99d65f60813", "7e3fb20b-4cdb-47cc-936d-99d65f6081388", "7e3fb20b-4cdb-47cc-936d_99d65f608138",
            "g e3fb20b-4cdb-47cc-936d-99d65f60813", "", "7e3fb20b-4cdb-47cc-936d-99d65f60813g",
        ] {
            XCTAssertEqual(UUID.isCanonicalText(text), UUID(uuidString: text) != nil, text)
        }
        let uuid = SecureRandom.uuid()
        XCTAssertEqual(uuid.lowercasedString, uuid.uuidString.lowercased())
        XCTAssertEqual(uuid.lowercasedString.dropFirst(14).first, "4", "version 4")
    }
}
