import Crypto
import Foundation
import TestSupport
import XCTest

@testable import Application

/// The top-level sections declared with `ConfigurationSection` (storage, metrics, rate limits),
/// parsed in-process: values in place, problems at their member's path (a nested one's too),
/// file members given through the environment resolved against the configuration's folder.
final class DeclaredSectionsTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory("entitle-sections")
        try writeFile(folder.appendingPathComponent("key.p8"), try P256.Signing.PrivateKey().pemRepresentation)
    }

    private func load(_ top: String, environment: [String: String] = [:]) -> Result<EntitleConfiguration, ConfigurationError> {
        let text = """
            {\(top)
             "apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
               "signingKey": {"keyId": "KEY1", "privateKeyFile": "key.p8"},
               "apiKeys": [{"key": "server_key_0123456789", "role": "server"}]}]}
            """
        let path = folder.appendingPathComponent("entitle.json").path
        return Result { () throws(ConfigurationError) in
            try ConfigurationLoader.load(text: Array(text.utf8), path: path, environment: environment)
        }
    }

    /// The problems, without the configuration file's path each starts with.
    private func problems(_ top: String, environment: [String: String] = [:]) -> [String] {
        guard case .failure(let error) = load(top, environment: environment) else { return [] }
        let prefix = folder.appendingPathComponent("entitle.json").path + ": "
        return error.problems.map { $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0 }
    }

    func testRateLimitsAreReadAndANestedProblemNamesItsMember() throws {
        let limits = try load(#""rateLimits": {"enabled": false, "admin": {"perSecond": 7.5, "burst": 9}},"#).get().rateLimits
        XCTAssertFalse(limits.enabled)
        XCTAssertEqual(limits.admin, RateLimit(perSecond: 7.5, burst: 9))
        XCTAssertEqual(limits.client, RateLimitSettings().client, "the others keep their defaults")
        XCTAssertEqual(
            problems(#""rateLimits": {"client": {"perSecond": 0, "burst": 2}},"#),
            ["rateLimits.client.perSecond: expected a number more than 0 and at most 1000000"])
        XCTAssertEqual(
            problems(#""rateLimits": {"server": {"perSecond": 5}},"#),
            ["rateLimits.server: expected {\"perSecond\": a number above 0, \"burst\": at least 1}"])
        XCTAssertEqual(problems(#""rateLimits": {"client": {"rate": 5, "perSecond": 1, "burst": 1}},"#).count, 1, "unknown member")
    }

    func testStorageFromTheFileAndTheEnvironment() throws {
        let sqlite = try load(#""storage": {"sqlite": "data/e.sqlite3"},"#).get().storage
        XCTAssertEqual(sqlite.sqlitePath, folder.appendingPathComponent("data/e.sqlite3").path)
        XCTAssertNil(sqlite.postgresql)
        try writeFile(folder.appendingPathComponent("pg-password"), "s3cret\n")
        let postgres = try load(
            #""storage": {"postgresql": "postgresql://entitle@db.internal/entitle", "poolSize": 3},"#,
            environment: ["ENTITLE_STORAGE_POSTGRESQL_PASSWORD_FILE": "pg-password"]
        ).get().storage.postgresql
        XCTAssertEqual(postgres?.url, "postgresql://entitle@db.internal/entitle?password=s3cret", "resolved beside the configuration")
        XCTAssertEqual(postgres?.poolSize, 3)
        XCTAssertEqual(
            try load("", environment: ["ENTITLE_STORAGE_POSTGRESQL": "postgresql://h/db"]).get().storage.postgresql?.url,
            "postgresql://h/db")
        XCTAssertEqual(problems(#""storage": {"postgresql": "mysql://h/db"},"#), ["storage.postgresql: expected a postgresql:// URL"])
        XCTAssertEqual(problems(#""storage": {"poolSize": 2},"#), ["storage: \"passwordFile\" and \"poolSize\" need \"postgresql\""])
    }

    func testMetricsReadTheRatesFile() throws {
        try writeFile(folder.appendingPathComponent("rates.json"), #"{"reportingCurrency": "USD", "rates": {"EUR": 1.25}}"#)
        let metrics = try load(#""metrics": {"enabled": false, "exchangeRatesFile": "rates.json"},"#).get().metrics
        XCTAssertFalse(metrics.enabled)
        XCTAssertEqual(metrics.exchangeRates?.rates["EUR"], 1.25)
        try writeFile(folder.appendingPathComponent("bad.json"), #"{"reportingCurrency": "USD", "rates": {"EUR": 0}}"#)
        XCTAssertEqual(
            problems(#""metrics": {"exchangeRatesFile": "bad.json"},"#).first?.hasPrefix("metrics.exchangeRatesFile: EUR:"), true)
    }
}
