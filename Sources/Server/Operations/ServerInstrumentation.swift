import Application
import JSON

/// What the use cases report, counted by `Metrics`; delivery failures are also logged (by the
/// endpoint's label, never its full URL or secret), so an operator sees which endpoint fails and why.
struct ServerInstrumentation: Instrumentation {
    let metrics: Metrics
    let logger: Logger

    func verified(app: String, source: String, kind: String, result: String) {
        metrics.verified(app: app, source: source, kind: kind, result: result)
    }

    func notificationReceived(app: String, type: String) { metrics.notificationReceived(app: app, type: type) }
    func notificationOutcome(app: String, result: String) { metrics.notificationOutcome(app: app, result: result) }
    func offerSigned(app: String, kind: String) { metrics.offerSigned(app: app, kind: kind) }
    func refundRequested(app: String, store: String, reason: String) { metrics.refundRequested(app: app, store: store, reason: reason) }
    func retentionRequest(app: String, result: String) { metrics.retentionRequest(app: app, result: result) }
    func retentionAnswered(app: String, kind: String, rule: String) { metrics.retentionAnswered(app: app, kind: kind, rule: rule) }
    func retentionSaved(app: String, rule: String) { metrics.retentionSaved(app: app, rule: rule) }
    func refundAnswered(app: String, store: String, result: String) { metrics.refundAnswered(app: app, store: store, result: result) }
    func refundDecided(app: String, store: String, outcome: String) { metrics.refundDecided(app: app, store: store, outcome: outcome) }
    func eventWritten(app: String, type: String) { metrics.eventWritten(app: app, type: type) }

    func deliveryAttempted(app: String, endpoint: String, kind: String, result: String, httpStatus: Int?, error: String?) {
        metrics.deliveryAttempted(app: app, endpoint: endpoint, kind: kind, result: result, httpStatus: httpStatus, error: error)
        guard result != "delivered" else { return }
        var fields: JSONObject = ["app": .string(app), "endpoint": .string(endpoint), "kind": .string(kind), "result": .string(result)]
        if let httpStatus { fields["status"] = .int(Int64(httpStatus)) }
        if let error { fields["error"] = .string(error) }
        logger.log(
            result == "failed" ? "error" : "warn", result == "failed" ? "delivery failed for good" : "delivery failed; will retry", fields)
    }

    func deliveryBacklog(app: String, pending: Int, failed: Int, oldestPendingSeconds: Double) {
        metrics.deliveryBacklog(app: app, pending: pending, failed: failed, oldestPendingSeconds: oldestPendingSeconds)
    }

    func backgroundFailed(app: String, task: String, code: String, message: String) {
        metrics.backgroundFailed(app: app, task: task, code: code, message: message)
        logger.log(
            "warn", "background task failed",
            ["app": .string(app), "task": .string(task), "code": .string(code), "error": .string(message)])
    }

    func unacknowledgedPurchases(app: String, count: Int) {
        metrics.unacknowledgedPurchases(app: app, count: count)
        guard count > 0 else { return }
        logger.log(
            "error", "Google Play purchases unacknowledged for more than a day (Google refunds them after three)",
            ["app": .string(app), "purchases": .int(Int64(count))])
    }

    /// One line per support action, with the admin key's name (never the key).
    func supportAction(app: String, key: String, action: String, target: String) {
        logger.log(
            "info", "support action", ["app": .string(app), "key": .string(key), "action": .string(action), "target": .string(target)])
    }
}
