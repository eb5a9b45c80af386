import AppStore
import Application
import Entitlements
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

@testable import Storage

#if canImport(Glibc)
import Glibc
#endif

/// What an operator sees: log lines, levels and error answers, start-up warnings, readiness and
/// SIGHUP, and the command line's help.
final class OperationsTests: XCTestCase {
    private var folder: URL!
    private var exampleConfiguration = ""

    override func setUpWithError() throws {
        folder = try makeTemporaryDirectory()
        exampleConfiguration = try copyExampleConfiguration(to: folder)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    /// The example configuration on port 0, with `replacements` applied to its text.
    private func writeConfig(_ replacements: [(String, String)] = []) throws -> String {
        var text = exampleConfiguration
        for (old, new) in replacements { text = text.replacingOccurrences(of: old, with: new) }
        let path = folder.appendingPathComponent("entitle.json").path
        try writeFile(URL(fileURLWithPath: path), text)
        return path
    }

    /// Starts `executable` (an `entitle serve`, perhaps through a shell) with its log lines readable.
    private func serve(_ executable: URL, _ arguments: [String]) throws -> (Process, LineReader) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, LineReader(output.fileHandleForReading))
    }

    private func stop(_ process: Process) {
        process.terminate()
        process.waitUntilExit()
    }

    // MARK: - Logs and the error path

    func testErrorLinesCarryCodeReasonAppAndRouteAtTheirLevel() throws {
        let configuration = try ConfigurationLoader.load(
            path: try writeConfig([
                (
                    #""environments": ["Production", "Sandbox"]"#,
                    #""environments": ["Production", "Xcode"]"#
                )
            ]),
            environment: [:])
        let logged = try LoggedServer(configuration, store: try makeTemporaryStore())
        defer { logged.stop() }
        let (server, reader) = (logged.server, logged.reader)
        var lines: [JSONValue] = []
        func next(_ message: String) throws -> JSONValue {
            while let line = reader.nextLine() {
                let parsed = try JSONParser.parse(line)
                lines.append(parsed)
                if parsed["msg"]?.stringValue == message { return parsed }
            }
            struct MissingLine: Error, CustomStringConvertible { let description: String }
            throw MissingLine(description: "no \(message) line; saw \(lines)")
        }
        _ = try next("listening")
        let client = try TestHTTPClient(port: server.port)
        try client.send(
            rawRequest(
                "POST", "/v1/promotional-offers/sign", headers: ["Content-Type: application/json"],
                body: #"{"productId":"pro.monthly","offerId":"welcome20"}"#))
        XCTAssertEqual(try client.readResponse().status, 401)
        let unauthorized = try next("request")
        XCTAssertEqual(unauthorized["level"], "warn")
        XCTAssertEqual(unauthorized["code"], "UNAUTHORIZED")
        XCTAssertEqual(unauthorized["route"], "/v1/promotional-offers/sign")
        XCTAssertNotNil(unauthorized["reason"]?.stringValue)

        try client.send(
            rawRequest(
                "POST", "/v1/promotional-offers/sign",
                headers: ["Authorization: Bearer client_example_not_secret_0001", "Content-Type: application/json"],
                body: #"{"productId":"pro.yearly","offerId":"welcome20"}"#))
        XCTAssertEqual(try client.readResponse().status, 422)
        let unavailable = try next("request")
        XCTAssertEqual(unavailable["level"], "info")
        XCTAssertEqual(unavailable["code"], "OFFER_UNAVAILABLE")
        XCTAssertEqual(unavailable["app"], "example")
        XCTAssertEqual(unavailable["reasonCode"], "NOT_IN_CATALOG", "the machine-readable why, to filter logs by")

        try client.send(rawRequest("GET", "/v1/no-such-thing?x=1"))
        XCTAssertEqual(try client.readResponse().status, 404)
        let notFound = try next("request")
        XCTAssertEqual(notFound["route"], "unmatched")
        XCTAssertEqual(notFound["path"], "/v1/no-such-thing", "404 lines say what was asked for, without the query")

        // No key material anywhere in what was logged.
        for line in lines { XCTAssertFalse(line.serializedString.contains("not_secret"), line.serializedString) }
        // Start-up said that unsigned data is accepted beside Production.
        XCTAssertTrue(lines.contains { $0["level"] == "warn" && $0["msg"]?.stringValue?.contains("Xcode") == true }, "\(lines)")
    }

    /// A stored row whose JSON no longer parses was left out of every read in silence: a pending
    /// refund request among them was never answered inside Apple's window, and nobody knew. Now
    /// it is counted once, shown on `/readyz` (still ready) and in the overview, with its deadline.
    func testAnUnreadableRowIsReportedAndAPendingRefundRequestKeepsItsDeadline() throws {
        let configuration = try ConfigurationLoader.load(path: try writeConfig(), environment: [:])
        let path = folder.appendingPathComponent("unreadable.sqlite3").path
        let store = try SQLiteFactStore(path: path)
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        var batch = FactBatch(appId: "example", environment: "Sandbox")
        let requestedAt: Int64 = 1_796_400_000_000
        batch.refundRequest = RefundRequest(
            id: "n-corrupt", store: "app_store", environment: "Sandbox", appAccountToken: token, transactionId: "1",
            originalTransactionId: "1", reason: "LEGAL", requestedAt: requestedAt, deadline: requestedAt + RefundRequest.appleWindow)
        batch.usage = [
            UsageRecord(
                id: "u-corrupt", appAccountToken: token, transactionId: "1", purchaseToken: nil, consumedPercent: 10, delivered: true,
                undeliveredReason: nil, events: [], recordedAt: requestedAt, recordedBy: "server")
        ]
        XCTAssertEqual(try store.apply(batch), .applied)
        XCTAssertEqual(try store.dueRefundRequests(appId: "example", now: .max, limit: 10).map(\.id), ["n-corrupt"])
        let raw = try SQLiteDatabase(path: path)
        try raw.execute("UPDATE refund_requests SET body = '{not json'; UPDATE usage_records SET body = '[]'")
        let server = try EntitleServer(configuration: configuration, logOutput: nil, store: store)
        XCTAssertEqual(try store.dueRefundRequests(appId: "example", now: .max, limit: 10), [], "it cannot be answered")
        XCTAssertEqual(try store.dueRefundRequests(appId: "example", now: .max, limit: 10), [], "read again")
        XCTAssertEqual(try store.usage(appId: "example", appAccountToken: token), [])

        let ready = server.handle(HTTPRequest(method: "GET", target: "/readyz"))
        XCTAssertEqual(ready.status, 200, "a warning: another instance would read the rows no better")
        let stored = try XCTUnwrap(try JSONParser.parse(ready.body)["checks"]?["storedRows"])
        XCTAssertEqual(stored["warning"], "2 stored rows could not be read and are left out of every answer")
        let rows = try XCTUnwrap(stored["rows"]?.arrayValue)
        XCTAssertEqual(rows.map { $0["table"] }, ["refund_requests", "usage_records"])
        XCTAssertEqual(rows.map { $0["key"] }, ["n-corrupt", "u-corrupt"])
        XCTAssertEqual(rows[0]["deadlineMs"], .int(requestedAt + RefundRequest.appleWindow), "still due, and by when")
        XCTAssertNil(rows[1]["deadline"])

        let metrics = String(decoding: server.handle(HTTPRequest(method: "GET", target: "/metrics")).body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("entitle_storage_unreadable_rows_total{table=\"refund_requests\"} 1\n"), metrics)
        XCTAssertTrue(metrics.contains("entitle_storage_unreadable_rows_total{table=\"usage_records\"} 1\n"), "counted once each")

        let overview = server.handle(
            HTTPRequest(method: "GET", target: "/v1/stats", headers: [("authorization", "Bearer admin_example_not_secret_0001")]))
        XCTAssertEqual(overview.status, 200)
        let shown = try XCTUnwrap(try JSONParser.parse(overview.body)["stats"]?["unreadableRows"]?.arrayValue)
        XCTAssertEqual(shown.map { $0["key"] }, ["n-corrupt", "u-corrupt"])
    }

    /// A store failure is 503 and retryable; an error nobody anticipated is 500 `INTERNAL` with
    /// the request id to quote, not a silent "try again".
    func testUnknownErrorsAre500WithTheRequestIdAndStorageErrors503() throws {
        let configuration = try ConfigurationLoader.load(path: try writeConfig(), environment: [:])
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let request = HTTPRequest(
            method: "GET", target: "/v1/subscribers/\(token)",
            headers: [("authorization", "Bearer client_example_not_secret_0001")])

        let broken = try EntitleServer(configuration: configuration, logOutput: nil, store: FailingStore(error: Unexpected()))
        let unforeseen = broken.handle(request)
        XCTAssertEqual(unforeseen.status, 500)
        let body = try JSONParser.parse(unforeseen.body)
        XCTAssertEqual(body["error"]?["code"], "INTERNAL")
        XCTAssertEqual(body["error"]?["requestId"], "test")
        XCTAssertFalse(String(decoding: unforeseen.body, as: UTF8.self).contains("secret detail"), "the description stays in the log")
        XCTAssertTrue(unforeseen.logAnnotations.contains { $0.key == "reason" && $0.value.contains("secret detail") })

        let unavailable = try EntitleServer(
            configuration: configuration, logOutput: nil,
            store: FailingStore(error: StorageError(code: 10, message: "disk I/O error")))
        let answer = unavailable.handle(request)
        XCTAssertEqual(answer.status, 503)
        XCTAssertEqual(try JSONParser.parse(answer.body)["error"]?["code"], "STORAGE_UNAVAILABLE")
        XCTAssertNotNil(answer.header("Retry-After"))
        XCTAssertFalse(String(decoding: answer.body, as: UTF8.self).contains("disk I/O"))
    }

    // MARK: - Readiness and SIGHUP

    func testReadinessTellsTheTruthAndSIGHUPReloadsRoots() throws {
        let chain = try TestChain()
        let path = try writeConfig([
            // No root yet (the example's own chain is not trusted here): roots arrive in apple-roots/.
            (
                #""verification": {"rootCertificates": ["example-chain/root.pem"], "allowPrivateRoots": true}"#,
                #""verification": {"allowPrivateRoots": true}"#
            )
        ])
        let (process, reader) = try serve(entitleExecutable, ["serve", "--config", path])
        defer { stop(process) }
        let port = Int(try XCTUnwrap(try JSONParser.parse(try XCTUnwrap(reader.nextLine()))["port"]?.int64Value))
        func readiness() throws -> (Int, JSONValue) {
            let client = try TestHTTPClient(port: port)
            try client.send(rawRequest("GET", "/readyz"))
            let response = try client.readResponse()
            return (response.status, try JSONParser.parse(response.body))
        }
        let (before, checks) = try readiness()
        XCTAssertEqual(before, 503, "no trusted root: notifications would all be answered 503")
        XCTAssertTrue(checks["checks"]?["rootCertificates"]?["example"]?.stringValue?.contains("SIGHUP") == true, "\(checks)")

        // SIGHUP before any root exists says so; the failing probes were not error lines.
        kill(process.processIdentifier, SIGHUP)
        var lines: [JSONValue] = []
        while !lines.contains(where: { $0["msg"] == "no root certificates found on reload" }), let line = reader.nextLine() {
            lines.append(try JSONParser.parse(line))
        }
        let reload = lines.first { $0["msg"] == "no root certificates found on reload" }
        XCTAssertEqual(reload?["app"], "example", "\(lines)")
        XCTAssertEqual(reload?["level"], "warn")
        XCTAssertFalse(lines.contains { $0["msg"] == "roots reloaded" }, "nothing was reloaded")
        let probes = lines.filter { $0["route"] == "/readyz" }
        XCTAssertFalse(probes.isEmpty, "\(lines)")
        XCTAssertTrue(probes.allSatisfy { $0["status"] == .int(503) && $0["level"] == "info" }, "\(probes)")

        let roots = folder.appendingPathComponent("apple-roots")
        try FileManager.default.createDirectory(at: roots, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: chain.folder.appendingPathComponent("root.pem"), to: roots.appendingPathComponent("root.pem"))
        kill(process.processIdentifier, SIGHUP)
        var after = 0
        for _ in 0..<50 where after != 200 {
            Thread.sleep(forTimeInterval: 0.1)
            after = try readiness().0
        }
        XCTAssertEqual(after, 200, "roots added to apple-roots/ are trusted after SIGHUP")
        XCTAssertEqual(try readiness().1["checks"]?["rootCertificates"]?["example"], "private root")
    }

    /// A purchase whose acknowledgement Google keeps refusing is not forgotten: a day after it was
    /// stored it is an `error` line, the gauge, and a warning on `/readyz` (still ready).
    func testAPurchaseUnacknowledgedForADayIsAnErrorAGaugeAndAReadinessWarning() throws {
        let google = try GooglePlayStandIn(packageName: "com.example.android")
        google.refuseAcknowledgements(1_000)
        let path = try writeConfig([
            (
                #""billingRetryGrantsAccess": false"#,
                """
                "billingRetryGrantsAccess": false,
                "googlePlay": {"packageName": "com.example.android", "serviceAccountKeyFile": "\(google.serviceAccountFile.path)",
                  "pubsub": {"audience": "https://entitle.example.com/v1/notifications/google",
                             "serviceAccountEmail": "push@example-project.iam.gserviceaccount.com"},
                  "jwks": "\(google.jwksFile.path)", "apiURL": "\(google.baseURL)", "tokenURL": "\(google.tokenURL)",
                  "acknowledgementRetrySeconds": 0.2}
                """
            )
        ])
        let store = try makeTemporaryStore()
        let stored = Date().addingTimeInterval(-25 * 3600)
        var batch = FactBatch(appId: "example", environment: "Production")
        batch.playPurchases = [
            (
                PlayPurchase(
                    purchaseToken: "late-1", kind: .subscription, productId: "pro", basePlanId: "monthly", offerId: nil,
                    environment: "Production", googleState: "SUBSCRIPTION_STATE_ACTIVE", startTime: 0, expiryTime: nil, autoRenewing: true,
                    linkedPurchaseToken: nil, acknowledged: false, appAccountToken: nil, orderId: nil, voidedAt: nil,
                    readAt: Int64(stored.timeIntervalSince1970 * 1000)),
                "{}"
            )
        ]
        batch.requestedAt = Int64(stored.timeIntervalSince1970 * 1000)
        XCTAssertEqual(try store.apply(batch), .applied)
        let logged = try LoggedServer(try ConfigurationLoader.load(path: path, environment: [:]), store: store)
        defer { logged.stop() }
        func metrics() -> String {
            String(decoding: logged.server.handle(HTTPRequest(method: "GET", target: "/metrics", headers: [])).body, as: UTF8.self)
        }
        try waitUntil(timeout: 10, "the gauge shows the purchase") {
            metrics().contains(#"entitle_google_unacknowledged_purchases{app="example"} 1"#)
        }
        // Measured first, then logged: the line is there to read.
        var alarm: JSONValue?
        while alarm == nil, let line = logged.reader.nextLine() {
            let parsed = try JSONParser.parse(line)
            if parsed["msg"]?.stringValue?.contains("unacknowledged for more than a day") == true { alarm = parsed }
        }
        XCTAssertEqual(alarm?["level"], "error")
        XCTAssertEqual(alarm?["purchases"], 1)
        XCTAssertFalse(google.requests.filter { $0.hasSuffix(":acknowledge") }.isEmpty, "Google was asked again and again")
        let readiness = try JSONParser.parse(logged.server.handle(HTTPRequest(method: "GET", target: "/readyz", headers: [])).body)
        XCTAssertEqual(readiness["status"], "ready", "\(readiness)")
        XCTAssertTrue(readiness["checks"]?["googleAcknowledgements"]?["example"]?.stringValue?.hasPrefix("warning: 1 purchases") == true)
    }

    /// The deliverers' store calls failed silently (`try?`): now each failure is a `warn` line with
    /// its task and code, and a count in `entitle_background_errors_total`.
    func testBackgroundFailuresAreLoggedAndCounted() throws {
        let path = try writeConfig([
            (
                #""billingRetryGrantsAccess": false"#,
                #""billingRetryGrantsAccess": false, "webhooks": [{"url": "https://hooks.example/entitle", "secret": "whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="}]"#
            )
        ])
        let logged = try LoggedServer(
            try ConfigurationLoader.load(path: path, environment: [:]),
            store: FailingStore(error: StorageError(code: 10, message: "disk I/O error")))
        defer { logged.stop() }
        func metrics() -> String {
            String(decoding: logged.server.handle(HTTPRequest(method: "GET", target: "/metrics", headers: [])).body, as: UTF8.self)
        }
        let counted = ["startup", "deliveries"].map {
            #"entitle_background_errors_total{app="example",task="\#($0)",code="STORAGE_UNAVAILABLE"}"#
        }
        // The log is read while the failures happen: the logger drops lines when its output stalls
        // (a pipe nobody reads), so polling the metrics first, each poll an access line, could
        // have filled the pipe and lost the very lines this test looks for.
        var tasks: Set<String> = []
        var failures: [JSONValue] = []
        let deadline = Date().addingTimeInterval(10)
        while tasks != ["startup", "deliveries"], let line = logged.reader.nextLine(timeout: deadline.timeIntervalSinceNow) {
            let parsed = try JSONParser.parse(line)
            guard parsed["msg"] == "background task failed" else { continue }
            failures.append(parsed)
            if let task = parsed["task"]?.stringValue { tasks.insert(task) }
        }
        XCTAssertEqual(tasks, ["startup", "deliveries"], "\(failures)")
        XCTAssertTrue(failures.allSatisfy { $0["level"] == "warn" && $0["code"] == "STORAGE_UNAVAILABLE" && $0["app"] == "example" })
        XCTAssertTrue(failures.contains { $0["error"]?.stringValue?.contains("disk I/O error") == true }, "the cause is in the log")
        try waitUntil(timeout: 10, "both failures counted") { counted.allSatisfy(metrics().contains) }
    }

    /// libpq printed PostgreSQL's notices as raw text on standard error, outside the JSON log.
    func testPostgreSQLNoticesGoThroughTheJSONLog() throws {
        let url = try PostgreSQLTestCluster.freshDatabase()
        _ = try PostgreSQLFactStore(url: url, poolSize: 1)  // creates schema_migrations
        let configuration = try ConfigurationLoader.load(path: try writeConfig(), environment: [:])
        let logged = try LoggedServer(configuration, store: try PostgreSQLFactStore(url: url, poolSize: 1))
        defer { logged.stop() }
        let reader = logged.reader
        // Opening again meets "CREATE TABLE IF NOT EXISTS schema_migrations": a NOTICE.
        _ = try PostgreSQLFactStore(url: url, poolSize: 1)
        var notice: JSONValue?
        while notice == nil, let line = reader.nextLine() {
            let parsed = try JSONParser.parse(line)
            if parsed["msg"] == "postgresql notice" { notice = parsed }
        }
        XCTAssertTrue(notice?["message"]?.stringValue?.contains("already exists, skipping") == true, "\(String(describing: notice))")
        XCTAssertEqual(notice?["level"], "info")
    }

    // MARK: - The command line

    func testEveryCommandHasHelpAndTheBinaryAVersion() throws {
        for command in [
            "serve", "sign-offer", "verify", "check-config", "keygen", "fetch-apple-roots", "sync", "backfill",
            "test-notification",
        ] {
            let help = try runProcess(entitleExecutable.path, [command, "--help"])
            XCTAssertEqual(help.status, 0, command)
            XCTAssertTrue(help.stdout.hasPrefix("usage: entitle \(command)"), "\(command): \(help.stdout)")
            let asked = try runProcess(entitleExecutable.path, ["help", command])
            XCTAssertEqual([asked.status.description, asked.stdout], ["0", help.stdout], "entitle help \(command) is \(command) --help")
        }
        XCTAssertEqual(try runProcess(entitleExecutable.path, ["help", "frobnicate"]).status, 2, "no such command to help with")
        let version = try runProcess(entitleExecutable.path, ["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertEqual(version.stdout, "entitle \(EntitleVersion.current)\n")
        let bare = try runProcess(entitleExecutable.path, [])
        XCTAssertEqual(bare.status, 2, "no command is a usage error")
        XCTAssertTrue(bare.stderr.contains("usage: entitle <command>"))
        XCTAssertEqual(try runProcess(entitleExecutable.path, ["frobnicate"]).status, 2)
        XCTAssertEqual(try runProcess(entitleExecutable.path, ["--help"]).status, 0)
    }

    /// With few descriptors, `maxConnections` is clamped to what they allow, and start-up says so.
    func testMaxConnectionsIsClampedToTheDescriptorLimit() throws {
        let path = try writeConfig()
        let (process, reader) = try serve(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "ulimit -n 256 && exec \"$0\" serve --config \"$1\"", entitleExecutable.path, path])
        defer { stop(process) }
        var warning: String?
        for _ in 0..<6 {
            guard let line = reader.nextLine() else { break }
            if line.contains("maxConnections") {
                warning = line
                break
            }
        }
        let parsed = try JSONParser.parse(try XCTUnwrap(warning, "no clamp warning"))
        XCTAssertEqual(parsed["level"], "warn")
        XCTAssertTrue(parsed["msg"]?.stringValue?.contains("using 192") == true, parsed.serializedString)
    }
}

private struct Unexpected: Error, CustomStringConvertible {
    var description: String { "secret detail of an unforeseen failure" }
}

/// A store whose every read fails with `error` (writes too).
private struct FailingStore: FactStore {
    let error: any Error & Sendable
    func write(_ batch: FactBatch) throws -> AppliedBatch { throw error }
    func facts(appId: String, environment: String, appAccountToken: String) throws -> [SubscriptionFacts] { throw error }
    func facts(appId: String, environment: String, originalTransactionId: String) throws -> SubscriptionFacts? { throw error }
    func syncRevision(appId: String, environment: String, originalTransactionId: String) throws -> String? { throw error }
    func originalTransactionId(appId: String, environment: String, transactionId: String) throws -> String? { throw error }
    func originalTransactionIds(appId: String, environment: String, appTransactionId: String) throws -> [String] { throw error }
    func appDownloads(appId: String, appAccountToken: String) throws -> [AppDownload] { throw error }
    func attributes(appId: String, appAccountToken: String) throws -> [CustomerAttribute] { throw error }
    func experiments(appId: String) throws -> [Experiment] { throw error }
    func experimentAssignments(appId: String, appAccountToken: String) throws -> [ExperimentAssignment] { throw error }
    func enrollmentCounts(appId: String, experiment: String) throws -> [String: Int64] { throw error }
    func appDownloadTokens(appId: String, environment: String, appTransactionId: String) throws -> [String] { throw error }
    func linkTransfers(appId: String, environment: String, appAccountToken: String) throws -> [LinkTransfer] { throw error }
    func dueAppleCalls(appId: String, now: Int64, limit: Int) throws -> [PendingAppleCall] { throw error }
    func usage(appId: String, appAccountToken: String) throws -> [UsageRecord] { throw error }
    func retentionRecord(appId: String, requestIdentifier: String) throws -> RetentionRecord? { throw error }
    func retentionRecords(appId: String, environment: String, originalTransactionId: String) throws -> [RetentionRecord] {
        throw error
    }
    func refundOverride(appId: String, appAccountToken: String) throws -> RefundOverride? { throw error }
    func refundRequests(appId: String, limit: Int) throws -> [RefundRequest] { throw error }
    func dueRefundRequests(appId: String, now: Int64, limit: Int) throws -> [RefundRequest] { throw error }
    func notifications(appId: String, limit: Int, before: Int64?) throws -> [StoredNotification] { throw error }
    func checkHealth() throws { throw error }
    let unreadableRows = UnreadableRows()
    func events(appId: String, after sequence: Int64, limit: Int) throws -> [OutboxEvent] { throw error }
    func event(appId: String, id: String) throws -> OutboxEvent? { throw error }
    func claimDeliveries(appId: String, endpoint: String, now: Int64, leaseUntil: Int64, limit: Int) throws -> [WebhookDelivery] {
        throw error
    }
    func record(_ outcomes: [DeliveryOutcome]) throws { throw error }
    func deliveries(appId: String, status: WebhookDelivery.Status?, limit: Int) throws -> [WebhookDelivery] { throw error }
    func retryDelivery(appId: String, id: String, _ rearming: WebhookDelivery.Rearming) throws -> WebhookDelivery? { throw error }
    func deliveryBacklog(appId: String) throws -> DeliveryBacklog { throw error }
    func abandonDeliveries(appId: String, keeping endpoints: Set<String>, _ abandonment: WebhookDelivery.Abandonment) throws -> Int {
        throw error
    }
    func grants(appId: String, environment: String, appAccountToken: String) throws -> [PromotionalGrant] { throw error }
    func grant(appId: String, id: String) throws -> PromotionalGrant? { throw error }
    func grants(appId: String, unexpiredAt now: Int64) throws -> [PromotionalGrant] { throw error }
    func signedFacts(appId: String, environment: String, originalTransactionId: String) throws -> [SignedFact] { throw error }
    func notifications(appId: String, environment: String, originalTransactionId: String) throws -> [StoredNotification] {
        throw error
    }
    func events(appId: String, originalTransactionId: String) throws -> [OutboxEvent] { throw error }
    func events(appId: String, appAccountToken: String) throws -> [OutboxEvent] { throw error }
    func deliveries(appId: String, eventId: String) throws -> [WebhookDelivery] { throw error }
    func subscriptions(appId: String, environment: String, after: String?, limit: Int) throws -> [SubscriptionFacts] { throw error }
    func metricSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] { throw error }
    func metricStockSums(appId: String, environment: String, fromDay: Int64) throws -> [(key: MetricDayKey, value: Int64)] { throw error }
    func metricMoments(appId: String, environment: String, from: Int64, to: Int64) throws -> [StoredMetricMoment] { throw error }
    func metricBucketSums(
        appId: String, environment: String, width: MetricBucketWidth, buckets: ClosedRange<Int64>
    ) throws -> [(key: MetricDayKey, value: Int64)] { throw error }
    func metricBucketTotals(
        appId: String, environment: String, width: MetricBucketWidth, stocks: MetricBucketSpan, flows: MetricBucketSpan
    ) throws -> [(key: MetricDayKey, value: Int64)] { throw error }
    func notificationCounts(appId: String, since: Int64, width: Int64) throws -> [NotificationCount] { throw error }
    func playPurchases(appId: String, appAccountToken: String) throws -> [PlayPurchase] { throw error }
    func playPurchase(appId: String, purchaseToken: String) throws -> PlayPurchase? { throw error }
    func hasPubSubMessage(appId: String, messageId: String) throws -> Bool { throw error }
    func playPurchase(appId: String, orderId: String) throws -> PlayPurchase? { throw error }
    func playPurchaseAnswer(appId: String, purchaseToken: String) throws -> String? { throw error }
    func playPurchases(appId: String, after: String?, limit: Int) throws -> [PlayPurchase] { throw error }
    func dueAcknowledgements(appId: String, now: Int64, limit: Int) throws -> [PendingAcknowledgement] { throw error }
    func pendingAcknowledgements(appId: String, queuedBefore: Int64) throws -> Int { throw error }
}

/// An in-process server whose JSON log lines are read from a pipe.
private final class LoggedServer {
    let server: EntitleServer
    let reader: LineReader
    private let writeEnd: Int32

    init(_ configuration: EntitleConfiguration, store: any FactStore) throws {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        writeEnd = pipe[1]
        server = try EntitleServer(configuration: configuration, logOutput: pipe[1], store: store)
        reader = LineReader(FileHandle(fileDescriptor: pipe[0], closeOnDealloc: true))
        server.start()
    }

    func stop() {
        server.shutdown()
        server.waitUntilStopped()
        server.logger.close()
        close(writeEnd)
    }
}
