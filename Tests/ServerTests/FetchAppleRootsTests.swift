import Crypto
import Foundation
import TestSupport
import XCTest

/// `entitle fetch-apple-roots` against a local HTTPS stand-in (`openssl s_server -WWW`): only
/// files with Apple's fingerprints are kept, and TLS is verified.
final class FetchAppleRootsTests: XCTestCase {
    func testKeepsOnlyApplesRootsOverVerifiedTLS() throws {
        let conformance = try conformanceDirectory()
        let site = try makeTemporaryDirectory("entitle-site")
        let out = try makeTemporaryDirectory("entitle-roots")
        defer {
            try? FileManager.default.removeItem(at: site)
            try? FileManager.default.removeItem(at: out)
        }
        // The site serves the real G3, a forged "G2" and no Apple Inc. root.
        try FileManager.default.copyItem(
            at: conformance.appendingPathComponent("roots/AppleRootCA-G3.cer"),
            to: site.appendingPathComponent("AppleRootCA-G3.cer"))
        try runProcess(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=Apple Root CA - G2", "-days", "1", "-keyout", site.appendingPathComponent("fake.key").path,
                "-outform", "DER", "-out", site.appendingPathComponent("AppleRootCA-G2.cer").path,
            ])
        let tlsKey = site.appendingPathComponent("tls.key").path, tlsCert = site.appendingPathComponent("tls.pem").path
        try runProcess(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                "-keyout", tlsKey, "-out", tlsCert,
            ])
        let port = freeLoopbackPort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["openssl", "s_server", "-WWW", "-accept", "127.0.0.1:\(port)", "-cert", tlsCert, "-key", tlsKey, "-quiet"]
        server.currentDirectoryURL = site
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        for _ in 0..<100 where (try? TestHTTPClient(port: port, timeout: 1)) == nil { Thread.sleep(forTimeInterval: 0.05) }

        let base = "https://127.0.0.1:\(port)/"
        let untrusted = try runProcess(entitleExecutable.path, ["fetch-apple-roots", "--out", out.path, "--base-url", base])
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertTrue(untrusted.stderr.contains("TLS"), "the stand-in's certificate is not trusted by default: \(untrusted.stderr)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path), [])

        let result = try runProcess(
            entitleExecutable.path,
            [
                "fetch-apple-roots", "--out", out.path, "--base-url", base,
                "--ca-file", tlsCert,
            ])
        XCTAssertEqual(result.status, 1, "not all three roots could be had")
        XCTAssertTrue(result.stdout.contains("AppleRootCA-G3.cer: Apple Root CA - G3"), result.stdout)
        XCTAssertTrue(result.stderr.contains("AppleRootCA-G2.cer: SHA-256"), result.stderr)
        XCTAssertTrue(result.stderr.contains("AppleIncRootCertificate.cer"), result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path), ["AppleRootCA-G3.cer"])
        let saved = try Certificate.load(contentsOf: out.appendingPathComponent("AppleRootCA-G3.cer").path)[0]
        XCTAssertEqual(saved.sha256Fingerprint, "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
    }
}
