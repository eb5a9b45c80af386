import Entitlements

/// The rows of the refund and retention records (their bodies as stored JSON), once for both
/// dialects, in their tables' column order (`StoredTables`).
enum UsageCodec {
    static let table = StoredTables.usageRecords

    static func values(appId: String, _ record: UsageRecord) -> [StoredValue] {
        [.text(appId), .text(record.id), .text(record.appAccountToken), .integer(record.recordedAt), .text(StoredJSON.text(record.json))]
    }
}

enum RefundOverrideCodec {
    static let table = StoredTables.refundOverrides

    static func values(appId: String, appAccountToken: String, _ override: RefundOverride) -> [StoredValue] {
        [.text(appId), .text(appAccountToken), .text(StoredJSON.text(override.json))]
    }
}

enum RefundRequestCodec {
    static let table = StoredTables.refundRequests

    /// A new request: no outcome yet (a later notification sets it, `markRefundOutcome`).
    static func values(appId: String, _ request: RefundRequest) -> [StoredValue] {
        [
            .text(appId), .text(request.id), .text(request.store), .text(request.environment), .from(request.appAccountToken),
            .from(request.transactionId), .from(request.purchaseToken), .text(request.status.rawValue), .integer(request.nextAt),
            .integer(request.requestedAt), .null, .null, .text(StoredJSON.text(request.json)),
        ]
    }
}

enum RetentionCodec {
    static let table = StoredTables.retentionRecords

    /// A new answer: not saved yet (a later purchase marks it, `markRetentionSaved`).
    static func values(appId: String, _ record: RetentionRecord) -> [StoredValue] {
        [
            .text(appId), .text(record.requestIdentifier), .text(record.environment), .text(record.originalTransactionId),
            .integer(record.answeredAt), .null, .null, .text(StoredJSON.text(record.json)),
        ]
    }
}
