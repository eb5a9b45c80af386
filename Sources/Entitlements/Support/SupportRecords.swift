/// A signed item exactly as it was verified and stored (the newest copy of each transaction, the
/// newest renewal info): a customer's history shows it decoded.
package struct SignedFact: Sendable, Equatable {
    package enum Kind: String, Sendable { case transaction, renewalInfo }

    package var kind: Kind
    package var originalTransactionId: String
    /// The transaction id (for renewal info, the original transaction id).
    package var id: String
    package var signedDate: Int64
    package var jws: String

    package init(kind: Kind, originalTransactionId: String, id: String, signedDate: Int64, jws: String) {
        self.kind = kind
        self.originalTransactionId = originalTransactionId
        self.id = id
        self.signedDate = signedDate
        self.jws = jws
    }
}

/// How many notifications of one type arrived in one hour (the console's chart and `/v1/stats`).
package struct NotificationCount: Sendable, Equatable {
    /// Notifications are counted per hour: the stores group by this width, which is decided here.
    package static let hour: Int64 = 3_600_000

    /// The hour, as the epoch milliseconds it starts at.
    package var hourStart: Int64
    package var environment: String
    package var notificationType: String
    package var count: Int

    package init(hourStart: Int64, environment: String, notificationType: String, count: Int) {
        self.hourStart = hourStart
        self.environment = environment
        self.notificationType = notificationType
        self.count = count
    }
}
