import Application
import Entitlements
import Foundation
import JSON
import Server
import TestSupport
import XCTest

/// Each configuration problem of the issue gives its own clear line and a non-zero exit, both
/// in-process and through `entitle check-config`.
final class ConfigurationTests: XCTestCase {
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

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func config(app: String = "", offers: String? = nil, keyFile: String = "key.p8", top: String = "") -> String {
        let offerText = offers ?? #""o1": {"productId": "pro.monthly", "offerIdentifier": "o_1"}"#
        return """
            {\(top)"apps": [{"id": "a", "bundleId": "com.example.app", "environments": ["Sandbox"],
              "signingKey": {"keyId": "KEY1234567", "privateKeyFile": "\(keyFile)"},
              "products": {"pro.monthly": {"subscriptionGroup": "1", "entitlements": ["pro"]}},
              "offers": {\(offerText)}\(app)}]}
            """
    }

    /// Writes the file, loads it in-process, and runs check-config; returns the problems.
    private func problems(_ text: String, file: String = "entitle.json") throws -> [String] {
        let path = folder.appendingPathComponent(file).path
        try writeFile(URL(fileURLWithPath: path), text)
        let cli = try runProcess(entitleExecutable.path, ["check-config", "--config", path])
        do {
            _ = try ConfigurationLoader.load(path: path, environment: [:])
            XCTAssertEqual(cli.status, 0, cli.stderr)
            return []
        } catch {
            XCTAssertEqual(cli.status, 2, "configuration errors exit with 2")
            XCTAssertEqual(cli.stderr.split(separator: "\n").map(String.init), error.problems)
            return error.problems
        }
    }

    private func assertOneProblem(
        _ text: String, contains fragment: String, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let found = try problems(text)
        XCTAssertEqual(found.count, 1, "\(found)", file: file, line: line)
        XCTAssertTrue(found.first?.contains(fragment) == true, "\(found) lacks \(fragment)", file: file, line: line)
    }

    func testValidConfigurationLoads() throws {
        XCTAssertEqual(try problems(config()), [])
        let configuration = try ConfigurationLoader.load(
            path: folder.appendingPathComponent("entitle.json").path,
            environment: ["ENTITLE_PORT": "9999"])
        XCTAssertEqual(configuration.server.port, 9999, "environment overrides the file")
        XCTAssertEqual(configuration.apps.first?.offers["o1"]?.offerIdentifier, "o_1")
        XCTAssertEqual(configuration.apps.first?.offers["o1"]?.eligibility, .any)
    }

    func testMissingFile() throws {
        let result = try runProcess(entitleExecutable.path, ["check-config", "--config", "/nonexistent/entitle.json"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderr, "/nonexistent/entitle.json: no such file\n")
    }

    func testMissingKeyFile() throws {
        try assertOneProblem(config(keyFile: "absent.p8"), contains: "signingKey.privateKeyFile: \(folder.path)/absent.p8: no such file")
    }

    func testUnreadableKey() throws {
        try writeFile(folder.appendingPathComponent("garbage.p8"), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        try assertOneProblem(config(keyFile: "garbage.p8"), contains: "is not a readable PEM private key")
    }

    func testKeyThatIsNotP256() throws {
        try runProcess(
            "openssl",
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384",
                "-out", folder.appendingPathComponent("p384.p8").path,
            ])
        try assertOneProblem(config(keyFile: "p384.p8"), contains: "holds an EC key on curve secp384r1, expected an EC P-256 key")
        try runProcess(
            "openssl",
            [
                "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024",
                "-out", folder.appendingPathComponent("rsa.p8").path,
            ])
        try assertOneProblem(config(keyFile: "rsa.p8"), contains: "holds an RSA key")
    }

    func testUnknownKeys() throws {
        try assertOneProblem(config(top: #""colour": "blue", "#), contains: "config: unknown key \"colour\"")
        try assertOneProblem(config(app: #", "bundleID": "x""#), contains: "apps[0]: unknown key \"bundleID\"")
    }

    func testDuplicateOfferIds() throws {
        let offers =
            #""o1": {"productId": "pro.monthly", "offerIdentifier": "a"}, "o1": {"productId": "pro.monthly", "offerIdentifier": "b"}"#
        try assertOneProblem(config(offers: offers), contains: "apps[0].offers: duplicate offer ID \"o1\"")
    }

    func testOfferForUnconfiguredProduct() throws {
        let offers = #""o1": {"productId": "pro.weekly", "offerIdentifier": "a"}"#
        try assertOneProblem(config(offers: offers), contains: "apps[0].offers.o1.productId: product \"pro.weekly\" is not configured")
    }

    func testAdminKeysAndTheirNames() throws {
        XCTAssertEqual(
            try problems(config(app: #", "apiKeys": [{"key": "admin_key_0123456789", "role": "admin", "name": "Dana"}]"#)), [])
        let long = String(repeating: "n", count: 101)
        try assertOneProblem(
            config(app: #", "apiKeys": [{"key": "admin_key_0123456789", "role": "admin", "name": "\#(long)"}]"#),
            contains: "apps[0].apiKeys[0].name: a name needs 1 to 100 characters")
        try assertOneProblem(
            config(app: #", "apiKeys": [{"key": "admin_key_0123456789", "role": "root"}]"#),
            contains: "unknown role \"root\" (client, server, admin)")
    }

    func testConsoleSettings() throws {
        try writeFile(folder.appendingPathComponent("short.secret"), "too short")
        try assertOneProblem(
            config(top: #""console": {"sessionSecretFile": "short.secret"}, "#), contains: "console.sessionSecretFile: ")
        try assertOneProblem(config(top: #""console": {"sessionHours": 0}, "#), contains: "console.sessionHours")
        try assertOneProblem(config(top: #""console": {"theme": "dark"}, "#), contains: "console: unknown key \"theme\"")
        try writeFile(folder.appendingPathComponent("good.secret"), String(repeating: "s", count: 32))
        let path = folder.appendingPathComponent("entitle.json")
        try writeFile(path, config(top: #""console": {"sessionSecretFile": "good.secret", "sessionHours": 2, "enabled": false}, "#))
        let loaded = try ConfigurationLoader.load(path: path.path, environment: [:])
        XCTAssertEqual(loaded.console.sessionSecret?.count, 32)
        XCTAssertEqual(loaded.console.sessionHours, 2)
        XCTAssertFalse(loaded.console.enabled)
    }

    func testMetricsSettingsAreChecked() throws {
        try writeFile(folder.appendingPathComponent("rates.json"), #"{"reportingCurrency": "USD", "rates": {"EUR": 1.08}}"#)
        try writeFile(folder.appendingPathComponent("bad-rates.json"), #"{"reportingCurrency": "USD", "rates": {"EUR": -1}}"#)
        try assertOneProblem(config(top: #""metrics": {"exchangeRatesFile": "bad-rates.json"}, "#), contains: "metrics.exchangeRatesFile")
        try assertOneProblem(config(top: #""metrics": {"exchangeRatesFile": "absent.json"}, "#), contains: "cannot read")
        try assertOneProblem(
            config().replacingOccurrences(of: #""entitlements": ["pro"]}"#, with: #""entitlements": ["pro"], "period": "P5W"}"#),
            contains: "pro.monthly.period")
        let path = folder.appendingPathComponent("entitle.json")
        try writeFile(
            path,
            config(top: #""metrics": {"exchangeRatesFile": "rates.json"}, "#)
                .replacingOccurrences(of: #""entitlements": ["pro"]}"#, with: #""entitlements": ["pro"], "period": "P1M"}"#))
        let loaded = try ConfigurationLoader.load(path: path.path, environment: [:])
        XCTAssertEqual(loaded.metrics.exchangeRates, ExchangeRates(reportingCurrency: "USD", rates: ["EUR": 1.08]))
        XCTAssertEqual(loaded.metrics.exchangeRates?.rates["USD"], 1)
        XCTAssertTrue(loaded.metrics.enabled, "kept unless turned off")
        XCTAssertEqual(loaded.apps.first?.products["pro.monthly"]?.period, "P1M")
        try assertOneProblem(config(top: #""metrics": {"enabled": "no"}, "#), contains: "metrics.enabled")
        try writeFile(path, config(top: #""metrics": {"enabled": false}, "#))
        XCTAssertFalse(try ConfigurationLoader.load(path: path.path, environment: [:]).metrics.enabled)
    }

    func testGooglePlaySettingsAreChecked() throws {
        let google = try GooglePlayStandIn()
        func play(package: String = "com.example.android", key: String? = nil, jwks: String? = nil) -> String {
            #", "googlePlay": {"packageName": "\#(package)", "serviceAccountKeyFile": "\#(key ?? google.serviceAccountFile.path)", "pubsub": {"audience": "https://e.example.com/v1/notifications/google", "serviceAccountEmail": "push@p.iam.gserviceaccount.com"}, "jwks": "\#(jwks ?? google.jwksFile.path)"}"#
        }
        XCTAssertEqual(try problems(config(app: play())), [])
        try assertOneProblem(config(app: play(package: "example")), contains: "\"example\" is not an Android package name")
        try writeFile(
            folder.appendingPathComponent("ec.json"),
            JSONValue.object([
                "type": "service_account", "client_email": "a@p.iam.gserviceaccount.com",
                "private_key": .string(try String(contentsOf: folder.appendingPathComponent("key.p8"), encoding: .utf8)),
            ]).serializedString)
        try assertOneProblem(
            config(app: play(key: folder.appendingPathComponent("ec.json").path)), contains: "the file's private_key is not usable")
        try assertOneProblem(config(app: play(jwks: "absent.json")), contains: "is not a readable JWK set")
        let missing = try problems(config(app: #", "googlePlay": {"packageName": "com.example.android"}"#))
        XCTAssertEqual(
            missing.map { $0.components(separatedBy: ": ").dropFirst().joined(separator: ": ") },
            [
                #"apps[0].googlePlay: missing "serviceAccountKeyFile""#, #"apps[0].googlePlay: missing "pubsub""#,
                #"apps[0].googlePlay: missing "jwks""#,
            ])
    }

    func testSeveralProblemsAreAllReported() throws {
        let found = try problems(
            config(
                app: #", "appAppleId": "123", "apiKeys": [{"key": "short", "role": "superuser"}]"#,
                keyFile: "absent.p8", top: #""server": {"port": 70000}, "#))
        XCTAssertEqual(found.count, 5, "\(found)")
    }

    func testProductionNeedsAnIntegerAppAppleId() throws {
        let text = config().replacingOccurrences(
            of: #""environments": ["Sandbox"]"#,
            with: #""environments": ["Production"]"#)
        try assertOneProblem(text, contains: "\"appAppleId\" is required when Production is enabled")
    }

    func testWebhookURLsAndSecretsAreChecked() throws {
        let secret = "whsec_" + Data(repeating: 7, count: 32).base64EncodedString()
        try assertOneProblem(
            config(app: #", "webhooks": [{"url": "http://hooks.example.com/x", "secret": "\#(secret)"}]"#), contains: "must be https")
        try assertOneProblem(config(app: #", "webhooks": [{"url": "not a url", "secret": "\#(secret)"}]"#), contains: "not an absolute URL")
        try assertOneProblem(
            config(app: #", "webhooks": [{"url": "https://hooks.example.com/x", "secret": "sk_live_123"}]"#), contains: "whsec_")
        let short = "whsec_" + Data(repeating: 7, count: 8).base64EncodedString()
        let found = try problems(config(app: #", "webhooks": [{"url": "https://hooks.example.com/x", "secret": "\#(short)"}]"#))
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found.first?.contains("24 to 64 bytes") == true, "\(found)")
        XCTAssertFalse(found.first?.contains(String(short.dropFirst(6))) == true, "the secret is never shown")
        try assertOneProblem(
            config(app: #", "webhooks": [{"url": "https://hooks.example.com/x", "secret": "\#(secret)", "events": ["RENEWED"]}]"#),
            contains: "unknown event type")
        try assertOneProblem(
            config(app: #", "forwardNotifications": {"Xcode": "https://old.example.com/apple"}"#), contains: "unknown environment")
        try assertOneProblem(config(top: #""delivery": {"timeoutSeconds": 0}, "#), contains: "delivery.timeoutSeconds")
        let valid = config(
            app:
                #", "webhooks": [{"url": "https://user:pw@hooks.example.com/x?token=abc", "secret": "\#(secret)", "environments": ["Sandbox"]}],"#
                + #" "forwardNotifications": {"Sandbox": "http://localhost:9000/apple"}"#)
        XCTAssertEqual(try problems(valid), [])
        let path = folder.appendingPathComponent("entitle.json").path
        let shown = try runProcess(entitleExecutable.path, ["check-config", "--config", path])
        XCTAssertTrue(shown.stdout.contains("webhook https://hooks.example.com/x: Sandbox; all events; secret set"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("forwards Sandbox notifications to http://localhost:9000/apple"), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("token=abc") || shown.stdout.contains("pw@"), "credentials in a URL are not shown")
        XCTAssertFalse(shown.stdout.contains(String(secret.dropFirst(6))), "nor the secret")
    }

    func testPostgreSQLStorageTakesItsPasswordFromAFileAndNeverShowsIt() throws {
        try writeFile(folder.appendingPathComponent("pg-password"), "s3cr3t-pw\n")
        let text = config(
            top:
                #""storage": {"postgresql": "postgresql://entitle@db.internal:5432/entitle", "passwordFile": "pg-password", "poolSize": 12}, "#
        )
        let path = folder.appendingPathComponent("entitle.json")
        try writeFile(path, text)
        let loaded = try ConfigurationLoader.load(path: path.path, environment: [:])
        XCTAssertEqual(loaded.storage.postgresql?.url, "postgresql://entitle@db.internal:5432/entitle?password=s3cr3t-pw")
        XCTAssertEqual(loaded.storage.postgresql?.poolSize, 12)
        XCTAssertFalse(loaded.storage.summary.contains("s3cr3t"), loaded.storage.summary)
        // check-config connects as serve would: db.internal does not answer here, which is an error
        // that says what was tried, without the password.
        let shown = try runProcess(entitleExecutable.path, ["check-config", "--config", path.path])
        XCTAssertEqual(shown.status, 2, shown.stdout)
        XCTAssertTrue(
            shown.stderr.contains("storage: tried to connect to PostgreSQL postgresql://entitle@db.internal:5432/entitle?password=***"),
            shown.stderr)
        XCTAssertFalse(shown.stdout.contains("s3cr3t") || shown.stderr.contains("s3cr3t"))
        let fromEnvironment = try ConfigurationLoader.load(
            path: path.path, environment: ["ENTITLE_STORAGE_POSTGRESQL": "postgresql://other:pw@h/db"])
        XCTAssertTrue(fromEnvironment.storage.postgresql?.url.hasPrefix("postgresql://other:pw@h/db") == true)
        XCTAssertEqual(PostgreSQLSettings(url: "postgresql://other:pw@h/db").redactedURL, "postgresql://other:***@h/db")
        try assertOneProblem(config(top: #""storage": {"postgresql": "mysql://x"}, "#), contains: "postgresql:// URL")
        try assertOneProblem(config(top: #""storage": {"poolSize": 3}, "#), contains: "need \"postgresql\"")
        try assertOneProblem(
            config(top: #""storage": {"postgresql": "postgresql://h/db", "passwordFile": "missing"}, "#), contains: "cannot read")
    }

    /// check-config said OK to a database serve could not reach; now it tries, and fails saying so.
    func testAnUnreachablePostgreSQLIsAnError() throws {
        let path = folder.appendingPathComponent("entitle.json")
        try writeFile(path, config(top: #""storage": {"postgresql": "postgresql://entitle:hunter2@127.0.0.1:1/entitle"}, "#))
        let result = try runProcess(entitleExecutable.path, ["check-config", "--config", path.path])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("tried to connect to PostgreSQL postgresql://entitle:***@127.0.0.1:1/entitle"), result.stderr)
        XCTAssertTrue(result.stderr.contains("Connection refused"), result.stderr)
        XCTAssertFalse(result.stderr.contains("hunter2"))
        XCTAssertFalse(result.stdout.contains("configuration OK"))
    }

    func testAnAppWithoutAPIKeysIsAWarning() throws {
        let path = folder.appendingPathComponent("entitle.json")
        try writeFile(path, config())
        let result = try runProcess(entitleExecutable.path, ["check-config", "--config", path.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("warning: app a: no API keys: nothing can call its endpoints"), result.stdout)
        try writeFile(path, config(app: #", "apiKeys": [{"key": "server_key_0123456789", "role": "server"}]"#))
        let keyed = try runProcess(entitleExecutable.path, ["check-config", "--config", path.path])
        XCTAssertFalse(keyed.stdout.contains("no API keys"), keyed.stdout)
    }

    /// A file named by an environment variable is reported under the variable's name, which is
    /// where the operator must look (not the configuration member it overrides).
    func testAProblemWithAFileFromAnEnvironmentVariableNamesTheVariable() throws {
        let path = folder.appendingPathComponent("entitle.json")
        try writeFile(path, config())
        XCTAssertThrowsError(
            try ConfigurationLoader.load(path: path.path, environment: ["ENTITLE_APP_A_PRIVATE_KEY_FILE": "/nonexistent/key.p8"])
        ) { error in
            let problems = (error as? ConfigurationError)?.problems ?? []
            XCTAssertEqual(problems.count, 1)
            XCTAssertTrue(
                problems.first?.hasSuffix(": ENTITLE_APP_A_PRIVATE_KEY_FILE: /nonexistent/key.p8: no such file") == true, "\(problems)")
        }
        try writeFile(path, config(top: #""storage": {"postgresql": "postgresql://h/db"}, "#))
        XCTAssertThrowsError(
            try ConfigurationLoader.load(
                path: path.path, environment: ["ENTITLE_STORAGE_POSTGRESQL_PASSWORD_FILE": "/nonexistent/pw"])
        ) { error in
            let problems = (error as? ConfigurationError)?.problems ?? []
            XCTAssertTrue(
                problems.first?.hasSuffix(": ENTITLE_STORAGE_POSTGRESQL_PASSWORD_FILE: cannot read /nonexistent/pw") == true, "\(problems)")
        }
    }

    func testExampleConfigurationIsValid() throws {
        let path = packageRoot.appendingPathComponent("Keys.example/entitle.json").path
        let result = try runProcess(entitleExecutable.path, ["check-config", "--config", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("configuration OK"))
    }
}
