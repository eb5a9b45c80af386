import XCTest

@testable import HTTP

final class HTTPParserTests: XCTestCase {
    private func requests(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) throws -> [HTTPRequest] {
        var parser = HTTPParser(limits: limits)
        parser.append(Array(text.utf8))
        var found: [HTTPRequest] = []
        while case .request(let request) = try parser.next() { found.append(request) }
        return found
    }

    private func assertError(
        _ text: String, status: Int, limits: HTTPParserLimits = HTTPParserLimits(),
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try requests(text, limits: limits), file: file, line: line) { error in
            XCTAssertEqual((error as? HTTPParseError)?.status, status, "\(error)", file: file, line: line)
        }
    }

    func testSimpleGet() throws {
        let parsed = try requests("GET /healthz?x=1 HTTP/1.1\r\nHost: a\r\nX-Thing:  v  \r\n\r\n")
        XCTAssertEqual(parsed.count, 1)
        XCTAssertEqual(parsed[0].method, "GET")
        XCTAssertEqual(parsed[0].path, "/healthz")
        XCTAssertEqual(parsed[0].query, "x=1")
        XCTAssertEqual(parsed[0].header("x-thing"), "v")
        XCTAssertTrue(parsed[0].keepAlive)
    }

    func testOneByteAtATime() throws {
        let text = "POST /v1/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
        var parser = HTTPParser()
        var found: [HTTPRequest] = []
        for byte in text.utf8 {
            parser.append([byte])
            if case .request(let request) = try parser.next() { found.append(request) }
        }
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.body, Array("hello".utf8))
        XCTAssertFalse(parser.isInsideRequest)
    }

    func testThreePipelinedRequestsInOneRead() throws {
        let text =
            "GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\nHost: a\r\n\r\n"
        let parsed = try requests(text)
        XCTAssertEqual(parsed.map(\.target), ["/a", "/b", "/c"])
        XCTAssertEqual(parsed[1].body, Array("hi".utf8))
    }

    func testChunkedBodyWithExtensionsAndTrailers() throws {
        let text =
            "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
        let parsed = try requests(text)
        XCTAssertEqual(parsed.first?.body, Array("hello world".utf8))
    }

    func testExpectContinue() throws {
        var parser = HTTPParser()
        parser.append(Array("POST /c HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        guard case .expectContinue = try parser.next() else { return XCTFail("expected 100-continue") }
        guard case .needMoreData = try parser.next() else { return XCTFail("body not yet here") }
        parser.append(Array("abc".utf8))
        guard case .request(let request) = try parser.next() else { return XCTFail("request expected") }
        XCTAssertEqual(request.body, Array("abc".utf8))
    }

    func testHTTP10AndConnectionClose() throws {
        let old = try requests("GET / HTTP/1.0\r\n\r\n")
        XCTAssertFalse(old[0].keepAlive, "HTTP/1.0 closes by default, and needs no Host")
        XCTAssertTrue(try requests("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")[0].keepAlive)
        XCTAssertFalse(try requests("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")[0].keepAlive)
    }

    func testHeadLimits() {
        let big = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "a", count: 17_000) + "\r\n\r\n"
        assertError(big, status: 431)
        // Without the end of the head in sight, too many bytes are refused as soon as they exceed the limit.
        assertError("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 17_000), status: 431)
        let many = "GET / HTTP/1.1\r\nHost: a\r\n" + (0..<100).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        assertError(many, status: 431)
        let exactly = "GET / HTTP/1.1\r\nHost: a\r\n" + (0..<99).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        XCTAssertNoThrow(try requests(exactly))
    }

    func testBodyLimits() {
        let limits = HTTPParserLimits(maxBodyBytes: 10)
        assertError("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", status: 413, limits: limits)
        assertError(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n",
            status: 413, limits: limits)
        XCTAssertNoThrow(try requests("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789", limits: limits))
    }

    func testInvalidSyntax() {
        for text in [
            "GARBAGE\r\n\r\n", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "GET noslash HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", "GET / HTTP/1.1\r\n\r\n", "GET / HTTX/1.1\r\nHost: a\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        ] {
            assertError(text, status: 400)
        }
    }

    func testUnsupportedTransferEncodingAndVersion() {
        assertError("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", status: 501)
        assertError("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", status: 501)
        assertError("GET / HTTP/2.0\r\nHost: a\r\n\r\n", status: 505)
    }

    func testErrorIsSticky() {
        var parser = HTTPParser()
        parser.append(Array("BAD\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        XCTAssertThrowsError(try parser.next())
        XCTAssertThrowsError(try parser.next(), "after an error the framing is unknown: nothing more is parsed")
    }

    func testBareLineFeedHeadIsRefusedBeforeItEnds() {
        var parser = HTTPParser()
        parser.append(Array("GET / HTTP/1.1\nHost: a\n".utf8))
        XCTAssertThrowsError(try parser.next()) { XCTAssertEqual(($0 as? HTTPParseError)?.status, 400) }
        var byByte = HTTPParser()
        var thrown = false
        for byte in "GET / HTTP/1.1\r\nHost: a\n".utf8 {
            byByte.append([byte])
            if (try? byByte.next()) == nil { thrown = true }
        }
        XCTAssertTrue(thrown, "a bare LF arriving a byte at a time is refused too")
        var complete = HTTPParser()
        complete.append(Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8))
        XCTAssertNoThrow(try complete.next(), "a head still waiting for its last CRLF is not refused")
    }
}
