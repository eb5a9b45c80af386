package import JSON

/// Where the use cases report what they observe, for `/metrics` and the log: one entry point,
/// one type. The server's sink counts and logs each `Observation` as the observation itself
/// says; the CLI and tests that need neither use `NoInstrumentation`.
package protocol Instrumentation: Sendable {
    func record(_ observation: Observation)
}

extension Instrumentation {
    /// `error` as a background failure: its stable code when it has one.
    package func backgroundFailed(app: String, task: String, _ error: any Error) {
        record(
            .backgroundFailed(app: app, task: task, code: (error as? any HTTPStatusError)?.code ?? "INTERNAL", message: "\(error)"))
    }
}

package struct NoInstrumentation: Instrumentation {
    package init() {}
    package func record(_ observation: Observation) {}
}

/// Everything the server reports. A new observation is a case here, its counter in `counter`
/// (and its family in `CounterFamily`), its log line in `logLine`: nothing else to edit.
package enum Observation: Sendable, Equatable {
    /// One verification of signed data: where it came from (`verify`, `transaction`,
    /// `notification`, `sync`, …), the kind of item, and `VALID` or the failure's status.
    case verified(app: String, source: String, kind: String, result: String)
    /// A notification received, by type (once per verified notification, duplicates included).
    case notificationReceived(app: String, type: String)
    /// What became of a notification: `applied`, `duplicate`, or why it was refused.
    case notificationOutcome(app: String, result: String)
    case offerSigned(app: String, kind: String)
    /// A retention request: `answered`, `repeated` (the stored answer again) or `refused`.
    case retentionRequest(app: String, result: String)
    /// A retention answer given, by kind (`message`, `alternateProduct`, `promotionalOffer`) and rule.
    case retentionAnswered(app: String, kind: String, rule: String)
    /// A retention answer that saved its subscription, by rule.
    case retentionSaved(app: String, rule: String)
    /// A store's refund request stored, by store and reason.
    case refundRequested(app: String, store: String, reason: String)
    /// What came of answering one: `sent`, `late`, `failed` (the store refused it), `no_consent`.
    case refundAnswered(app: String, store: String, result: String)
    /// What a store decided of a refund request: `REFUNDED`, `DECLINED`.
    case refundDecided(app: String, store: String, outcome: String)
    /// An event committed to the outbox, by type.
    case eventWritten(app: String, type: String)
    /// One delivery attempt: `delivered`, `retry` or `failed` (dead), with the HTTP status
    /// answered (nil: none) and, when it did not succeed, why. `endpoint` is the URL's label.
    case deliveryAttempted(app: String, endpoint: String, kind: String, result: String, httpStatus: Int?, error: String?)
    /// The delivery backlog, measured by the deliverers now and then (a gauge).
    case deliveryBacklog(app: String, pending: Int, failed: Int, oldestPendingSeconds: Double)
    /// Something support did with an admin key (a grant, a revocation, a re-sync, a redelivery),
    /// under the key's name: the audit trail of the log.
    case supportAction(app: String, key: String, action: String, target: String)
    /// A background task (`deliveries`, `apple_calls`, `google_acknowledgements`, `startup`, …)
    /// failed with `code`: logged at `warn` and counted, never swallowed.
    case backgroundFailed(app: String, task: String, code: String, message: String)
    /// Google Play purchases of the app still unacknowledged a day after they were stored (Google
    /// refunds them after three): measured by the acknowledger now and then (a gauge).
    case unacknowledgedPurchases(app: String, count: Int)
    /// A request refused 429 by a rate limit, by scope (client, server, admin key; address).
    case rateLimited(scope: String)
    /// A stored row that could not be read (its JSON or a column no longer parses), by table and
    /// key: it is left out of the answer it belonged to, so it is counted and logged.
    case unreadableRow(table: String, key: String)

    /// The counter families, each with its label names and help text, in the order `/metrics`
    /// lists them (every one, even before its first count).
    package enum CounterFamily: String, CaseIterable, Sendable {
        case verifications = "entitle_verifications_total"
        case notificationsReceived = "entitle_notifications_received_total"
        case notificationOutcomes = "entitle_notification_outcomes_total"
        case offersSigned = "entitle_offers_signed_total"
        case events = "entitle_events_total"
        case deliveries = "entitle_webhook_deliveries_total"
        case backgroundErrors = "entitle_background_errors_total"
        case refundRequests = "entitle_refund_requests_total"
        case refundAnswers = "entitle_refund_answers_total"
        case refundOutcomes = "entitle_refund_outcomes_total"
        case retentionRequests = "entitle_retention_requests_total"
        case retentionAnswers = "entitle_retention_answers_total"
        case retentionSaves = "entitle_retention_saves_total"
        case rateLimited = "entitle_rate_limited_total"
        case unreadableRows = "entitle_storage_unreadable_rows_total"

        package var name: String { rawValue }

        package var labels: [String] {
            switch self {
            case .verifications: ["app", "source", "kind", "result"]
            case .notificationsReceived, .events: ["app", "type"]
            case .notificationOutcomes, .retentionRequests: ["app", "result"]
            case .offersSigned: ["app", "kind"]
            case .deliveries: ["app", "endpoint", "kind", "result"]
            case .backgroundErrors: ["app", "task", "code"]
            case .refundRequests: ["app", "store", "reason"]
            case .refundAnswers: ["app", "store", "result"]
            case .refundOutcomes: ["app", "store", "outcome"]
            case .retentionAnswers: ["app", "kind", "rule"]
            case .retentionSaves: ["app", "rule"]
            case .rateLimited: ["scope"]
            case .unreadableRows: ["table"]
            }
        }

        package var help: String {
            switch self {
            case .verifications: "Signed-data verifications, by app, source, kind and result."
            case .notificationsReceived: "Verified App Store Server Notifications, by app and type."
            case .notificationOutcomes: "What became of each notification: applied, duplicate, or the refusal's status."
            case .offersSigned: "Offer signatures made, by app and kind."
            case .events: "Events committed to the outbox, by app and type."
            case .deliveries: "Delivery attempts (events to webhooks, forwarded notifications): delivered, retry, or failed (dead)."
            case .backgroundErrors: "Failures of background tasks (deliveries, Apple and Google calls, start-up), by task and code."
            case .refundRequests: "Refund requests the stores sent, by store and reason."
            case .refundAnswers: "Refund requests answered: sent (in time), late, failed (refused by the store), no_consent."
            case .refundOutcomes: "What the stores decided of refund requests: REFUNDED or DECLINED."
            case .retentionRequests: "Apple's realtime retention requests: answered, repeated (the stored answer again), refused."
            case .retentionAnswers: "Retention answers given, by kind and rule."
            case .retentionSaves: "Retention answers that saved their subscription, by rule."
            case .rateLimited: "Requests refused 429 by a rate limit, by scope (client, server, admin key; address)."
            case .unreadableRows: "Stored rows that could not be read and were left out of an answer, by table."
            }
        }
    }

    /// The counter this observation adds one to, with its label values in the family's order
    /// (nil: a gauge, or only logged).
    package var counter: (family: CounterFamily, values: [String])? {
        switch self {
        case .verified(let app, let source, let kind, let result): (.verifications, [app, source, kind, result])
        case .notificationReceived(let app, let type): (.notificationsReceived, [app, type])
        case .notificationOutcome(let app, let result): (.notificationOutcomes, [app, result])
        case .offerSigned(let app, let kind): (.offersSigned, [app, kind])
        case .retentionRequest(let app, let result): (.retentionRequests, [app, result])
        case .retentionAnswered(let app, let kind, let rule): (.retentionAnswers, [app, kind, rule])
        case .retentionSaved(let app, let rule): (.retentionSaves, [app, rule])
        case .refundRequested(let app, let store, let reason): (.refundRequests, [app, store, reason])
        case .refundAnswered(let app, let store, let result): (.refundAnswers, [app, store, result])
        case .refundDecided(let app, let store, let outcome): (.refundOutcomes, [app, store, outcome])
        case .eventWritten(let app, let type): (.events, [app, type])
        case .deliveryAttempted(let app, let endpoint, let kind, let result, _, _): (.deliveries, [app, endpoint, kind, result])
        case .backgroundFailed(let app, let task, let code, _): (.backgroundErrors, [app, task, code])
        case .rateLimited(let scope): (.rateLimited, [scope])
        case .unreadableRow(let table, _): (.unreadableRows, [table])
        case .deliveryBacklog, .supportAction, .unacknowledgedPurchases: nil
        }
    }

    /// What the log says of it (nil: nothing). Delivery failures name the endpoint by its label,
    /// never its URL or secret; support actions the admin key by its name, never the key.
    package var logLine: (level: String, message: String, fields: JSONObject)? {
        switch self {
        case .deliveryAttempted(let app, let endpoint, let kind, let result, let httpStatus, let error):
            guard result != "delivered" else { return nil }
            var fields: JSONObject = ["app": .string(app), "endpoint": .string(endpoint), "kind": .string(kind), "result": .string(result)]
            if let httpStatus { fields["status"] = .int(Int64(httpStatus)) }
            if let error { fields["error"] = .string(error) }
            return result == "failed"
                ? ("error", "delivery failed for good", fields) : ("warn", "delivery failed; will retry", fields)
        case .backgroundFailed(let app, let task, let code, let message):
            return (
                "warn", "background task failed",
                ["app": .string(app), "task": .string(task), "code": .string(code), "error": .string(message)]
            )
        case .unacknowledgedPurchases(let app, let count):
            guard count > 0 else { return nil }
            return (
                "error", "Google Play purchases unacknowledged for more than a day (Google refunds them after three)",
                ["app": .string(app), "purchases": .int(Int64(count))]
            )
        case .supportAction(let app, let key, let action, let target):
            return (
                "info", "support action",
                ["app": .string(app), "key": .string(key), "action": .string(action), "target": .string(target)]
            )
        case .unreadableRow(let table, let key):
            return ("error", "a stored row could not be read and was left out", ["table": .string(table), "key": .string(key)])
        default:
            return nil
        }
    }
}
