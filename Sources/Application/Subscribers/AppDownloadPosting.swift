package import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON

/// `POST /v1/app-transactions`: an app posts its signed `AppTransaction` once for its
/// environment and download; it is verified like any signed item of the app, and stored as the
/// customer's download (`AppDownload`), which the subscriber answer then shows.
package struct AppDownloadPosting: Sendable {
    package struct Posted: Sendable {
        package var appTransaction: AppTransaction
        package var subscriber: JSONObject
    }

    let app: AppConfiguration
    let verification: VerificationService
    let store: any FactStore
    let subscribers: SubscriberQueries
    let outbound: BlockingPool
    let instrumentation: any Instrumentation

    init(_ context: AppContext, verification: VerificationService, subscribers: SubscriberQueries) {
        app = context.app
        store = context.store
        outbound = context.outbound
        instrumentation = context.instrumentation
        self.verification = verification
        self.subscribers = subscribers
    }

    /// Verifies on the caller's thread (on the outbound pool when verification waits on OCSP),
    /// writes through the store's writer, then reads the subscriber back on the database pool.
    package func post(
        signedAppTransaction: String, appAccountToken: String, now: Date,
        completion: @escaping @Sendable (Result<Posted, any Error>) -> Void
    ) {
        let prepare: @Sendable () -> Void = {
            let prepared: (AppDownload, AppTransaction)
            do { prepared = try download(signedAppTransaction: signedAppTransaction, appAccountToken: appAccountToken, now: now) } catch {
                completion(.failure(error))
                return
            }
            let (download, verified) = prepared
            var batch = FactBatch(appId: app.id, environment: download.environment)
            batch.appDownload = download
            batch.requestedAt = download.postedAt
            store.record(batch) { outcome in
                if case .failure(let error) = outcome { return completion(.failure(error)) }
                // The whole customer, as `GET /v1/subscribers/{appAccountToken}` answers it.
                subscribers.subscriber(appAccountToken: download.appAccountToken, environment: nil, at: now) { read in
                    completion(read.map { Posted(appTransaction: verified, subscriber: $0 ?? [:]) })
                }
            }
        }
        verification.schedule(prepare, on: outbound) { completion(.failure(ServiceError.overloaded)) }
    }

    /// Verification and the download to store (CPU only unless the app uses online checks).
    func download(signedAppTransaction: String, appAccountToken: String, now: Date) throws -> (AppDownload, AppTransaction) {
        let token = try AppAccountToken.validated(appAccountToken)
        let parsed: SignedPayload
        do { parsed = try SignedPayload(signedAppTransaction) } catch {
            count(error.status.rawValue)
            throw error
        }
        let verified = verification.verifiedAppTransaction(parsed)
        count(verified.statusName)
        guard case .valid(let (payload, environment)) = verified else { throw verified.failure! }
        guard
            let download = AppDownload(
                payload, environment: environment.rawValue, appAccountToken: token, postedAt: Milliseconds.since1970(now))
        else {
            throw ServiceError(
                status: 422, code: "NO_APP_TRANSACTION_ID",
                message: "the app transaction has no appTransactionId (Apple signs one since iOS 18.4): nothing to link")
        }
        return (download, payload)
    }

    private func count(_ result: String) {
        instrumentation.record(
            .verified(app: app.id, source: "appTransaction", kind: SignedPayloadKind.appTransaction.rawValue, result: result))
    }
}
