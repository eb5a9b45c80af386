import AppStore
import Entitlements
import Foundation
import JSON

/// Facts in, state out for one app: ingests verified transactions and notifications into the
/// store and answers subscribers. Every method blocks on storage: call it off the event loops.
public struct SubscriberService: Sendable {
    public let app: AppConfiguration
    public let store: any FactStore
    public let verification: VerificationService

    public init(app: AppConfiguration, store: any FactStore, verification: VerificationService) {
        self.app = app
        self.store = store
        self.verification = verification
    }

    /// The environment answers default to: Production when the app enables it, else the first.
    public var defaultEnvironment: String {
        app.environments.contains("Production") ? "Production" : app.environments.first ?? "Sandbox"
    }

    // MARK: - Reading

    public func subscriber(appAccountToken: String, environment: String?, now: Date = Date()) throws -> JSONObject? {
        let environment = environment ?? defaultEnvironment
        let facts = try store.facts(appId: app.id, environment: environment, appAccountToken: appAccountToken.lowercased())
        guard !facts.isEmpty else { return nil }
        return SubscriberView(app: app).render(facts, appAccountToken: appAccountToken.lowercased(), environment: environment,
                                               now: Self.milliseconds(now))
    }

    public func subscriber(originalTransactionId: String, environment: String?, now: Date = Date()) throws -> JSONObject? {
        let environment = environment ?? defaultEnvironment
        guard let facts = try store.facts(appId: app.id, environment: environment, originalTransactionId: originalTransactionId) else {
            return nil
        }
        // A linked subscription answers for its whole subscriber.
        if let token = facts.appAccountToken { return try subscriber(appAccountToken: token, environment: environment, now: now) }
        return SubscriberView(app: app).render([facts], appAccountToken: nil, environment: environment, now: Self.milliseconds(now))
    }

    /// The stored subscriptions of the customer a request names: those linked to its token, plus
    /// the subscription its transaction id belongs to.
    private func customerFacts(appAccountToken: String?, transactionId: String?) throws -> [SubscriptionFacts] {
        let environment = defaultEnvironment
        var facts: [SubscriptionFacts] = []
        if let token = appAccountToken {
            facts = try store.facts(appId: app.id, environment: environment, appAccountToken: token.lowercased())
        }
        if let transactionId,
           let original = try store.originalTransactionId(appId: app.id, environment: environment, transactionId: transactionId),
           !facts.contains(where: { $0.originalTransactionId == original }),
           let found = try store.facts(appId: app.id, environment: environment, originalTransactionId: original) {
            facts.append(found)
        }
        return facts
    }

    /// Every stored subscription of the customer, evaluated at `now` (promotional-offer rules).
    public func subscriptions(appAccountToken: String?, transactionId: String?, now: Date) throws -> [SubscriptionState] {
        try customerFacts(appAccountToken: appAccountToken, transactionId: transactionId).compactMap {
            SubscriptionEngine.evaluate(transactions: $0.transactions, renewal: $0.renewal, signals: $0.signals,
                                        now: Self.milliseconds(now), environment: defaultEnvironment,
                                        billingRetryGrantsAccess: app.billingRetryGrantsAccess)
        }
    }

    /// Every stored transaction of the customer (introductory-offer eligibility).
    func transactions(appAccountToken: String?, transactionId: String?) throws -> [TransactionRecord] {
        try customerFacts(appAccountToken: appAccountToken, transactionId: transactionId).flatMap(\.transactions)
    }

    // MARK: - Writing

    public enum IngestError: Error {
        case verification(VerificationFailure)
        case conflict(existingToken: String)
        case malformed(String)
    }

    /// `POST /v1/transactions`: verify, store, and link an untokened subscription to the token the
    /// client names (once; a different existing link is a conflict and changes nothing).
    public func ingestTransaction(signedTransaction: String, signedRenewalInfo: String?, appAccountToken: String?,
                                  now: Date = Date()) throws -> (transaction: JWSTransactionDecodedPayload, subscriber: JSONObject) {
        let (environment, result) = verification.verifiedTransaction(signedTransaction)
        guard case .valid(let payload) = result, let environment else {
            throw IngestError.verification(result.failure ?? VerificationFailure(.invalidJWTFormat, "unverified"))
        }
        guard let record = TransactionRecord(payload) else { throw IngestError.malformed("the transaction lacks identifying fields") }
        var batch = FactBatch(appId: app.id, environment: environment)
        batch.transactions = [(record, signedTransaction)]
        if let signedRenewalInfo {
            let (_, renewalResult) = verification.verifiedRenewalInfo(signedRenewalInfo, environment: environment)
            guard case .valid(let renewal) = renewalResult else {
                throw IngestError.verification(renewalResult.failure!)
            }
            guard let renewalRecord = RenewalRecord(renewal), renewalRecord.originalTransactionId == record.originalTransactionId else {
                throw IngestError.malformed("the renewal info belongs to another subscription")
            }
            batch.renewal = (renewalRecord, signedRenewalInfo)
        }
        if record.appAccountToken == nil, let token = appAccountToken?.lowercased() {
            batch.requestedLink = (record.originalTransactionId, token)
        }
        if case .linkConflict(let existing) = try store.apply(batch) { throw IngestError.conflict(existingToken: existing) }
        let subscriber = try subscriber(originalTransactionId: record.originalTransactionId, environment: environment, now: now) ?? [:]
        return (payload, subscriber)
    }

    /// `POST /v1/notifications/apple`, after the app is known: verify the notification and what it
    /// carries, then store everything in one transaction. Returns false for a duplicate.
    public func ingestNotification(_ signedPayload: String, now: Date = Date()) throws -> (applied: Bool, type: String) {
        let (batch, type) = try prepareNotification(signedPayload, now: now)
        return (try store.apply(batch) == .applied, type)
    }

    /// Verifies a notification and what it carries and turns it into the batch to store (CPU only:
    /// no storage, no network unless the app uses online checks).
    /// `claimedEnvironment` is the environment the unverified payload names, when already read.
    public func prepareNotification(_ signedPayload: String, claimedEnvironment: String? = nil,
                                    now: Date = Date()) throws -> (batch: FactBatch, type: String) {
        let (environment, result) = verification.verifiedNotification(signedPayload, environment: claimedEnvironment)
        guard case .valid(let verified) = result, let environment else {
            throw IngestError.verification(result.failure ?? VerificationFailure(.invalidJWTFormat, "unverified"))
        }
        let notification = verified.notification
        guard let uuid = notification.notificationUUID, let signedDate = notification.signedDate else {
            throw IngestError.malformed("the notification has no notificationUUID or signedDate")
        }
        let type = notification.notificationType?.rawValue ?? "UNKNOWN"
        let transaction = verified.transaction.flatMap(TransactionRecord.init)
        var batch = FactBatch(appId: app.id, environment: environment)
        batch.notification = StoredNotification(notificationUUID: uuid, appId: app.id, environment: environment,
                                                notificationType: type, subtype: notification.subtype?.rawValue,
                                                signedDate: signedDate, receivedAt: Self.milliseconds(now),
                                                originalTransactionId: transaction?.originalTransactionId, jws: signedPayload)
        if let transaction, let jws = notification.data?.signedTransactionInfo { batch.transactions = [(transaction, jws)] }
        if let renewal = verified.renewalInfo.flatMap(RenewalRecord.init), let jws = notification.data?.signedRenewalInfo {
            batch.renewal = (renewal, jws)
        }
        if let original = transaction?.originalTransactionId ?? batch.renewal?.record.originalTransactionId,
           let signal = Self.signal(type: type, subtype: notification.subtype?.rawValue, at: signedDate) {
            batch.signals = [(original, signal)]
        }
        return (batch, type)
    }

    /// What a notification says about billing and auto-renewal (ENTITLEMENTS.md).
    static func signal(type: String, subtype: String?, at: Int64) -> SubscriptionSignal? {
        switch (type, subtype) {
        case ("DID_FAIL_TO_RENEW", _): SubscriptionSignal(.billingIssue, at: at)
        case ("DID_RENEW", _), ("SUBSCRIBED", _): SubscriptionSignal(.renewed, at: at)
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"): SubscriptionSignal(.autoRenewDisabled, at: at)
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"): SubscriptionSignal(.autoRenewEnabled, at: at)
        default: nil
        }
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}
