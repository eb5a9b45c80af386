import Instants
package import JSON

/// A store asking the developer about a refund a customer requested: Apple's
/// `CONSUMPTION_REQUEST` (answered within 12 hours) or Google's pending refund review (24 hours).
/// Stored with its deadline in the commit of the notification that brought it; answered once,
/// through a durable queue, while the deadline holds.
package struct RefundRequest: Sendable, Equatable {
    package enum Status: String, Sendable {
        /// Waiting for its answer (or its next attempt, at `nextAt`).
        case pending = "PENDING"
        /// Answered; the store accepted it.
        case sent = "SENT"
        /// The deadline passed before an answer was accepted: nothing more is sent.
        case late = "LATE"
        /// The store refused the answer (a 4xx): recorded with its error, not retried.
        case failed = "FAILED"
        /// Not answered on purpose: the app's terms do not obtain the customer's consent to share
        /// usage, which Apple requires.
        case noConsent = "NO_CONSENT"
    }

    /// How long each store weighs an answer.
    package static let appleWindow: Int64 = 12 * 3_600_000
    package static let googleWindow: Int64 = 24 * 3_600_000

    /// The window of the store a request came from (`app_store`, `play_store`).
    package static func window(store: String) -> Int64 { store == MetricsSubscription.playStore ? googleWindow : appleWindow }

    /// A Play refund review's id: what identifies the review (its `pendingRefundToken`, else its
    /// order), not the Pub/Sub message that told of it, so a second message about the same review
    /// is the request already stored and Google is answered once (`orders.reviewrefund`).
    package static func playReviewId(pendingRefundToken: String?, orderId: String?, messageId: String) -> String {
        if let token = pendingRefundToken, !token.isEmpty { return "play-review:" + token }
        if let orderId, !orderId.isEmpty { return "play-order:" + orderId }
        return messageId
    }

    /// Apple's: the notification's `notificationUUID`; Google's: `playReviewId`.
    package var id: String
    /// `app_store` or `play_store`.
    package var store: String
    package var environment: String
    package var appAccountToken: String?
    /// Apple: the transaction the refund is for, and its subscription.
    package var transactionId: String?
    package var originalTransactionId: String?
    /// Google: the purchase, its order and the review's token.
    package var purchaseToken: String?
    package var orderId: String?
    package var pendingRefundToken: String?
    /// Apple's `consumptionRequestReason` (`UNINTENDED_PURCHASE`, `FULFILLMENT_ISSUE`,
    /// `UNSATISFIED_WITH_PURCHASE`, `LEGAL`, `OTHER`); Google's `refundReason` number as text.
    package var reason: String
    package var requestedAt: Int64
    package var deadline: Int64
    package var status: Status
    package var attempts: Int
    package var nextAt: Int64
    /// What was sent (the request body), by which decision (`rule <name>`, `override`, `default`).
    package var answer: JSONObject?
    package var decidedBy: String?
    package var sentAt: Int64?
    package var error: String?
    /// What the store decided, once it says: `REFUNDED` or `DECLINED`.
    package var outcome: String?
    package var outcomeAt: Int64?

    package init(
        id: String, store: String, environment: String, appAccountToken: String?, transactionId: String? = nil,
        originalTransactionId: String? = nil, purchaseToken: String? = nil, orderId: String? = nil, pendingRefundToken: String? = nil,
        reason: String, requestedAt: Int64, deadline: Int64
    ) {
        self.id = id
        self.store = store
        self.environment = environment
        self.appAccountToken = appAccountToken
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.pendingRefundToken = pendingRefundToken
        self.reason = reason
        self.requestedAt = requestedAt
        self.deadline = deadline
        status = .pending
        attempts = 0
        nextAt = requestedAt
    }

    /// As stored and answered.
    package func write<Object: JSONObjectBuilder>(into object: inout Object) {
        object.set("id", id)
        object.set("store", store)
        object.set("environment", environment)
        object.set("appAccountToken", ifPresent: appAccountToken)
        object.set("transactionId", ifPresent: transactionId)
        object.set("originalTransactionId", ifPresent: originalTransactionId)
        object.set("purchaseToken", ifPresent: purchaseToken)
        object.set("orderId", ifPresent: orderId)
        object.set("pendingRefundToken", ifPresent: pendingRefundToken)
        object.set("reason", reason)
        Timestamps.set(&object, "requestedAt", requestedAt)
        Timestamps.set(&object, "deadline", deadline)
        object.set("status", status.rawValue)
        object.set("attempts", Int64(attempts))
        Timestamps.set(&object, "nextAttemptAt", status == .pending ? nextAt : nil)
        if let answer { object.set("answer", json: .object(answer)) }
        object.set("decidedBy", ifPresent: decidedBy)
        Timestamps.set(&object, "sentAt", sentAt)
        object.set("error", ifPresent: error)
        object.set("outcome", ifPresent: outcome)
        Timestamps.set(&object, "outcomeAt", outcomeAt)
    }

    package var json: JSONObject {
        var object = JSONObject()
        write(into: &object)
        return object
    }

    package init?(stored json: JSONObject) {
        guard let id = json["id"]?.stringValue, let store = json["store"]?.stringValue,
            let status = json["status"]?.stringValue.flatMap(Status.init(rawValue:))
        else { return nil }
        self.init(
            id: id, store: store, environment: json["environment"]?.stringValue ?? "",
            appAccountToken: json["appAccountToken"]?.stringValue, transactionId: json["transactionId"]?.stringValue,
            originalTransactionId: json["originalTransactionId"]?.stringValue, purchaseToken: json["purchaseToken"]?.stringValue,
            orderId: json["orderId"]?.stringValue, pendingRefundToken: json["pendingRefundToken"]?.stringValue,
            reason: json["reason"]?.stringValue ?? "", requestedAt: Milliseconds.stored(json["requestedAtMs"]) ?? 0,
            deadline: Milliseconds.stored(json["deadlineMs"]) ?? 0)
        self.status = status
        attempts = Int(json["attempts"]?.integer(in: 0...Int64(Int32.max)) ?? 0)
        nextAt = Milliseconds.stored(json["nextAttemptAtMs"]) ?? requestedAt
        answer = json["answer"]?.objectValue
        decidedBy = json["decidedBy"]?.stringValue
        sentAt = Milliseconds.stored(json["sentAtMs"])
        error = json["error"]?.stringValue
        outcome = json["outcome"]?.stringValue
        outcomeAt = Milliseconds.stored(json["outcomeAtMs"])
    }
}
