import Application
import Entitlements
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// `POST /v1/verify` and `entitle verify` on every real Apple-signed file of the conformance data.
final class VerifyEndpointTests: XCTestCase {
    private static let bundles = ["com.loki-project.loki-messenger", "com.Abilities", "com.goodheartapp"]
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory()
        try runProcess(
            "openssl",
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", folder.appendingPathComponent("key.p8").path,
            ])
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    /// One app per bundle ID of the real data, Sandbox only, trusting `roots`.
    private func writeConfig(roots: [String]?, environments: String = #"["Sandbox"]"#, extra: String = "") throws -> String {
        let verification =
            roots.map { #", "verification": {"rootCertificates": [\#($0.map { "\"\($0)\"" }.joined(separator: ","))]\#(extra)}"# } ?? ""
        let apps = Self.bundles.enumerated().map { index, bundle in
            """
            {"id": "app\(index)", "bundleId": "\(bundle)", "environments": \(environments), "appAppleId": 1470168868,
             "signingKey": {"keyId": "KEY\(index)", "privateKeyFile": "key.p8"},
             "apiKeys": [{"key": "server_key_for_app_\(index)", "role": "server"}, {"key": "client_key_for_app_\(index)", "role": "client"}]\(verification)}
            """
        }
        let path = folder.appendingPathComponent("entitle.json").path
        try writeFile(URL(fileURLWithPath: path), #"{"server": {"port": 0}, "apps": [\#(apps.joined(separator: ","))]}"#)
        return path
    }

    private func server(_ path: String) throws -> EntitleServer {
        try EntitleServer(
            configuration: ConfigurationLoader.load(path: path, environment: [:]), logOutput: nil, store: try makeTemporaryStore())
    }

    private func post(_ server: EntitleServer, app: Int, _ body: JSONObject, role: String = "server") -> (Int, JSONValue, HTTPResponse) {
        let response = server.handle(
            HTTPRequest(
                method: "POST", target: "/v1/verify",
                headers: [("authorization", "Bearer \(role)_key_for_app_\(app)")],
                body: JSONValue.object(body).serializedBytes))
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null, response)
    }

    private static let members = [
        "transaction": "signedTransaction", "renewalInfo": "signedRenewalInfo",
        "notification": "signedPayload",
    ]

    func testEveryRealFileOverHTTP() throws {
        let conformance = try conformanceDirectory()
        let g3 = conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path
        let entitle = try server(try writeConfig(roots: [g3]))
        let production = try server(try writeConfig(roots: [g3], environments: #"["Production"]"#))
        let manifest = try JSONParser.parse([UInt8](Data(contentsOf: conformance.appendingPathComponent("real-appstore/manifest.json"))))
        var nestedItems = 0
        for file in manifest["files"]!.arrayValue! {
            let name = file["file"]!.stringValue!, kind = file["kind"]!.stringValue!
            let jws = try String(contentsOf: conformance.appendingPathComponent("real-appstore/\(name)"), encoding: .utf8)
            let app = Self.bundles.firstIndex(of: file["bundleId"]?.stringValue ?? Self.bundles[0])!
            let (status, json, _) = post(entitle, app: app, [Self.members[kind]!: .string(jws)])
            XCTAssertEqual(status, 200, "\(name): \(json)")
            XCTAssertEqual(json["environment"], "Sandbox")
            XCTAssertEqual(json["kind"]?.stringValue, kind == "renewalInfo" ? "renewal-info" : kind)
            XCTAssertEqual(json["payload"]?["signedDate"]?.int64Value, file["signedDate"]?.int64Value)
            if json["payload"]?["data"]?["signedTransactionInfo"] != nil {
                XCTAssertNotNil(json["transactionInfo"]?["transactionId"], "\(name): nested transaction verified and decoded")
                XCTAssertEqual(json["nestedVerdicts"]?["signedTransactionInfo"]?["status"], "VALID")
                nestedItems += 1
            }
            if json["payload"]?["data"]?["signedRenewalInfo"] != nil {
                XCTAssertNotNil(json["renewalInfo"]?["originalTransactionId"], "\(name): nested renewal info")
                nestedItems += 1
            }

            // An app that enables only Production refuses Sandbox data.
            let (refused, error, _) = post(production, app: app, [Self.members[kind]!: .string(jws)])
            XCTAssertEqual(refused, 422)
            XCTAssertEqual(error["error"]?["code"], "VERIFICATION_FAILED")
            XCTAssertEqual(error["error"]?["status"], "INVALID_ENVIRONMENT")
        }
        // Every file, and every signed item nested in a notification, is one counted verification.
        XCTAssertEqual(
            entitle.metrics.total("entitle_verifications_total", matching: ["source": "verify", "result": "VALID"]),
            46 + nestedItems)
    }

    func testRequestErrors() throws {
        let conformance = try conformanceDirectory()
        let g3 = conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path
        let entitle = try server(try writeConfig(roots: [g3]))
        let jws = try String(contentsOf: conformance.appendingPathComponent("real-appstore/session-01-transaction.jws"), encoding: .utf8)
        XCTAssertEqual(post(entitle, app: 0, ["signedTransaction": .string(jws)], role: "client").0, 403)
        XCTAssertEqual(post(entitle, app: 0, ["signedTransaction": .string(jws), "signedPayload": .string(jws)]).0, 400)
        XCTAssertEqual(post(entitle, app: 0, [:]).0, 400)
        XCTAssertEqual(post(entitle, app: 0, ["signedTransaction": 5]).0, 400)
        let (status, json, _) = post(entitle, app: 0, ["signedTransaction": "not.a.jws"])
        XCTAssertEqual(status, 422)
        XCTAssertEqual(json["error"]?["status"], "INVALID_JWT_FORMAT")
        let (wrong, wrongJSON, _) = post(entitle, app: 1, ["signedTransaction": .string(jws)])
        XCTAssertEqual(wrong, 422)
        XCTAssertEqual(wrongJSON["error"]?["status"], "INVALID_APP_IDENTIFIER")

        // No root configured: a deployment problem, answered 503 with Retry-After so senders retry.
        let rootless = try server(try writeConfig(roots: nil))
        let (unavailable, body, response) = post(rootless, app: 0, ["signedTransaction": .string(jws)])
        XCTAssertEqual(unavailable, 503)
        XCTAssertEqual(body["error"]?["code"], "RETRYABLE_VERIFICATION_FAILURE")
        XCTAssertNotNil(response.header("Retry-After"))
        let ready = try JSONParser.parse(rootless.handle(HTTPRequest(method: "GET", target: "/readyz")).body)
        XCTAssertTrue(ready["checks"]?["rootCertificates"]?["app0"]?.stringValue?.contains("no Apple root") == true, "\(ready)")
    }

    func testRootsMustBeApplesUnlessAllowed() throws {
        let chain = try TestChain()
        let root = chain.folder.appendingPathComponent("root.pem").path
        XCTAssertThrowsError(try ConfigurationLoader.load(path: try writeConfig(roots: [root]), environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("is not an Apple root certificate"), "\(error)")
        }
        XCTAssertNoThrow(
            try ConfigurationLoader.load(
                path: try writeConfig(roots: [root], extra: #", "allowPrivateRoots": true"#),
                environment: [:]))
        // The default: every certificate in apple-roots/ beside the configuration.
        let rootless = try writeConfig(roots: nil)
        let check = try runProcess(entitleExecutable.path, ["check-config", "--config", rootless])
        XCTAssertTrue(check.stdout.contains("NO Apple root certificate configured"), check.stdout)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("apple-roots"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: root, toPath: folder.appendingPathComponent("apple-roots/private.pem").path)
        XCTAssertThrowsError(
            try ConfigurationLoader.load(path: rootless, environment: [:]), "a private root in apple-roots/ is refused too")
    }

    func testEntitleVerifyCommand() throws {
        let conformance = try conformanceDirectory()
        let config = try writeConfig(roots: [conformance.appendingPathComponent("roots/AppleRootCA-G3.cer").path])
        let manifest = try JSONParser.parse([UInt8](Data(contentsOf: conformance.appendingPathComponent("real-appstore/manifest.json"))))
        for file in manifest["files"]!.arrayValue! {
            let name = file["file"]!.stringValue!
            let path = conformance.appendingPathComponent("real-appstore/\(name)").path
            let app = Self.bundles.firstIndex(of: file["bundleId"]?.stringValue ?? Self.bundles[0])!
            let result = try runProcess(entitleExecutable.path, ["verify", "--config", config, "--app", "app\(app)", "@" + path])
            XCTAssertEqual(result.status, 0, "\(name): \(result.stdout) \(result.stderr)")
            let json = try JSONParser.parse(result.stdout)
            XCTAssertEqual(json["status"], "VALID")
            let expectedKind = file["kind"]!.stringValue! == "renewalInfo" ? "renewal-info" : file["kind"]!.stringValue!
            XCTAssertEqual(json["kind"]?.stringValue, expectedKind, "kind detected from the payload")

            let expected = file["expected"]!["atNow"]!["examples"]!["2026-11-29T00:00:00Z"]!.stringValue!
            let later = try runProcess(
                entitleExecutable.path,
                [
                    "verify", "--config", config, "--app", "app\(app)",
                    "--at", "2026-11-29T00:00:00Z", "@" + path,
                ])
            XCTAssertEqual(try JSONParser.parse(later.stdout)["status"]?.stringValue, expected, name)
            XCTAssertEqual(later.status, expected == "VALID" ? 0 : 1)
        }
        let usage = try runProcess(entitleExecutable.path, ["verify", "--config", config, "--app", "app0", "--kind", "receipt", "x.y.z"])
        XCTAssertEqual(usage.status, 2)
    }
}
