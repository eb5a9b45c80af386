package import AppStore

/// Why verified data cannot become facts. Nothing of it is stored.
package enum FactsRefusal: Error, Sendable, Equatable {
    /// A required field is missing (the reason names it).
    case incomplete(String)
    /// A signed item inside a valid notification failed its own verification.
    case nestedItemInvalid(VerificationFailure)
    /// A renewal info posted beside a transaction belongs to another subscription.
    case mismatchedRenewalInfo
}

/// Verified App Store data → the facts to store (docs/ENTITLEMENTS.md). Pure: no clock (the caller
/// passes `receivedAt`), no storage.
package enum NotificationFacts {
    /// Everything one verified notification adds, in one batch: the notification itself (stored
    /// once per UUID), the transaction and renewal info it carries, and its billing signal.
    package static func batch(
        _ verified: VerifiedNotification, jws: String, appId: String, environment: String,
        receivedAt: Int64
    ) throws(FactsRefusal) -> FactBatch {
        if let failure = verified.firstNestedFailure { throw .nestedItemInvalid(failure) }
        let notification = verified.notification
        guard let uuid = notification.notificationUUID, let signedDate = notification.signedDate else {
            throw .incomplete("the notification has no notificationUUID or signedDate")
        }
        let type = notification.notificationType?.rawValue ?? "UNKNOWN"
        let subtype = notification.subtype?.rawValue
        let transaction = verified.transaction.flatMap(TransactionRecord.init)
        var batch = FactBatch(appId: appId, environment: environment)
        batch.notification = StoredNotification(
            notificationUUID: uuid, appId: appId, environment: environment,
            notificationType: type, subtype: subtype, signedDate: signedDate,
            receivedAt: receivedAt, originalTransactionId: transaction?.originalTransactionId,
            jws: jws)
        if let transaction, let signed = notification.data?.signedTransactionInfo { batch.transactions = [(transaction, signed)] }
        if let renewal = verified.renewalInfo.flatMap(RenewalRecord.init), let signed = notification.data?.signedRenewalInfo {
            batch.renewal = (renewal, signed)
        }
        if type == "CONSUMPTION_REQUEST", let transaction {
            batch.refundRequest = RefundRequest(
                id: uuid, store: "app_store", environment: environment, appAccountToken: transaction.appAccountToken,
                transactionId: transaction.transactionId, originalTransactionId: transaction.originalTransactionId,
                reason: notification.data?.consumptionRequestReason?.rawValue ?? "OTHER", requestedAt: signedDate,
                deadline: signedDate + RefundRequest.appleWindow)
        }
        if type == "REFUND" || type == "REFUND_DECLINED", let transaction {
            batch.refundOutcome = (transaction.transactionId, nil, type == "REFUND" ? "REFUNDED" : "DECLINED", signedDate)
        }
        if type == "RESCIND_CONSENT" {
            batch.consentRescinded = ConsentRescission(appTransactionId: verified.appTransaction?.appTransactionId)
        }
        if let original = transaction?.originalTransactionId ?? batch.renewal?.record.originalTransactionId,
            let signal = signal(type: type, subtype: subtype, at: signedDate)
        {
            batch.signals = [(original, signal)]
        }
        return batch
    }

    /// What a notification says about billing and auto-renewal (docs/ENTITLEMENTS.md, "Signals").
    package static func signal(type: String, subtype: String?, at: Int64) -> SubscriptionSignal? {
        switch (type, subtype) {
        case ("DID_FAIL_TO_RENEW", _): SubscriptionSignal(.billingIssue, at: at)
        case ("DID_RENEW", _), ("SUBSCRIBED", _): SubscriptionSignal(.renewed, at: at)
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"): SubscriptionSignal(.autoRenewDisabled, at: at)
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"): SubscriptionSignal(.autoRenewEnabled, at: at)
        default: nil
        }
    }

    /// The facts a client's post adds: a verified transaction, optionally its renewal info, and a
    /// request to link an untokened subscription to the caller's account token.
    package static func batch(
        transaction payload: JWSTransactionDecodedPayload, jws: String,
        renewal: (payload: JWSRenewalInfoDecodedPayload, jws: String)?, appAccountToken: String?,
        appId: String, environment: String
    ) throws(FactsRefusal) -> FactBatch {
        guard let record = TransactionRecord(payload) else { throw .incomplete("the transaction lacks identifying fields") }
        var batch = FactBatch(appId: appId, environment: environment)
        batch.transactions = [(record, jws)]
        if let renewal {
            guard let renewalRecord = RenewalRecord(renewal.payload),
                renewalRecord.originalTransactionId == record.originalTransactionId
            else { throw .mismatchedRenewalInfo }
            batch.renewal = (renewalRecord, renewal.jws)
        }
        if record.appAccountToken == nil, let token = appAccountToken?.lowercased() {
            batch.requestedLink = (record.originalTransactionId, token)
        }
        return batch
    }
}
