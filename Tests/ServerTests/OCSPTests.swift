import AppStore
import Application
import Crypto
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// Online checks against real OCSP responders on loopback: `openssl ocsp` for good and revoked
/// answers, and a misbehaving HTTP server for garbage, errors and silence.
final class OCSPTests: XCTestCase {
    private var processes: [Process] = []
    private var servers: [HTTPServer] = []

    override func tearDown() {
        for process in processes where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        for server in servers {
            server.shutdown()
            server.waitUntilStopped()
        }
    }

    /// Starts `openssl ocsp` answering for certificates issued by `ca` with the given index lines.
    private func startResponder(port: Int, chain: TestChain, ca: String, index: [String]) throws {
        let indexFile = chain.folder.appendingPathComponent("index-\(port).txt")
        try writeFile(indexFile, index.joined(separator: "\n") + "\n")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "ocsp", "-index", indexFile.path, "-port", "\(port)",
            "-rsigner", chain.folder.appendingPathComponent("\(ca).pem").path,
            "-rkey", chain.folder.appendingPathComponent("\(ca).key").path,
            "-CA", chain.folder.appendingPathComponent("\(ca).pem").path, "-ndays", "1",
        ]
        // openssl ocsp serves one connection at a time, so readiness is read from its log rather
        // than probed with a connection.
        let log = chain.folder.appendingPathComponent("ocsp-\(port).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        processes.append(process)
        for _ in 0..<100 {
            if let text = try? String(contentsOf: log, encoding: .utf8), text.contains("waiting for OCSP client connections") {
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTFail("openssl ocsp did not start on \(port)")
    }

    private func indexLine(serial: String, revoked: Bool, subject: String) -> String {
        "\(revoked ? "R" : "V")\t351231235959Z\t\(revoked ? "251101000000Z" : "")\t\(serial)\tunknown\t\(subject)"
    }

    private func verifier(_ chain: TestChain, timeout: Double = 5) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            .init(
                rootCertificates: [chain.root], bundleId: "com.example.app", appAppleId: nil,
                environment: .sandbox, onlineChecks: true),
            revocationChecker: OCSPRevocationChecker(timeout: timeout))
    }

    private func transaction(_ chain: TestChain) throws -> String {
        try chain.sign([
            "transactionId": "1", "bundleId": "com.example.app", "environment": "Sandbox",
            "signedDate": .int(TestChain.milliseconds(Date())),
        ])
    }

    func testGoodRevokedAndUnreachable() throws {
        let leafPort = freeLoopbackPort(), intermediatePort = freeLoopbackPort()
        let chain = try TestChain(ocspURLs: ("http://127.0.0.1:\(leafPort)/", "http://127.0.0.1:\(intermediatePort)/"))
        try startResponder(
            port: intermediatePort, chain: chain, ca: "root",
            index: [indexLine(serial: "02", revoked: false, subject: "/CN=Entitle Test Intermediate")])
        try startResponder(
            port: leafPort, chain: chain, ca: "intermediate",
            index: [indexLine(serial: "03", revoked: false, subject: "/CN=Entitle Test Leaf")])
        let jws = try transaction(chain)
        let good = try verifier(chain)
        XCTAssertEqual(good.verifyTransaction(jws).statusName, "VALID")

        // Revoked: the leaf responder now says so.
        processes.last?.terminate()
        processes.last?.waitUntilExit()
        try startResponder(
            port: leafPort, chain: chain, ca: "intermediate",
            index: [indexLine(serial: "03", revoked: true, subject: "/CN=Entitle Test Leaf")])
        let revoked = try verifier(chain).verifyTransaction(jws)
        XCTAssertEqual(revoked.failure?.status, .invalidChain)
        XCTAssertTrue(revoked.failure?.reason.contains("revoked") == true, revoked.failure?.reason ?? "")

        // The good answer is cached (chain cache, then OCSP cache): no network needed for a while.
        for process in processes {
            process.terminate()
            process.waitUntilExit()
        }
        XCTAssertEqual(good.verifyTransaction(jws).statusName, "VALID")
        // A fresh verifier must ask, and nobody answers: retryable.
        let unreachable = try verifier(chain).verifyTransaction(jws)
        XCTAssertEqual(unreachable.failure?.status, .retryableVerificationFailure)
    }

    func testGarbageErrorAndSlowResponders() throws {
        for (mode, expected) in [
            ("garbage", VerificationStatus.retryableVerificationFailure),
            ("error", .retryableVerificationFailure), ("slow", .retryableVerificationFailure),
            ("not-ocsp-signed", .invalidChain),
        ] {
            var configuration = HTTPServerConfiguration()
            configuration.port = 0
            configuration.eventLoops = 1
            let server = try HTTPServer(
                configuration: configuration,
                handler: { context in
                    switch mode {
                    case "garbage": context.respond(HTTPResponse(status: 200, body: Array("<html>captive portal</html>".utf8)))
                    case "error": context.respond(HTTPResponse(status: 500))
                    case "slow": DispatchQueue.global().asyncAfter(deadline: .now() + 3) { context.respond(HTTPResponse(status: 200)) }
                    default:
                        // A syntactically valid OCSP response that is not "successful".
                        context.respond(HTTPResponse(status: 200, body: [0x30, 0x03, 0x0A, 0x01, 0x06]))
                    }
                })
            server.start()
            servers.append(server)
            let url = "http://127.0.0.1:\(server.port)/"
            let chain = try TestChain(ocspURLs: (url, url))
            let started = Date()
            let result = try verifier(chain, timeout: 1).verifyTransaction(try transaction(chain))
            XCTAssertEqual(result.failure?.status, expected, "\(mode): \(result.failure?.reason ?? "valid")")
            XCTAssertLessThan(Date().timeIntervalSince(started), 2.5, "\(mode) bounded by the timeout")
        }
    }
}
