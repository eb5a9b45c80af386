import Dispatch
import Foundation
import HTTP
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Faults found by stressing the server from outside: each test failed before its fix.
final class HTTPServerFaultTests: XCTestCase {
    private var server: HTTPServer!

    /// `/n/{n}` answers its parameter; `/big` answers 256 KiB; `/echo` answers the body.
    private func startServer(_ adjust: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 1
        adjust(&configuration)
        var router = Router()
        router.add("GET", "/n/{n}") { $0.respond(HTTPResponse(status: 200, body: Array(($0.pathParameters["n"] ?? "").utf8))) }
        router.add("GET", "/big") { $0.respond(HTTPResponse(status: 200, body: [UInt8](repeating: 0x62, count: 256 * 1024))) }
        router.add("POST", "/echo") { $0.respond(HTTPResponse(status: 200, body: $0.request.body)) }
        let routes = router
        server = try HTTPServer(configuration: configuration, handler: { routes.handle($0) })
        server.start()
    }

    override func tearDown() {
        server?.shutdown()
        server?.waitUntilStopped()
        server = nil
    }

    func testASecondServerOnTheSamePortFailsWithAddressInUse() throws {
        try startServer { $0.eventLoops = 2 }
        var configuration = HTTPServerConfiguration()
        configuration.port = server.port
        configuration.eventLoops = 2
        XCTAssertThrowsError(try HTTPServer(configuration: configuration, handler: { $0.respond(HTTPResponse(status: 500)) })) {
            XCTAssertEqual(($0 as? SystemCallError)?.errno, EADDRINUSE, "\($0)")
        }
        let client = try TestHTTPClient(port: server.port)
        try client.send(rawRequest("GET", "/n/1"))
        XCTAssertEqual(try client.readResponse().text, "1", "the first server keeps the port")
    }

    /// A client that pipelines requests and never reads the answers: the server stops reading once
    /// its output queue is full, so what it takes in is bounded by socket buffers plus one request.
    func testAPipeliningClientThatNeverReadsIsBounded() throws {
        try startServer()
        let flood = try TestHTTPClient(port: server.port, timeout: 10)
        let request = Array(rawRequest("GET", "/n/1").utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 << 20)
        while bytes.count < 64 << 20 { bytes += request }
        let taken = flood.sendAsMuchAsPossible(bytes, timeout: 2)
        XCTAssertLessThan(taken, 24 << 20, "the server kept reading a client that reads nothing (\(taken >> 20) MiB taken)")

        let other = try TestHTTPClient(port: server.port)
        try other.send(rawRequest("GET", "/n/2"))
        XCTAssertEqual(try other.readResponse().text, "2", "other clients are served meanwhile")
        // The flooding client still gets its answers, in order, once it reads.
        for _ in 0..<1000 { XCTAssertEqual(try flood.readResponse().text, "1") }
    }

    /// A reader that takes a few bytes at a time cannot hold its queued answers open forever.
    func testATrickleReaderIsCutOffByTheWriteDeadline() throws {
        try startServer { configuration in
            configuration.writeTimeout = 1
            configuration.minimumSendRate = 4 * 1024 * 1024
            configuration.idleTimeout = 120
            configuration.headerTimeout = 120
        }
        let client = try TestHTTPClient(port: server.port, timeout: 5, receiveBufferSize: 4096)
        _ = client.sendAsMuchAsPossible(Array(String(repeating: rawRequest("GET", "/big"), count: 64).utf8), timeout: 1)
        // The server's kernel buffers keep sending after it closes, so watch the server's count.
        let started = Date()
        while server.statistics.timedOut == 0 && Date().timeIntervalSince(started) < 30 {
            _ = client.readSome(256)
            Thread.sleep(forTimeInterval: 0.05)  // about 5 KiB/s
        }
        XCTAssertEqual(server.statistics.timedOut, 1, "a 5 KiB/s reader was served for 30 s")
    }

    /// The whole request has a deadline: a body trickled one byte at a time is cut off even though
    /// every byte arrives well within the old between-reads timeout.
    func testATrickledBodyIsCutOffByTheRequestDeadline() throws {
        try startServer { configuration in
            configuration.headerTimeout = 1
            configuration.minimumReceiveRate = 1024
        }
        let client = try TestHTTPClient(port: server.port, timeout: 10)
        try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n")
        let started = Date()
        for _ in 0..<40 where !client.waitReadable(timeout: 0.3) { try client.send("x") }
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 408)
        XCTAssertLessThan(Date().timeIntervalSince(started), 11)
    }

    /// At the connection cap, connections that trickle request bodies make room for a client that
    /// sends a whole request; before, every newcomer got 503 for as long as the trickle lasted.
    func testSlowBodiesDoNotLockOutClientsThatFinishTheirRequests() throws {
        try startServer { configuration in
            configuration.maxConnections = 20
            configuration.headerTimeout = 60
        }
        var slow: [TestHTTPClient] = []
        for _ in 0..<20 {
            let client = try TestHTTPClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\nx")
            slow.append(client)
        }
        Thread.sleep(forTimeInterval: 1.5)
        for attempt in 0..<3 {
            let client = try TestHTTPClient(port: server.port)
            try client.send(rawRequest("GET", "/n/\(attempt)"))
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200, response.text)
        }
        XCTAssertEqual(try slow[0].readResponse().status, 408, "the slowest was evicted with a 408")
    }

    /// An early answer (413 before a 32 MiB body is read) must reach a client that sends its whole
    /// body before reading, as Python's urllib does: lingering close, not a reset.
    func testAnEarlyErrorReachesAClientThatSendsItsWholeBodyFirst() throws {
        try startServer()
        let client = try TestHTTPClient(port: server.port, timeout: 10)
        // Larger than the socket buffers, so the client is still sending when the answer comes.
        let body = [UInt8](repeating: 0x78, count: 32 << 20)
        let request = Array("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        XCTAssertEqual(client.sendAsMuchAsPossible(request, timeout: 10), request.count, "the whole body was taken")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 413)
        XCTAssertTrue(response.text.contains("BODY_TOO_LARGE"))
        XCTAssertTrue(client.waitForClose())
    }

    /// When descriptors run out, `accept` fails with EMFILE. The server takes the waiting client
    /// off the backlog with a 503 (through a reserve descriptor) instead of spinning on the
    /// listener, and accepts again once descriptors are free.
    func testRunningOutOfDescriptorsAnswers503AndRecovers() throws {
        try startServer { $0.maxConnections = 10_000 }
        // Sockets for the clients are made first: only the server's accepts hit the limit.
        let sockets = (0..<24).map { _ in socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        let open = (try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).count
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        var lowered = saved
        lowered.rlim_cur = rlim_t(open + 8)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered), 0)
        var statuses: [Int] = []
        do {
            defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
            var clients: [TestHTTPClient] = []
            for fd in sockets { clients.append(try TestHTTPClient(socket: fd, port: server.port, timeout: 5)) }
            for client in clients {
                try? client.send(rawRequest("GET", "/n/1"))
                statuses.append((try? client.readResponse().status) ?? -1)
            }
        }
        XCTAssertFalse(statuses.contains(-1), "a client got no answer: \(statuses)")
        XCTAssertTrue(statuses.contains(503), "\(statuses)")
        XCTAssertTrue(statuses.contains(200), "\(statuses)")
        let after = try TestHTTPClient(port: server.port)
        try after.send(rawRequest("GET", "/n/2"))
        XCTAssertEqual(try after.readResponse().text, "2", "accepting again once descriptors are free")
    }

    /// A head whose lines end in bare LF never contains CRLFCRLF: it was answered 408 after the
    /// header timeout; it is refused at once.
    func testAHeadEndingInBareLineFeedsIsRefusedAtOnce() throws {
        try startServer { $0.headerTimeout = 30 }
        let client = try TestHTTPClient(port: server.port, timeout: 5)
        try client.send("GET /n/1 HTTP/1.1\nHost: a\n\n")
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 400)
        XCTAssertTrue(response.text.contains("bare LF"), response.text)
        XCTAssertTrue(client.waitForClose())
    }

    /// The configured default headers reach every answer: the router's 404 and 405 and the
    /// errors the HTTP layer makes itself (400, 413, 431), not only what handlers answer.
    func testDefaultHeadersAreOnEveryAnswer() throws {
        try startServer {
            $0.defaultHeaders = [("X-Content-Type-Options", "nosniff"), ("Content-Security-Policy", "frame-ancestors 'none'")]
            $0.limits.maxBodyBytes = 10
        }
        let requests = [
            rawRequest("GET", "/n/1"), rawRequest("GET", "/nowhere"), rawRequest("DELETE", "/n/1"),
            "NOT HTTP\r\n\r\n", rawRequest("POST", "/echo", body: String(repeating: "x", count: 11)),
            "GET / HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X-A: b\r\n", count: 101) + "\r\n",
        ]
        var statuses: [Int] = []
        for request in requests {
            let client = try TestHTTPClient(port: server.port, timeout: 5)
            try client.send(request)
            let response = try client.readResponse()
            statuses.append(response.status)
            XCTAssertEqual(response.header("x-content-type-options"), "nosniff", "status \(response.status)")
            XCTAssertEqual(response.header("content-security-policy"), "frame-ancestors 'none'", "status \(response.status)")
        }
        XCTAssertEqual(statuses, [200, 404, 405, 400, 413, 431])
    }

    /// A handler's own header of the same name wins over the default (the console's page CSP).
    func testAHandlerHeaderReplacesTheDefault() throws {
        try startServer { $0.defaultHeaders = [("Content-Security-Policy", "default-src 'none'")] }
        let client = try TestHTTPClient(port: server.port, timeout: 5)
        try client.send(rawRequest("GET", "/n/1"))
        XCTAssertEqual(try client.readResponse().header("content-security-policy"), "default-src 'none'")
    }
}
