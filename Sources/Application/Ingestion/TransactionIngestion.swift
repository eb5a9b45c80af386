package import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON

/// `POST /v1/transactions`: an app posts a signed transaction (and optionally its renewal info);
/// it is verified, stored, and an untokened subscription is linked to the caller's token (once;
/// a different existing link is a conflict and changes nothing).
package struct TransactionIngestion: Sendable {
    package struct Posted: Sendable {
        package var transaction: JWSTransactionDecodedPayload
        package var subscriber: JSONObject
    }

    let app: AppConfiguration
    let verification: VerificationService
    let store: any FactStore
    let subscribers: SubscriberQueries
    /// For verification that asks OCSP.
    let outbound: BlockingPool
    let instrumentation: any Instrumentation
    /// Where the Apple calls a post queues are made (nil: the app makes none).
    let appleCalls: AppleCallQueue?
    let eventWriter: AppEventWriter

    init(
        _ context: AppContext, verification: VerificationService, subscribers: SubscriberQueries, appleCalls: AppleCallQueue?,
        eventWriter: AppEventWriter
    ) {
        app = context.app
        store = context.store
        outbound = context.outbound
        instrumentation = context.instrumentation
        self.verification = verification
        self.subscribers = subscribers
        self.appleCalls = appleCalls
        self.eventWriter = eventWriter
    }

    /// Verifies on the caller's thread (on the outbound pool when verification waits on OCSP),
    /// writes through the store's writer, then reads the subscriber back on the database pool.
    package func post(
        signedTransaction: String, signedRenewalInfo: String?, appAccountToken: String?, now: Date,
        completion: @escaping @Sendable (Result<Posted, any Error>) -> Void
    ) {
        let prepare: @Sendable () -> Void = {
            let prepared: (FactBatch, JWSTransactionDecodedPayload, AppStoreEnvironment)
            do {
                prepared = try batch(
                    signedTransaction: signedTransaction, signedRenewalInfo: signedRenewalInfo,
                    appAccountToken: appAccountToken, now: now)
            } catch {
                completion(.failure(error))
                return
            }
            let (batch, payload, environment) = prepared
            store.record(batch, outbox: eventWriter) { outcome in
                switch outcome {
                case .failure(let error): completion(.failure(error))
                case .success(.linkConflict): completion(.failure(ServiceError.conflict))
                case .success:
                    if batch.queuesTokenCall || batch.finishesPurchases { appleCalls?.kick() }
                    let original = batch.transactions[0].record.originalTransactionId
                    subscribers.subscriber(originalTransactionId: original, environment: environment, at: now) { read in
                        completion(read.map { Posted(transaction: payload, subscriber: $0 ?? [:]) })
                    }
                }
            }
        }
        verification.schedule(prepare, on: outbound) { completion(.failure(ServiceError.overloaded)) }
    }

    /// Verification and the facts to store (CPU only unless the app uses online checks).
    func batch(
        signedTransaction: String, signedRenewalInfo: String?,
        appAccountToken: String?, now: Date
    ) throws -> (FactBatch, JWSTransactionDecodedPayload, AppStoreEnvironment) {
        let token = try AppAccountToken.validated(appAccountToken)
        let parsed: SignedPayload
        do { parsed = try SignedPayload(signedTransaction) } catch {
            count(.transaction, error.status.rawValue)
            throw error
        }
        let verified = verification.verifiedTransaction(parsed)
        count(.transaction, verified.statusName)
        guard case .valid(let (payload, environment)) = verified else { throw verified.failure! }
        var renewal: (JWSRenewalInfoDecodedPayload, String)?
        if let signedRenewalInfo {
            let parsedRenewal = try SignedPayload(signedRenewalInfo)
            let result = verification.verifiedRenewalInfo(parsedRenewal, environment: environment)
            count(.renewalInfo, result.statusName)
            guard case .valid(let (renewalPayload, _)) = result else { throw result.failure! }
            renewal = (renewalPayload, parsedRenewal.text)
        }
        var batch = try NotificationFacts.batch(
            transaction: payload, jws: parsed.text, renewal: renewal, appAccountToken: token,
            appId: app.id, environment: environment.rawValue)
        batch.transfersLink = app.transferPolicy == .transfer
        batch.requestedAt = Milliseconds.since1970(now)
        batch.queuesTokenCall = appleCalls != nil && app.serverAPI.setAppAccountToken && batch.requestedLink != nil
        batch.finishesPurchases = appleCalls != nil && app.serverAPI.finishTransactions
        batch.source = "clientPost"
        return (batch, payload, environment)
    }

    private func count(_ kind: SignedPayloadKind, _ result: String) {
        instrumentation.record(.verified(app: app.id, source: "transaction", kind: kind.rawValue, result: result))
    }
}
