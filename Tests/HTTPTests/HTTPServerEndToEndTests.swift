import Dispatch
import Foundation
import HTTP
import TestSupport
import XCTest

/// The server over real loopback sockets on port 0.
final class HTTPServerEndToEndTests: XCTestCase {
    private var server: HTTPServer!

    /// `/echo` answers the body; `/slow` answers after 0.5 s from another thread (work that waits);
    /// `/n/{n}` answers its parameter.
    private func startServer(_ adjust: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 2
        adjust(&configuration)
        var router = Router()
        router.add("POST", "/echo") { $0.respond(HTTPResponse(status: 200, body: $0.request.body)) }
        router.add("GET", "/n/{n}") { $0.respond(HTTPResponse(status: 200, body: Array(($0.pathParameters["n"] ?? "").utf8))) }
        router.add("GET", "/slow") { context in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
                context.respond(HTTPResponse(status: 200, body: Array("slow done".utf8)))
            }
        }
        let routes = router
        server = try HTTPServer(configuration: configuration, handler: { routes.handle($0) })
        server.start()
    }

    override func tearDown() {
        server?.shutdown()
        server?.waitUntilStopped()
        server = nil
    }

    func testKeepAliveReusesTheConnection() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port)
        for index in 0..<5 {
            try client.send(rawRequest("GET", "/n/\(index)"))
            let response = try client.readResponse()
            XCTAssertEqual(response.text, "\(index)")
            XCTAssertNil(response.header("Connection"))
        }
        XCTAssertEqual(server.statistics.accepted, 1)
    }

    func testPipelinedAnswersComeInOrder() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port)
        // The slow one first: the fast ones behind it must wait their turn.
        try client.send(rawRequest("GET", "/slow") + rawRequest("GET", "/n/1") + rawRequest("POST", "/echo", body: "two"))
        XCTAssertEqual(try client.readResponse().text, "slow done")
        XCTAssertEqual(try client.readResponse().text, "1")
        XCTAssertEqual(try client.readResponse().text, "two")
    }

    func testConnectionCloseAndHTTP10() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port)
        try client.send(rawRequest("GET", "/n/7", headers: ["Connection: close"]))
        let response = try client.readResponse()
        XCTAssertEqual(response.header("Connection"), "close")
        XCTAssertTrue(client.waitForClose())

        let old = try TestHTTPClient(port: server.port)
        try old.send("GET /n/8 HTTP/1.0\r\n\r\n")
        XCTAssertEqual(try old.readResponse().text, "8")
        XCTAssertTrue(old.waitForClose())
    }

    func testHeadAnswersHeadersOnly() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port)
        try client.send(rawRequest("HEAD", "/n/12345"))
        let head = try client.readResponse(head: true)
        XCTAssertEqual(head.header("Content-Length"), "5")
        try client.send(rawRequest("GET", "/n/9"))
        XCTAssertEqual(try client.readResponse().text, "9", "no stray body bytes after the HEAD answer")
    }

    func testChunkedAndExpectContinue() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        XCTAssertEqual(try client.readResponse().text, "abcde")
        try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        XCTAssertEqual(try client.readResponse().status, 100)
        try client.send("body")
        XCTAssertEqual(try client.readResponse().text, "body")
    }

    func testOversizedBodyIsRefusedWhileOthersAreServed() throws {
        try startServer()
        let other = try TestHTTPClient(port: server.port)
        let client = try TestHTTPClient(port: server.port)
        let twoMiB = String(repeating: "x", count: 2 << 20)
        try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: \(twoMiB.utf8.count)\r\n\r\n")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 413)
        XCTAssertTrue(response.text.contains("BODY_TOO_LARGE"))
        XCTAssertTrue(client.waitForClose())
        try other.send(rawRequest("POST", "/echo", body: "still here"))
        XCTAssertEqual(try other.readResponse().text, "still here")
    }

    func testBadRequestAnswers400AndCloses() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port)
        try client.send("NOT HTTP\r\n\r\n")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 400)
        XCTAssertTrue(client.waitForClose())
    }

    func testStalledHalfHeaderIsDisconnected() throws {
        try startServer { $0.headerTimeout = 1 }
        let client = try TestHTTPClient(port: server.port, timeout: 5)
        try client.send("GET /n/1 HTTP/1.1\r\nHost: a\r\nX-Slow")
        let started = Date()
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 408)
        XCTAssertTrue(client.waitForClose())
        XCTAssertLessThan(Date().timeIntervalSince(started), 4.5, "closed by the header timeout, not the client's")
        XCTAssertEqual(server.statistics.timedOut, 1)
    }

    func testIdleKeepAliveConnectionIsClosed() throws {
        try startServer { $0.idleTimeout = 1 }
        let client = try TestHTTPClient(port: server.port, timeout: 5)
        try client.send(rawRequest("GET", "/n/1"))
        _ = try client.readResponse()
        XCTAssertTrue(client.waitForClose())
    }

    func testConnectionsBeyondTheLimitAreRefused() throws {
        try startServer {
            $0.maxConnections = 2
            $0.eventLoops = 1
        }
        let first = try TestHTTPClient(port: server.port)
        let second = try TestHTTPClient(port: server.port)
        try first.send(rawRequest("GET", "/n/1"))
        try second.send(rawRequest("GET", "/n/2"))
        _ = try first.readResponse()
        _ = try second.readResponse()
        let third = try TestHTTPClient(port: server.port)
        XCTAssertEqual(try third.readResponse().status, 503)
        XCTAssertEqual(server.statistics.refused, 1)
        try first.send(rawRequest("GET", "/n/3"))
        XCTAssertEqual(try first.readResponse().text, "3", "open connections keep working")
    }

    func testManyConcurrentConnections() throws {
        try startServer()
        let port = server.port
        let failures = LockedList<String>()
        DispatchQueue.concurrentPerform(iterations: 200) { connection in
            do {
                let client = try TestHTTPClient(port: port)
                for index in 0..<50 {
                    let body = "\(connection)-\(index)"
                    try client.send(rawRequest("POST", "/echo", body: body))
                    let response = try client.readResponse()
                    if response.status != 200 || response.text != body { failures.append("\(body): \(response.status) \(response.text)") }
                }
            } catch {
                failures.append("connection \(connection): \(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(server.statistics.accepted, 200)
    }

    func testGracefulShutdownFinishesTheRequestInFlight() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port)
        try client.send(rawRequest("GET", "/slow"))
        Thread.sleep(forTimeInterval: 0.1)
        server.shutdown()
        let response = try client.readResponse()
        XCTAssertEqual(response.text, "slow done")
        XCTAssertEqual(response.header("Connection"), "close")
        server.waitUntilStopped()
        XCTAssertThrowsError(try TestHTTPClient(port: server.port), "no longer accepting")
    }

}
