/// A signed item exactly as it was verified and stored (the newest copy of each transaction, the
/// newest renewal info): a customer's history shows it decoded.
public struct SignedFact: Sendable, Equatable {
    public enum Kind: String, Sendable { case transaction, renewalInfo }

    public var kind: Kind
    public var originalTransactionId: String
    /// The transaction id (for renewal info, the original transaction id).
    public var id: String
    public var signedDate: Int64
    public var jws: String

    public init(kind: Kind, originalTransactionId: String, id: String, signedDate: Int64, jws: String) {
        self.kind = kind
        self.originalTransactionId = originalTransactionId
        self.id = id
        self.signedDate = signedDate
        self.jws = jws
    }
}

/// How many notifications of one type arrived in one hour (the console's chart and `/v1/stats`).
public struct NotificationCount: Sendable, Equatable {
    /// The hour, as the epoch milliseconds it starts at.
    public var hourStart: Int64
    public var environment: String
    public var notificationType: String
    public var count: Int

    public init(hourStart: Int64, environment: String, notificationType: String, count: Int) {
        self.hourStart = hourStart
        self.environment = environment
        self.notificationType = notificationType
        self.count = count
    }
}
