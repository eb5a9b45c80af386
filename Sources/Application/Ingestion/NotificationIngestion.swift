import AppStore
import Entitlements
import Foundation
import JSON

/// `POST /v1/notifications/apple`: App Store Server Notifications V2. The signature is the
/// authentication. A notification is verified (with each signed item inside it), turned into
/// facts, and acknowledged only once they are durable.
public struct NotificationIngestion: Sendable {
    public enum Outcome: String, Sendable {
        case applied
        /// Its `notificationUUID` was stored before: nothing applied again.
        case duplicate
    }

    let app: AppConfiguration
    let verification: VerificationService
    let store: any FactStore
    let pool: BlockingPool
    let instrumentation: any Instrumentation
    /// Writes the events each stored notification causes, in its transaction.
    var eventWriter: (any EventWriting)?

    /// Verifies on the caller's thread (the pool when verification waits on OCSP); the write goes
    /// to the store's writer, which calls back after the commit. No thread waits per notification.
    ///
    /// `body` is the request exactly as Apple sent it, passed on byte for byte when the app
    /// forwards notifications.
    public func ingest(
        _ parsed: SignedPayload, body: String? = nil, source: String = "notification", receivedAt: Date,
        completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void
    ) {
        let work: @Sendable () -> Void = {
            let batch: FactBatch
            do { batch = try self.batch(parsed, body: body, source: source, receivedAt: receivedAt) } catch {
                completion(.failure(error))
                return
            }
            store.apply(batch) { result in
                let outcome = result.map { $0 == .duplicateNotification ? Outcome.duplicate : .applied }
                if case .success(let value) = outcome { instrumentation.notificationOutcome(app: app.id, result: value.rawValue) }
                completion(outcome)
            }
        }
        verification.schedule(work, on: pool) { completion(.failure(ServiceError.overloaded)) }
    }

    /// The same, blocking until durable (back-fill on the pool, the CLI).
    func ingestNow(_ parsed: SignedPayload, source: String, receivedAt: Date) throws -> Outcome {
        try store.apply(try batch(parsed, body: nil, source: source, receivedAt: receivedAt)) == .duplicateNotification
            ? .duplicate : .applied
    }

    /// Verification and the facts to store (CPU only unless the app uses online checks).
    func batch(_ parsed: SignedPayload, body: String?, source: String, receivedAt: Date) throws -> FactBatch {
        let verified = verification.verifiedNotification(parsed)
        instrumentation.verified(
            app: app.id, source: source, kind: SignedPayloadKind.notification.rawValue,
            result: verified.statusName)
        guard case .valid(let (notification, environment)) = verified else {
            instrumentation.notificationOutcome(app: app.id, result: verified.statusName)
            throw verified.failure!
        }
        instrumentation.notificationReceived(app: app.id, type: notification.notification.notificationType?.rawValue ?? "UNKNOWN")
        let nested: [(SignedPayloadKind, String?)] = [
            (.transaction, notification.transactionResult?.statusName),
            (.renewalInfo, notification.renewalInfoResult?.statusName),
            (.appTransaction, notification.appTransactionResult?.statusName),
        ]
        for case let (kind, result?) in nested {
            instrumentation.verified(app: app.id, source: source, kind: kind.rawValue, result: result)
        }
        do {
            var batch = try NotificationFacts.batch(
                notification, jws: parsed.text, appId: app.id, environment: environment.rawValue,
                receivedAt: Milliseconds.since1970(receivedAt))
            batch.source = source
            batch.eventWriter = eventWriter
            if let url = app.forwardNotifications[environment] {
                // A notification Entitle fetched itself (back-fill) is passed on as Apple would post it.
                batch.forward = ForwardedNotification(
                    url: url, body: body ?? JSONValue.object(["signedPayload": .string(parsed.text)]).serializedString)
            }
            return batch
        } catch {
            instrumentation.notificationOutcome(app: app.id, result: error.refusalName)
            throw error
        }
    }
}

extension FactsRefusal {
    /// The status name a refusal is counted under.
    var refusalName: String {
        switch self {
        case .nestedItemInvalid(let failure): failure.status.rawValue
        case .incomplete, .mismatchedRenewalInfo: VerificationStatus.invalidJWTFormat.rawValue
        }
    }
}
