import AppStore
import AppStoreAPI
import Application
import Crypto
import Entitlements
import Foundation
import Instants
import JSON

/// `entitle sync`, `entitle backfill` and `entitle test-notification`: the App Store Server API
/// from the command line, storing into the configuration's database like the server does.
enum SyncCommands {
    static let syncUsage = "entitle sync --config PATH --app ID (--app-account-token U | --transaction-id T)"
    static let backfillUsage = "entitle backfill --config PATH --app ID --since ISO8601 [--until ISO8601]"
    static let testUsage = "entitle test-notification --config PATH --app ID --environment Production|Sandbox"

    /// The app's use cases and its sync use case.
    private static func services(_ arguments: Arguments) throws -> (AppServices, SyncService) {
        let (_, services) = try loadServices(arguments)
        return (services, try services.requireSync())
    }

    /// Runs `work`, printing its JSON, or Apple's error as JSON with exit status 1.
    private static func report(_ work: () throws -> JSONObject) throws -> Int32 {
        do {
            Output.json(.object(try work()))
            return 0
        } catch let error as AppStoreAPIError {
            Output.json(.object(["error": .string(error.description), "retryable": .bool(error.isRetryable)]))
            return 1
        }
    }

    static func sync(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["config", "app", "app-account-token", "transaction-id"])
        let (_, sync) = try services(arguments)
        return try report {
            let synced: SyncService.Synced
            if let token = arguments["app-account-token"] {
                guard UUID.isCanonicalText(token) else { throw UsageError("--app-account-token must be a UUID") }
                synced = try awaitUseCase { try await sync.syncSubscriberAndRead(appAccountToken: token) }
            } else {
                let transactionId = try arguments.required("transaction-id")
                synced = try awaitUseCase { try await sync.syncTransactionAndRead(transactionId) }
            }
            var answer: JSONObject = ["sync": .object(synced.report.json)]
            if let subscriber = synced.subscriber { answer["subscriber"] = .object(subscriber) }
            return answer
        }
    }

    static func backfill(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["config", "app", "since", "until"])
        let (_, sync) = try services(arguments)
        let start = try instant(try arguments.required("since"), "--since")
        let end = try arguments["until"].map { try instant($0, "--until") } ?? Milliseconds.now
        guard start < end else { throw UsageError("--since must be before --until") }
        return try report { ["backfill": .object(try awaitUseCase { try await sync.backfill(start: start, end: end) }.json)] }
    }

    /// Asks Apple for a test notification, then checks Apple's delivery report and whether it was
    /// stored here (the server must be running and reachable through the configured URL).
    static func testNotification(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["config", "app", "environment"])
        let (services, sync) = try services(arguments)
        let environment = AppStoreEnvironment(rawValue: try arguments.required("environment"))
        guard let client = sync.clients[environment] else {
            throw UsageError("\(environment.rawValue) is not enabled for this app")
        }
        var exit: Int32 = 1
        let status = try report {
            guard let token = try awaitUseCase({ try await client.requestTestNotification() }).testNotificationToken else {
                return ["arrived": false, "reason": "Apple returned no test notification token"]
            }
            var attempts: [String] = []
            var uuid: String?
            for _ in 0..<10 {
                Thread.sleep(forTimeInterval: 2)
                // Polled: a failed look (Apple not ready yet, a timeout) is tried again; the report
                // below says whether the notification ever arrived.
                guard let check = try? awaitUseCase({ try await client.getTestNotificationStatus(token) }) else { continue }
                attempts = check.sendAttemptResults
                uuid = check.signedPayload.flatMap { SignedPayloadInspection.unverifiedPayload($0)?["notificationUUID"]?.stringValue }
                if attempts.contains("SUCCESS") { break }
            }
            let stored = try awaitResult { services.subscribers.notifications(limit: 50, before: nil, completion: $0) }
            let arrived = uuid.map { id in stored.contains { $0.notificationUUID == id } } ?? false
            exit = arrived ? 0 : 1
            return [
                "testNotificationToken": .string(token), "sendAttempts": .array(attempts.map(JSONValue.string)),
                "arrived": .bool(arrived),
            ]
        }
        return status == 0 ? exit : status
    }

    private static func instant(_ text: String, _ name: String) throws -> Int64 {
        guard let instant = Milliseconds.parse(text) else { throw UsageError("\(name) must be an ISO 8601 time, years 0 to 9999") }
        return instant
    }
}
