import Foundation
import JSON
import TestSupport
import XCTest

/// `entitle serve` as a user runs it: a real process, a real port, logs on stdout, SIGTERM.
final class ServeCommandTests: XCTestCase {
    func testServeAnswersLogsAndStopsOnSIGTERM() throws {
        let folder = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try copyExampleConfiguration(to: folder)
        try writeFile(folder.appendingPathComponent("entitle.json"), config)

        let process = Process()
        process.executableURL = entitleExecutable
        process.arguments = ["serve", "--config", folder.appendingPathComponent("entitle.json").path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let reader = LineReader(output.fileHandleForReading)

        let listening = try XCTUnwrap(reader.nextLine(), "no start-up line")
        let startup = try JSONParser.parse(listening)
        XCTAssertEqual(startup["msg"], "listening")
        let port = Int(try XCTUnwrap(startup["port"]?.int64Value))
        XCTAssertGreaterThan(port, 0, "port 0 picks a free port and logs it")

        let client = try TestHTTPClient(port: port)
        try client.send(
            rawRequest(
                "POST", "/v1/promotional-offers/sign",
                headers: ["Authorization: Bearer client_example_not_secret_0001", "Content-Type: application/json"],
                body: #"{"productId":"pro.monthly","offerId":"welcome20"}"#))
        let response = try client.readResponse()
        XCTAssertEqual(response.status, 200)
        // Start-up warnings (the example has no Apple roots) come before the request line.
        var requestLine = JSONValue.null
        while requestLine["msg"] != "request", let line = reader.nextLine() { requestLine = try JSONParser.parse(line) }
        XCTAssertEqual(requestLine["route"], "/v1/promotional-offers/sign")
        XCTAssertEqual(requestLine["status"], .int(200))
        XCTAssertEqual(requestLine["requestId"]?.stringValue, response.header("X-Request-Id"))
        XCTAssertNotNil(requestLine["durationMs"]?.doubleValue)
        XCTAssertNotNil(requestLine["bytes"]?.int64Value)
        let signature = try XCTUnwrap(try JSONParser.parse(response.body)["signature"]?.stringValue)
        XCTAssertFalse(requestLine.serializedString.contains(signature), "no signature in logs")
        XCTAssertFalse(requestLine.serializedString.contains("client_example"), "no key in logs")

        // Every answer carries the security headers: /healthz, /metrics, the router's 404 and
        // 405, and what the HTTP layer answers itself (a malformed request's 400).
        for raw in [
            rawRequest("GET", "/healthz"), rawRequest("GET", "/metrics"), rawRequest("GET", "/v1/nowhere"),
            rawRequest("DELETE", "/healthz"), "NOT HTTP\r\n\r\n",
        ] {
            let probe = try TestHTTPClient(port: port)
            try probe.send(raw)
            let answer = try probe.readResponse()
            XCTAssertEqual(answer.header("x-content-type-options"), "nosniff", "\(answer.status) \(raw)")
            XCTAssertEqual(answer.header("content-security-policy"), "default-src 'none'; frame-ancestors 'none'", "\(raw)")
        }

        process.terminate()  // SIGTERM
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let rest = reader.remainingLines()
        XCTAssertTrue(rest.contains { $0.contains("\"shutting down\"") }, "\(rest)")
        XCTAssertTrue(rest.contains { $0.contains("\"stopped\"") })
    }
}

/// `entitle serve --config PATH` in the background: the process and the port of its `listening`
/// line. The rest of its log is drained, so the server never blocks on a full pipe.
/// `launcher`, when given, is a command that runs it (e.g. under a unit's system-call filter).
func startEntitleServe(
    config: String, launcher: [String] = [], executable: URL = entitleExecutable
) throws -> (process: Process, port: Int) {
    let server = Process()
    let command = launcher + [executable.path, "serve", "--config", config]
    server.executableURL = URL(fileURLWithPath: command[0])
    server.arguments = Array(command.dropFirst())
    let output = Pipe()
    server.standardOutput = output
    try server.run()
    // Lines may come before `listening` (a PostgreSQL notice from the migrations, say).
    let reader = LineReader(output.fileHandleForReading)
    var listening = JSONValue.null
    while listening["msg"] != "listening" {
        listening = try JSONParser.parse(try XCTUnwrap(reader.nextLine(), "entitle serve stopped before listening"))
    }
    let port = Int(try XCTUnwrap(listening["port"]?.int64Value))
    Thread { while !output.fileHandleForReading.availableData.isEmpty {} }.start()
    return (server, port)
}

/// Reads lines from a pipe with a timeout.
final class LineReader: @unchecked Sendable {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    func nextLine(timeout: Double = 10) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            // Wait for input at most until the deadline: `availableData` alone blocks for good
            // on a pipe nobody writes to any more.
            var waiting = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(0, min(deadline.timeIntervalSinceNow, 3_600)) * 1000)
            guard poll(&waiting, 1, milliseconds) > 0 else { return nil }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer += data
        }
        return nil
    }

    func remainingLines() -> [String] {
        buffer += handle.readDataToEndOfFile()
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
