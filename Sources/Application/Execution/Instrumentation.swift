/// What the use cases count, for `/metrics`. The server's `Metrics` implements it; the CLI and
/// tests that need no counters use `NoInstrumentation`.
package protocol Instrumentation: Sendable {
    /// One verification of signed data: where it came from (`verify`, `transaction`,
    /// `notification`, `sync`, …), the kind of item, and `VALID` or the failure's status.
    func verified(app: String, source: String, kind: String, result: String)
    /// A notification received, by type (once per verified notification, duplicates included).
    func notificationReceived(app: String, type: String)
    /// What became of a notification: `applied`, `duplicate`, or why it was refused.
    func notificationOutcome(app: String, result: String)
    func offerSigned(app: String, kind: String)
    /// A retention request: `answered`, `repeated` (the stored answer again) or `refused`.
    func retentionRequest(app: String, result: String)
    /// A retention answer given, by kind (`message`, `alternateProduct`, `promotionalOffer`) and rule.
    func retentionAnswered(app: String, kind: String, rule: String)
    /// A retention answer that saved its subscription, by rule.
    func retentionSaved(app: String, rule: String)
    /// A store's refund request stored, by store and reason.
    func refundRequested(app: String, store: String, reason: String)
    /// What came of answering one: `sent`, `late`, `failed` (the store refused it), `no_consent`.
    func refundAnswered(app: String, store: String, result: String)
    /// What a store decided of a refund request: `REFUNDED`, `DECLINED`.
    func refundDecided(app: String, store: String, outcome: String)
    /// An event committed to the outbox, by type.
    func eventWritten(app: String, type: String)
    /// One delivery attempt: `delivered`, `retry` or `failed` (dead), with the HTTP status
    /// answered (nil: none) and, when it did not succeed, why. `endpoint` is the URL's label.
    func deliveryAttempted(app: String, endpoint: String, kind: String, result: String, httpStatus: Int?, error: String?)
    /// The delivery backlog, measured by the deliverers now and then.
    func deliveryBacklog(app: String, pending: Int, failed: Int, oldestPendingSeconds: Double)
    /// Something support did with an admin key (a grant, a revocation, a re-sync, a redelivery),
    /// under the key's name: the audit trail of the log.
    func supportAction(app: String, key: String, action: String, target: String)
    /// A background task (`deliveries`, `apple_calls`, `google_acknowledgements`, `startup`, …)
    /// failed with `code`: logged at `warn` and counted, never swallowed.
    func backgroundFailed(app: String, task: String, code: String, message: String)
    /// Google Play purchases of the app still unacknowledged a day after they were stored (Google
    /// refunds them after three): measured by the acknowledger now and then.
    func unacknowledgedPurchases(app: String, count: Int)
}

extension Instrumentation {
    /// `error` as a background failure: its stable code when it has one.
    package func backgroundFailed(app: String, task: String, _ error: any Error) {
        backgroundFailed(app: app, task: task, code: (error as? any HTTPStatusError)?.code ?? "INTERNAL", message: "\(error)")
    }
}

package struct NoInstrumentation: Instrumentation {
    package init() {}
    package func verified(app: String, source: String, kind: String, result: String) {}
    package func notificationReceived(app: String, type: String) {}
    package func notificationOutcome(app: String, result: String) {}
    package func offerSigned(app: String, kind: String) {}
    package func retentionRequest(app: String, result: String) {}
    package func retentionAnswered(app: String, kind: String, rule: String) {}
    package func retentionSaved(app: String, rule: String) {}
    package func refundRequested(app: String, store: String, reason: String) {}
    package func refundAnswered(app: String, store: String, result: String) {}
    package func refundDecided(app: String, store: String, outcome: String) {}
    package func eventWritten(app: String, type: String) {}
    package func deliveryAttempted(app: String, endpoint: String, kind: String, result: String, httpStatus: Int?, error: String?) {}
    package func deliveryBacklog(app: String, pending: Int, failed: Int, oldestPendingSeconds: Double) {}
    package func supportAction(app: String, key: String, action: String, target: String) {}
    package func backgroundFailed(app: String, task: String, code: String, message: String) {}
    package func unacknowledgedPurchases(app: String, count: Int) {}
}
