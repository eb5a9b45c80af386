import Entitlements
import Foundation
import JSON
import TestSupport
import XCTest

/// `GET /v1/metrics/summary` and `GET /v1/metrics/{name}` over a real connection, from signed
/// transactions the app posted: the figures of docs/METRICS.md per environment (a Sandbox
/// customer never counts in Production), as JSON and CSV, and the refusals.
final class MetricsEndpointTests: XCTestCase {
    private var fixture: SupportFixture!
    private let day: Int64 = 86_400_000

    private var rates: URL!

    override func setUpWithError() throws {
        rates = try makeTemporaryDirectory("entitle-rates")
        try writeFile(rates.appendingPathComponent("rates.json"), #"{"reportingCurrency": "USD", "rates": {"EUR": 1.25}}"#)
        fixture = try SupportFixture(
            top: #", "metrics": {"exchangeRatesFile": "\#(rates.appendingPathComponent("rates.json").path)"}"#,
            environments: #"["Production", "Sandbox"]"#)
    }

    override func tearDownWithError() throws {
        fixture = nil
        try? FileManager.default.removeItem(at: rates)
    }

    /// Day 0 of the script: forty days before the facts are signed, so every period is in the past.
    private var origin: Int64 { fixture.base - 40 * day }

    /// One transaction of subscription `original`, `[from, to)` days after `origin`.
    private func post(
        _ id: String, original: String, from: Int64, to: Int64, price: Int64, currency: String, trial: Bool = false,
        environment: String = "Production"
    ) throws {
        var payload: JSONObject = [
            "transactionId": .string(id), "originalTransactionId": .string(original), "bundleId": "com.example.app",
            "productId": "pro.monthly", "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription",
            "purchaseDate": .int(origin + from * day), "expiresDate": .int(origin + to * day),
            "inAppOwnershipType": "PURCHASED", "environment": .string(environment), "signedDate": .int(fixture.base + 1),
            "price": .int(price), "currency": .string(currency),
        ]
        if trial {
            payload["offerType"] = 1
            payload["offerDiscountType"] = "FREE_TRIAL"
        }
        let posted = try fixture.call(
            "POST", "/v1/transactions", key: SupportFixture.server, body: ["signedTransaction": .string(try fixture.chain.sign(payload))])
        XCTAssertEqual(posted.status, 200, posted.text)
    }

    private func seed() throws {
        // Production: a trial (days 0–7) converted to a paid month (7–37, 9.99 USD); a month in
        // euros (2–32, 4.99 EUR). Sandbox: a month that must not count (5.00 USD).
        try post("m1", original: "m1", from: 0, to: 7, price: 0, currency: "USD", trial: true)
        try post("m2", original: "m1", from: 7, to: 37, price: 9990, currency: "USD")
        try post("e1", original: "e1", from: 2, to: 32, price: 4990, currency: "EUR")
        try post("s1", original: "s1", from: 1, to: 31, price: 5000, currency: "USD", environment: "Sandbox")
    }

    func testTheSummaryCountsProductionOnly() throws {
        try seed()
        let at = origin + 10 * day
        let summary = try fixture.call("GET", "/v1/metrics/summary?at=\(at)", key: SupportFixture.server)
        XCTAssertEqual(summary.status, 200, summary.text)
        XCTAssertEqual(summary.json["summary"]?["environment"], "Production")
        XCTAssertEqual(summary.json["summary"]?["activeSubscriptions"], 2, summary.text)
        XCTAssertEqual(summary.json["summary"]?["activeTrials"], 0)
        XCTAssertEqual(summary.json["summary"]?["mrr"], .object(["EUR": .double(4.99), "USD": .double(9.99)]))
        XCTAssertEqual(summary.json["summary"]?["arr"], .object(["EUR": .double(59.88), "USD": .double(119.88)]))
        // Converted with metrics.exchangeRatesFile: 9.99 + 4.99 × 1.25 = 16.2275 → 16.23 USD.
        XCTAssertEqual(summary.json["summary"]?["mrrConverted"], .object(["currency": "USD", "value": .double(16.23)]))
        XCTAssertEqual(summary.json["summary"]?["arrConverted"], .object(["currency": "USD", "value": .double(194.73)]))
        let trial = try fixture.call("GET", "/v1/metrics/summary?at=\(origin + 3 * day)", key: SupportFixture.admin)
        XCTAssertEqual(trial.json["summary"]?["activeTrials"], 1)
        XCTAssertEqual(trial.json["summary"]?["activeSubscriptions"], 1, "the euro month")
        let sandbox = try fixture.call("GET", "/v1/metrics/summary?at=\(at)&environment=Sandbox", key: SupportFixture.server)
        XCTAssertEqual(sandbox.json["summary"]?["activeSubscriptions"], 1)
        XCTAssertEqual(sandbox.json["summary"]?["mrr"], .object(["USD": .double(5)]))
    }

    func testASeriesAsJSONAndCSV() throws {
        try seed()
        // Day buckets from the origin's UTC day, ten days: revenue on the days the months began.
        let from = origin - origin % day
        let revenue = try fixture.call(
            "GET", "/v1/metrics/revenue?from=\(from)&to=\(from + 10 * day)&interval=day", key: SupportFixture.server)
        XCTAssertEqual(revenue.status, 200, revenue.text)
        let buckets = revenue.json["buckets"]?.arrayValue ?? []
        XCTAssertEqual(buckets.count, 10)
        XCTAssertEqual(buckets[2]["value"], .object(["EUR": .double(4.99)]))
        XCTAssertEqual(buckets[7]["value"], .object(["USD": .double(9.99)]))
        XCTAssertEqual(buckets[0]["value"], .object([:]), "the trial's zero price adds no currency")
        XCTAssertEqual(buckets[3]["value"], .object([:]))
        let conversions = try fixture.call(
            "GET", "/v1/metrics/trial-conversions?from=\(from)&to=\(from + 14 * day)&interval=week", key: SupportFixture.server)
        let weekly = conversions.json["buckets"]?.arrayValue ?? []
        XCTAssertEqual(weekly.compactMap { $0["value"]?.int64Value }.reduce(0, +), Int64(1), conversions.text)

        let csv = try fixture.call(
            "GET", "/v1/metrics/revenue?from=\(from)&to=\(from + 10 * day)&format=csv", key: SupportFixture.server)
        XCTAssertEqual(csv.status, 200)
        XCTAssertEqual(csv.headers["content-type"], "text/csv; charset=utf-8")
        let rows = csv.text.split(separator: "\r\n").map(String.init)
        XCTAssertEqual(rows.first, "start,currency,value")
        XCTAssert(rows.contains { $0.hasSuffix(",EUR,4.990") }, csv.text)
        XCTAssert(rows.contains { $0.hasSuffix(",USD,9.990") }, csv.text)
        let accepted = try fixture.call(
            "GET", "/v1/metrics/active-subscriptions?from=\(from)&to=\(from + 3 * day)", key: SupportFixture.server,
            headers: ["Accept: text/csv"])
        // Stocks at each bucket's end: the euro month (from day 2) is the first paid period.
        XCTAssertEqual(
            accepted.text, "start,value\r\n\(iso(from)),0\r\n\(iso(from + day)),0\r\n\(iso(from + 2 * day)),1\r\n", accepted.text)
    }

    /// Revenue is every paid purchase: a 9.99 month and a 1.99 one-time product bought the same day
    /// made 9.99 (one-time purchases added nothing). Now 11.98; a prorated refund of half of it
    /// takes back 0.995 (rounded to the milliunit), and the refund rate counts it.
    func testRevenueCountsOneTimePurchases() throws {
        try post("m1", original: "m1", from: 7, to: 37, price: 9990, currency: "USD")
        func oneTime(_ id: String, product: String, type: String, refunded: Bool) throws {
            var payload: JSONObject = [
                "transactionId": .string(id), "originalTransactionId": .string(id), "bundleId": "com.example.app",
                "productId": .string(product), "type": .string(type), "purchaseDate": .int(origin + 7 * day + 60_000),
                "inAppOwnershipType": "PURCHASED", "environment": "Production", "signedDate": .int(fixture.base + 1), "price": 1990,
                "currency": "USD", "quantity": 1,
            ]
            if refunded {
                payload["revocationDate"] = .int(origin + 8 * day)
                payload["revocationReason"] = 0
                payload["revocationType"] = "REFUND_PRORATED"
                payload["revocationPercentage"] = 50_000
                payload["signedDate"] = .int(fixture.base + 2)
            }
            let posted = try fixture.call(
                "POST", "/v1/transactions", key: SupportFixture.server,
                body: ["signedTransaction": .string(try fixture.chain.sign(payload))])
            XCTAssertEqual(posted.status, 200, posted.text)
        }
        try oneTime("c1", product: "extras", type: "Non-Consumable", refunded: false)
        let from = origin - origin % day
        func revenue(_ product: String? = nil) throws -> [JSONValue] {
            let filter = product.map { "&productId=\($0)" } ?? ""
            let answer = try fixture.call(
                "GET", "/v1/metrics/revenue?from=\(from + 7 * day)&to=\(from + 9 * day)&interval=day\(filter)", key: SupportFixture.server)
            XCTAssertEqual(answer.status, 200, answer.text)
            return answer.json["buckets"]?.arrayValue ?? []
        }
        XCTAssertEqual(try revenue().first?["value"], .object(["USD": .double(11.98)]), "the month and the one-time product")
        XCTAssertEqual(try revenue("extras").first?["value"], .object(["USD": .double(1.99)]), "a product filter for one-time products")
        try oneTime("c1", product: "extras", type: "Non-Consumable", refunded: true)
        let buckets = try revenue()
        XCTAssertEqual(buckets.count, 2)
        XCTAssertEqual(buckets.first?["value"], .object(["USD": .double(11.98)]))
        XCTAssertEqual(buckets.last?["value"], .object(["USD": .double(-0.995)]), "half of 1.99 given back, on the refund's day")
        let refunds = try fixture.call(
            "GET", "/v1/metrics/refunds?from=\(from + 7 * day)&to=\(from + 9 * day)&interval=day&productId=extras",
            key: SupportFixture.server)
        XCTAssertEqual(refunds.json["buckets"]?.arrayValue?.last?["value"], 1, refunds.text)
        XCTAssertEqual(refunds.json["buckets"]?.arrayValue?.last?["amounts"], .object(["USD": .double(0.995)]))
    }

    private func iso(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// `entitle metrics rebuild`, run beside the server on its database, computes the day sums
    /// again from the facts: sums spoiled behind the server's back are mended, and every figure
    /// is what the writer had kept.
    func testARebuildGivesTheFiguresTheWriterKept() throws {
        try seed()
        let from = origin - origin % day
        func figures() throws -> [String] {
            try MetricName.allCases.map { name in
                let answer = try fixture.call(
                    "GET", "/v1/metrics/\(name.rawValue)?from=\(from)&to=\(from + 45 * day)&interval=day", key: SupportFixture.server)
                XCTAssertEqual(answer.status, 200, answer.text)
                return "\(name.rawValue) \(answer.json["buckets"] ?? .null)"
            } + [
                "\(try fixture.call("GET", "/v1/metrics/summary?at=\(origin + 20 * day)", key: SupportFixture.server).json["summary"]?["mrr"] ?? .null)"
            ]
        }
        let kept = try figures()
        let database = fixture.folder.appendingPathComponent("facts.sqlite3").path
        let spoiled = try runProcess("sqlite3", ["-cmd", ".timeout 5000", database, "UPDATE metric_days SET value = value + 7"])
        XCTAssertEqual(spoiled.status, 0, spoiled.stderr)
        XCTAssertNotEqual(try figures(), kept, "the spoiled sums show")
        let rebuild = try runProcess(
            entitleExecutable.path, ["metrics", "rebuild", "--config", fixture.folder.appendingPathComponent("entitle.json").path])
        XCTAssertEqual(rebuild.status, 0, rebuild.stderr)
        XCTAssertTrue(rebuild.stdout.contains("app Production: the figures computed again from 2 subscriptions"), rebuild.stdout)
        XCTAssertTrue(rebuild.stdout.contains("app Sandbox: the figures computed again from 1 subscription"), rebuild.stdout)
        XCTAssertEqual(try figures(), kept)
    }

    /// `metrics.enabled: false`: the writer keeps no figures, and the API says they are off.
    func testFiguresTurnedOffAreNeitherKeptNorAnswered() throws {
        fixture = try SupportFixture(top: #", "metrics": {"enabled": false}"#, environments: #"["Production", "Sandbox"]"#)
        try post("m1", original: "m1", from: 7, to: 37, price: 9990, currency: "USD")
        let summary = try fixture.call("GET", "/v1/metrics/summary", key: SupportFixture.server)
        XCTAssertEqual(summary.status, 404, summary.text)
        XCTAssertEqual(summary.json["error"]?["code"], "NOT_FOUND")
        XCTAssertTrue(summary.json["error"]?["message"]?.stringValue?.contains("metrics.enabled") ?? false, summary.text)
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/mrr", key: SupportFixture.server).status, 404)
        let database = fixture.folder.appendingPathComponent("facts.sqlite3").path
        let kept = try runProcess(
            "sqlite3", ["-cmd", ".timeout 5000", database, "SELECT count(*) FROM metric_moments; SELECT count(*) FROM transactions;"])
        XCTAssertEqual(kept.stdout, "0\n1\n", kept.stderr)
    }

    func testRefusals() throws {
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/summary", key: SupportFixture.client).status, 403)
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/summary", key: nil).status, 401)
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/lifetime-value", key: SupportFixture.server).status, 404)
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/mrr?interval=hour", key: SupportFixture.server).status, 400)
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/mrr?from=2026-02-01&to=2026-01-01", key: SupportFixture.server).status, 400)
        XCTAssertEqual(
            try fixture.call("GET", "/v1/metrics/mrr?from=1900-01-01T00:00:00Z&interval=day", key: SupportFixture.server).status, 400,
            "over a thousand buckets")
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/summary?environment=Xcode", key: SupportFixture.server).status, 400)
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/summary?at=yesterday", key: SupportFixture.server).status, 400)
        XCTAssertEqual(try fixture.call("GET", "/v1/metrics/mrr?from=2026-02-30&to=2026-03-02", key: SupportFixture.server).status, 400)
    }

    /// A range is written in days as often as in instants: a day is its midnight, UTC.
    func testARangeInDays() throws {
        let answer = try fixture.call("GET", "/v1/metrics/revenue?from=2026-11-01&to=2026-12-01&interval=week", key: SupportFixture.server)
        XCTAssertEqual(answer.status, 200, answer.text)
        XCTAssertEqual(answer.json["from"], "2026-11-01T00:00:00.000Z")
        XCTAssertEqual(
            answer.json["buckets"]?.arrayValue?.first?["start"], "2026-10-26T00:00:00.000Z", "the ISO week that holds November 1st")
        XCTAssertEqual(answer.json["buckets"]?.arrayValue?.count, 6)
    }
}
