import XCTest

@testable import HTTP

/// The verdict on a request must not depend on how TCP splits it: whole, split anywhere, and one
/// byte at a time give the same requests and the same error. Limits apply to elements (a head, a
/// chunk-size line, the trailers), and chunk extensions and trailers are held to the head's rules.
final class HTTPParserSplitTests: XCTestCase {
    /// Requests parsed, or the status of the error that stopped the parser.
    private struct Outcome: Equatable {
        var targets: [String] = []
        var bodies: [[UInt8]] = []
        var errorStatus: Int?
    }

    private func parse(_ bytes: [UInt8], pieces: [Int]) -> Outcome {
        var parser = HTTPParser()
        var outcome = Outcome()
        var start = 0
        for end in pieces + [bytes.count] where end > start {
            parser.append(Array(bytes[start..<min(end, bytes.count)]))
            start = min(end, bytes.count)
            do {
                while true {
                    guard case .request(let request) = try parser.next() else { break }
                    outcome.targets.append(request.target)
                    outcome.bodies.append(request.body)
                }
            } catch {
                outcome.errorStatus = error.status
                return outcome
            }
        }
        return outcome
    }

    /// Parses whole, split at every given point, and byte by byte; asserts all agree; returns it.
    private func agreedOutcome(_ text: String, splits: [Int], file: StaticString = #filePath, line: UInt = #line) -> Outcome {
        let bytes = Array(text.utf8)
        let whole = parse(bytes, pieces: [])
        for split in splits {
            XCTAssertEqual(parse(bytes, pieces: [split]), whole, "split at \(split)", file: file, line: line)
        }
        XCTAssertEqual(parse(bytes, pieces: Array(1..<bytes.count)), whole, "byte by byte", file: file, line: line)
        return whole
    }

    func testHeadOfExactlySixteenKiBWithTheLastCRLFAlone() {
        let start = "GET /n HTTP/1.1\r\nHost: a\r\nX-Pad: "
        let text = start + String(repeating: "p", count: 16 * 1024 - start.utf8.count) + "\r\n\r\n"
        XCTAssertEqual(text.utf8.count - 4, 16 * 1024, "the head without its final CRLFCRLF is exactly the limit")
        let outcome = agreedOutcome(text, splits: [text.utf8.count - 2])
        XCTAssertEqual(outcome.targets, ["/n"])
    }

    func testHeadOneByteOverTheLimitIsRefusedHoweverItArrives() {
        let start = "GET /n HTTP/1.1\r\nHost: a\r\nX-Pad: "
        let text = start + String(repeating: "p", count: 16 * 1024 + 1 - start.utf8.count) + "\r\n\r\n"
        let outcome = agreedOutcome(text, splits: [text.utf8.count - 2, 16 * 1024])
        XCTAssertEqual(outcome.errorStatus, 431)
    }

    private func chunked(extensionBytes: Int) -> String {
        let ext = ";e=" + String(repeating: "x", count: extensionBytes - 3)
        return "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\(ext)\r\nabc\r\n0\r\n\r\n"
    }

    func testChunkSizeLineAtTheLimitIsAcceptedHoweverItArrives() {
        let text = chunked(extensionBytes: ChunkedDecoder.maxSizeLineBytes - 1)  // "3" + extension = 1024
        let lineEnd = text.utf8.count - "\r\nabc\r\n0\r\n\r\n".utf8.count
        let outcome = agreedOutcome(text, splits: [lineEnd, lineEnd + 1])
        XCTAssertEqual(outcome.bodies, [Array("abc".utf8)])
    }

    func testChunkSizeLineOverTheLimitIsRefusedHoweverItArrives() {
        let text = chunked(extensionBytes: ChunkedDecoder.maxSizeLineBytes)
        let lineEnd = text.utf8.count - "\r\nabc\r\n0\r\n\r\n".utf8.count
        let outcome = agreedOutcome(text, splits: [lineEnd, lineEnd + 1, lineEnd + 2])
        XCTAssertEqual(outcome.errorStatus, 400)
    }

    func testChunkExtensionsAndTrailersRejectWhatTheHeadRejects() {
        let prefix = "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        let refused = [
            prefix + "3;a\nb\r\nabc\r\n0\r\n\r\n",  // bare LF in an extension
            prefix + "3;a\u{0}b\r\nabc\r\n0\r\n\r\n",  // NUL in an extension
            prefix + "3\r\nabc\r\n0\r\nX-T: a\u{0}b\r\n\r\n",  // NUL in a trailer
            prefix + "3\r\nabc\r\n0\r\nX-T: a\nb\r\n\r\n",  // bare LF in a trailer
            prefix + "3\r\nabc\r\n0\r\nno colon\r\n\r\n",  // not a field
            prefix + "3\r\nabc\r\n0\r\n folded\r\n\r\n",  // obsolete line folding
        ]
        for text in refused {
            XCTAssertEqual(agreedOutcome(text, splits: []).errorStatus, 400, text.debugDescription)
        }
        let accepted = prefix + "3;name=\"quoted value\";flag\r\nabc\r\n0\r\nX-Checksum: 1\r\n\r\n"
        XCTAssertEqual(agreedOutcome(accepted, splits: []).bodies, [Array("abc".utf8)])
    }

    /// A bare LF is refused as it arrives, with the answer the complete head gets: found by the
    /// fuzzer, the early check once said 400 where the whole head says 505 (a bad version first).
    func testABareLineFeedGetsTheSameAnswerHoweverTheHeadArrives() {
        XCTAssertEqual(agreedOutcome("GET / HTTP/2.1\r\nHost: a\u{3}\nX: 1\r\n\r\n", splits: [20]).errorStatus, 505)
        XCTAssertEqual(agreedOutcome("GET / HTTP/1.1\r\nHost: a\nX: 1\r\n\r\n", splits: [20]).errorStatus, 400)
        XCTAssertEqual(agreedOutcome("GET / HTTP/1.1\nHost: a\n\n", splits: [3]).errorStatus, 400)
    }

    func testTwoHostHeadersAreRefused() {
        let outcome = agreedOutcome("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", splits: [])
        XCTAssertEqual(outcome.errorStatus, 400)
    }
}
