import Application
import Foundation
import TestSupport
import XCTest

/// The deployment files are real: nginx accepts the site, the env example names real variables.
final class DeployTests: XCTestCase {
    func testNginxSiteIsValid() throws { try checkNginxSite("Deploy/nginx-entitle.conf") }

    /// Both sites keep the console to the addresses the operator allows, and pass on what the
    /// console's cookie and sign-in limit rely on.
    func testNginxSitesRestrictTheConsole() throws {
        for file in ["Deploy/nginx-entitle.conf", "Deploy/nginx-entitle-upstream.conf"] {
            let site = try String(contentsOf: packageRoot.appendingPathComponent(file), encoding: .utf8)
            let console = try XCTUnwrap(site.components(separatedBy: "location /console {").dropFirst().first, file)
            let block = try XCTUnwrap(console.components(separatedBy: "}").first)
            XCTAssert(block.contains("deny all;") && block.contains("allow 127.0.0.1;"), file)
            XCTAssert(block.contains("X-Forwarded-Proto $scheme") && block.contains("X-Forwarded-For $proxy_add_x_forwarded_for"), file)
        }
    }

    func testNginxUpstreamSiteForSeveralInstancesIsValid() throws {
        try checkNginxSite("Deploy/nginx-entitle-upstream.conf")
        let site = try String(contentsOf: packageRoot.appendingPathComponent("Deploy/nginx-entitle-upstream.conf"), encoding: .utf8)
        XCTAssertTrue(site.contains("server 127.0.0.1:8081") && site.contains("server 127.0.0.1:8082"))
    }

    private func checkNginxSite(_ file: String) throws {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let nginx else { throw XCTSkip("nginx is not installed (apt-get install nginx)") }
        let prefix = try makeTemporaryDirectory("entitle-nginx")
        defer { try? FileManager.default.removeItem(at: prefix) }
        try runProcess(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=entitle.example.com", "-days", "1",
                "-keyout", prefix.appendingPathComponent("privkey.pem").path,
                "-out", prefix.appendingPathComponent("fullchain.pem").path,
            ])
        let site = try String(contentsOf: packageRoot.appendingPathComponent(file), encoding: .utf8)
            .replacingOccurrences(of: "/etc/letsencrypt/live/entitle.example.com/", with: prefix.path + "/")
        try writeFile(prefix.appendingPathComponent("site.conf"), site)
        let mimeTypes = FileManager.default.fileExists(atPath: "/etc/nginx/mime.types") ? "include /etc/nginx/mime.types;" : ""
        try writeFile(
            prefix.appendingPathComponent("nginx.conf"),
            """
            pid \(prefix.path)/nginx.pid;
            error_log stderr;
            events {}
            http {
                \(mimeTypes)
                access_log off;
                client_body_temp_path \(prefix.path)/body;
                proxy_temp_path \(prefix.path)/proxy;
                include \(prefix.path)/site.conf;
            }
            """)
        let result = try runProcess(
            nginx, ["-t", "-p", prefix.path, "-e", "stderr", "-c", prefix.appendingPathComponent("nginx.conf").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("test is successful"), result.stderr)
    }

    /// The shipped units forbid @resources, which holds setpriority and setrlimit: under their own
    /// filter `entitle serve` died with SIGSYS right after `listening`, and Restart= looped. Each
    /// unit's SystemCallFilter= is applied as systemd applies it (libseccomp, the sets as
    /// `systemd-analyze syscall-filter` lists them, as an unprivileged user) and the server must
    /// start, sign, store, deliver a webhook, reload on SIGHUP and stop cleanly on SIGTERM.
    func testTheServerRunsUnderEachUnitsSystemCallFilter() throws {
        guard (try? runProcess(systemPython, ["-c", "import seccomp"]))?.status == 0 else {
            return XCTFail(
                "libseccomp's Python binding is missing: apt-get install python3-seccomp (Scripts/install-dependencies.sh --tests)")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            return XCTFail("systemd-analyze is missing: apt-get install systemd")
        }
        for unit in ["Deploy/entitle.service", "Deploy/entitle@.service"] { try serveUnderFilter(of: unit) }
    }

    private func serveUnderFilter(of unit: String) throws {
        let folder = try makeTemporaryDirectory("entitle-unit")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A webhook endpoint nobody listens on: the delivery lanes start, lower their priority and
        // try to deliver (libcurl's sockets) under the filter.
        let config = try copyExampleConfiguration(to: folder)
            .replacingOccurrences(
                of: #""billingRetryGrantsAccess": false"#,
                with:
                    #""billingRetryGrantsAccess": false, "webhooks": [{"url": "http://127.0.0.1:9/hook", "secret": "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdA=="}]"#
            )
        try writeFile(folder.appendingPathComponent("entitle.json"), config)
        let launcher = [
            systemPython, packageRoot.appendingPathComponent("Tests/TestSupport/run-under-unit-filter.py").path,
            packageRoot.appendingPathComponent(unit).path, "--user", "nobody", "--workdir", folder.path, "--",
        ]
        // The binary runs from the folder the unprivileged user owns: the checkout may be where
        // that user cannot reach (a root-only home), as /usr/local/bin is not.
        let binary = folder.appendingPathComponent("entitle")
        try FileManager.default.copyItem(at: entitleExecutable, to: binary)
        let (server, port) = try startEntitleServe(
            config: folder.appendingPathComponent("entitle.json").path, launcher: launcher, executable: binary)
        defer { if server.isRunning { server.terminate() } }
        func call(_ method: String, _ path: String, key: String, body: String? = nil) throws -> Int {
            let client = try TestHTTPClient(port: port, timeout: 10)
            try client.send(
                rawRequest(method, path, headers: ["Authorization: Bearer \(key)", "Content-Type: application/json"], body: body))
            return try client.readResponse().status
        }
        XCTAssertEqual(
            try call(
                "POST", "/v1/promotional-offers/sign", key: "client_example_not_secret_0001",
                body: #"{"productId":"pro.monthly","offerId":"welcome20"}"#),
            200, unit)
        XCTAssertEqual(
            try call(
                "POST", "/v1/subscribers/7e3fb20b-4cdb-47cc-936d-99d65f608138/entitlements/pro/grants",
                key: "admin_example_not_secret_0001", body: #"{"duration":"P1M"}"#),
            201, unit)
        XCTAssertEqual(try call("POST", "/v1/webhooks/test", key: "server_example_not_secret_0001"), 200, unit)
        kill(server.processIdentifier, SIGHUP)
        Thread.sleep(forTimeInterval: 1.5)  // the deliveries' first attempts and their retry timers
        XCTAssertEqual(try call("GET", "/v1/stats", key: "admin_example_not_secret_0001"), 200, unit)
        XCTAssertTrue(server.isRunning, "\(unit): the server is still running under the filter")
        server.terminate()
        server.waitUntilExit()
        XCTAssertEqual(server.terminationReason, .exit, "\(unit): not killed by a signal (SIGSYS is a forbidden call)")
        XCTAssertEqual(server.terminationStatus, 0, unit)
    }

    /// `systemd-analyze verify` checks every directive; the binary path points at the built one.
    func testSystemdUnitVerifies() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            throw XCTSkip("systemd-analyze is not installed")
        }
        let folder = try makeTemporaryDirectory("entitle-unit")
        defer { try? FileManager.default.removeItem(at: folder) }
        let unit = try String(contentsOf: packageRoot.appendingPathComponent("Deploy/entitle.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("ExecStart=/usr/local/bin/entitle serve --config /etc/entitle/entitle.json"))
        let path = folder.appendingPathComponent("entitle.service")
        try writeFile(path, unit.replacingOccurrences(of: "/usr/local/bin/entitle", with: entitleExecutable.path))
        let result = try runProcess("/usr/bin/systemd-analyze", ["verify", "--man=no", path.path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertEqual(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines), "", "no warnings")
    }

    /// The template unit verifies as an instance (`entitle@8081.service`).
    func testTemplateUnitVerifiesAsAnInstance() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            throw XCTSkip("systemd-analyze is not installed")
        }
        let folder = try makeTemporaryDirectory("entitle-unit")
        defer { try? FileManager.default.removeItem(at: folder) }
        let unit = try String(contentsOf: packageRoot.appendingPathComponent("Deploy/entitle@.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("Environment=ENTITLE_PORT=%i"))
        try writeFile(
            folder.appendingPathComponent("entitle@.service"),
            unit.replacingOccurrences(of: "/usr/local/bin/entitle", with: entitleExecutable.path))
        let result = try runProcess(
            "/usr/bin/systemd-analyze",
            ["verify", "--man=no", folder.appendingPathComponent("entitle@.service").path + ":entitle@8081.service"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
    }

    func testEnvironmentExampleNamesVariablesTheLoaderReads() throws {
        let example = try String(contentsOf: packageRoot.appendingPathComponent("Deploy/entitle.env.example"), encoding: .utf8)
        // The variables are declared with their members (ServerSettings.section, StorageMembers.section).
        let declared =
            ServerSettings.section.members.compactMap(\.environment)
            + StorageMembers.section.members.compactMap(\.environment)
        XCTAssert(declared.contains("ENTITLE_PORT"), "\(declared)")
        XCTAssert(declared.contains("ENTITLE_STORAGE_POSTGRESQL_PASSWORD_FILE"), "\(declared)")
        for name in declared { XCTAssertTrue(example.contains(name), "Deploy/entitle.env.example lacks \(name)") }
    }
}
