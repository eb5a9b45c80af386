import Application
import Foundation
import JSON
import Server
import TestSupport
import XCTest

/// `docs/openapi.json` is the API's contract: it names exactly the routes the server has, it is
/// what `GET /openapi.json` serves, it knows every error code the sources answer with, it is valid
/// OpenAPI 3.1 by `openapi-spec-validator`, and `schemathesis` (both from PyPI) finds nothing the
/// running server does that the document does not say — with each key role and without a key,
/// against a server seeded with a customer and backed by the App Store and Google Play stand-ins.
final class OpenAPIContractTests: XCTestCase {
    private let documentURL = packageRoot.appendingPathComponent("docs/openapi.json")

    private func document() throws -> JSONObject {
        try XCTUnwrap(JSONParser.parse(Array(Data(contentsOf: documentURL))).objectValue, "docs/openapi.json is an object")
    }

    private func fixture(google: GooglePlayStandIn) throws -> SupportFixture {
        let play = """
            , "googlePlay": {"packageName": "com.example.android", "serviceAccountKeyFile": "\(google.serviceAccountFile.path)",
              "pubsub": {"audience": "https://entitle.example.com/v1/notifications/google",
                         "serviceAccountEmail": "pubsub-push@example-project.iam.gserviceaccount.com"},
              "jwks": "\(google.jwksFile.path)", "apiURL": "\(google.baseURL)", "tokenURL": "\(google.tokenURL)"},
              "refunds": {"customerConsent": true},
              "retention": {"defaultMessage": "msg-default"}
            """
        // Rate limits off: schemathesis sends thousands of requests from one key and address.
        return try SupportFixture(
            top: #", "rateLimits": {"enabled": false}"#, app: play, environments: #"["Production", "Sandbox"]"#,
            googlePlayProducts: true)
    }

    func testTheDocumentNamesExactlyTheRoutesTheServerServes() throws {
        let google = try GooglePlayStandIn(packageName: "com.example.android")
        let fixture = try fixture(google: google)
        let served = Set(fixture.entitle.routes.map { "\($0.method) \($0.pattern)" })
        guard let paths = try document()["paths"]?.objectValue else { return XCTFail("the document has no paths") }
        var documented: Set<String> = []
        for (path, item) in paths.members {
            for method in item.objectValue?.keys ?? [] where ["get", "put", "post", "delete", "patch"].contains(method) {
                documented.insert("\(method.uppercased()) \(path)")
            }
        }
        XCTAssertEqual(served.subtracting(documented).sorted(), [], "routes the document lacks")
        XCTAssertEqual(documented.subtracting(served).sorted(), [], "operations the server lacks")
        XCTAssertGreaterThan(served.count, 50)
    }

    /// The console's cookie stands for its admin key wherever an admin key is accepted: the
    /// document says so on exactly the routes that take it (it was missing from the metrics,
    /// refund requests, events and more), checked by calling each route with the cookie alone.
    func testTheConsoleCookieIsDocumentedExactlyWhereItIsAccepted() throws {
        let google = try GooglePlayStandIn(packageName: "com.example.android")
        let fixture = try fixture(google: google)
        let (cookie, csrf) = try signIn(fixture)
        guard let paths = try document()["paths"]?.objectValue else { return XCTFail("the document has no paths") }
        var checked = 0
        for (pattern, item) in paths.members {
            let path = pattern.replacingOccurrences(of: #"\{[^}]+\}"#, with: "x", options: .regularExpression)
            for (method, operation) in item.objectValue?.members ?? [] {
                guard let security = operation["security"]?.arrayValue, !security.isEmpty, pattern != "/console/session" else { continue }
                let schemes = Set(security.flatMap { $0.objectValue?.keys ?? [] })
                let status = try fixture.call(method.uppercased(), path, key: nil, cookie: cookie, csrf: csrf, body: [:]).status
                let what = "\(method.uppercased()) \(pattern): \(status)"
                XCTAssertEqual(
                    schemes.contains("consoleSession"), schemes.contains("adminKey"), "\(what): the cookie stands for an admin key")
                XCTAssertEqual(status != 401, schemes.contains("consoleSession"), what)
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 40)
    }

    /// A console session's cookie and CSRF token, signed in with the admin key.
    private func signIn(_ fixture: SupportFixture) throws -> (cookie: String, csrf: String) {
        let reply = try fixture.call("POST", "/console/session", key: nil, body: ["key": .string(SupportFixture.admin)])
        let cookie = try XCTUnwrap(
            reply.headers["set-cookie"]?.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last.map(String.init))
        return (cookie, try XCTUnwrap(reply.json["csrfToken"]?.stringValue))
    }

    func testTheServerServesTheRepositoryDocumentWithoutAKey() throws {
        let google = try GooglePlayStandIn(packageName: "com.example.android")
        let fixture = try fixture(google: google)
        let answer = try fixture.call("GET", "/openapi.json", key: nil)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.headers["content-type"], "application/json")
        XCTAssertEqual(Array(answer.text.utf8), Array(try Data(contentsOf: documentURL)), "the served document is docs/openapi.json")
        XCTAssertEqual(answer.json["openapi"], "3.1.0")
        XCTAssertEqual(answer.json["info"]?["version"]?.stringValue, EntitleVersion.current, "the document's version is the server's")
    }

    /// Every stable code a source answers with (`code: "…"`, `"code":"…"` in a body written by hand,
    /// and the codes of the error conformances and of the answer to an unexpected error) is
    /// in the document's `ErrorCode`, and the document lists no code nothing answers.
    func testTheDocumentListsEveryErrorCodeTheServerAnswers() throws {
        let sources = packageRoot.appendingPathComponent("Sources")
        var answered: Set<String> = []
        let literal = try NSRegularExpression(pattern: #"(?:code: "|"code":")([A-Z][A-Z_]+)""#)
        let anyCode = try NSRegularExpression(pattern: #""([A-Z][A-Z_]+)""#)
        let conformances = [
            "Application/Errors/ErrorConformances.swift", "Server/Composition/StorageError+HTTP.swift", "Server/HTTPAPI/ErrorAnswer.swift",
        ]
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let whole = conformances.contains { file.path.hasSuffix($0) }
            for match in (whole ? anyCode : literal).matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                answered.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        let codes = try document()["components"]?["schemas"]?["ErrorCode"]?["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertEqual(answered.subtracting(codes).sorted(), [], "codes the document lacks")
        XCTAssertEqual(Set(codes).subtracting(answered).sorted(), [], "codes nothing answers")
    }

    func testOpenAPISpecValidatorAcceptsTheDocument() throws {
        let python = try requireTestPython("openapi_spec_validator", for: "OpenAPIContractTests")
        let run = try runProcess(python, ["-m", "openapi_spec_validator", documentURL.path])
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssert(run.stdout.contains("OK"), run.stdout)
    }

    /// schemathesis generates valid and invalid requests for every operation from the served
    /// document and checks each answer: no 5xx, a documented status, the documented content type
    /// and a body matching the documented schema.
    func testSchemathesisFindsNoFailuresWithAnyKey() throws {
        let python = try requireTestPython("schemathesis", for: "OpenAPIContractTests")
        let google = try GooglePlayStandIn(packageName: "com.example.android")
        let fixture = try fixture(google: google)
        try fixture.seedCustomer()
        let granted = try fixture.call(
            "POST", "/v1/subscribers/\(fixture.token)/entitlements/pro/grants", body: ["duration": "P1M", "environment": "Sandbox"])
        XCTAssertEqual(granted.status, 201, granted.text)
        let report = packageRoot.appendingPathComponent(".build/test-output/schemathesis")
        try FileManager.default.createDirectory(at: report, withIntermediateDirectories: true)
        let (cookie, csrf) = try signIn(fixture)
        for (role, headers) in [
            ("admin", ["Authorization: Bearer \(SupportFixture.admin)"]), ("server", ["Authorization: Bearer \(SupportFixture.server)"]),
            ("client", ["Authorization: Bearer \(SupportFixture.client)"]), ("none", []),
            ("console", ["Cookie: entitle_session=\(cookie)", "X-CSRF-Token: \(csrf)"]),
        ] {
            var arguments = [
                "-m", "schemathesis.cli", "run", fixture.url + "/openapi.json",
                "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
                // One worker: Hypothesis describes its filters with ast.parse, which CPython 3.11
                // (Debian's) can fail from two threads at once ("AST constructor recursion depth
                // mismatch", an error of the tool, not of the server).
                "--max-examples", "25", "--seed", "20261202", "--generation-database", "none", "--workers", "1", "--no-color",
                "--request-timeout", "20",
                "--report", "junit", "--report-junit-path", report.appendingPathComponent("\(role).xml").path,
            ]
            for header in headers { arguments += ["--header", header] }
            // Run in the report folder: schemathesis and Hypothesis keep their caches where they run.
            let run = try runProcess(python, arguments, currentDirectory: report)
            try writeFile(report.appendingPathComponent("\(role).txt"), run.stdout + run.stderr)
            let summary = run.stdout.split(separator: "\n").suffix(40).joined(separator: "\n")
            XCTAssertEqual(
                run.status, 0, "schemathesis with the \(role) credentials:\n\(run.stdout.suffix(20_000))\n\(run.stderr.suffix(4000))")
            XCTAssert(run.stdout.contains("Tested:"), "schemathesis ran (\(role)):\n\(summary)")
        }
    }
}
