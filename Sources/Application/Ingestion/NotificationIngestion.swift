package import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON

/// `POST /v1/notifications/apple`: App Store Server Notifications V2. The signature is the
/// authentication. A notification is verified (with each signed item inside it), turned into
/// facts, and acknowledged only once they are durable.
package struct NotificationIngestion: Sendable {
    package enum Outcome: String, Sendable {
        case applied
        /// Its `notificationUUID` was stored before: nothing applied again.
        case duplicate
    }

    let app: AppConfiguration
    let verification: VerificationService
    let store: any FactStore
    /// For verification that asks OCSP.
    let outbound: BlockingPool
    let instrumentation: any Instrumentation
    /// Writes the events each stored notification causes, in its transaction.
    let eventWriter: AppEventWriter
    /// Where the Finish Transaction calls a notification queues are made (nil: the app makes none).
    let appleCalls: AppleCallQueue?
    /// Answers the refund requests (`CONSUMPTION_REQUEST`) notifications bring.
    let refundReviews: RefundReviews
    /// Remembers refused notifications for support (they are not stored).
    let failures: RecentFailures

    init(
        _ context: AppContext, verification: VerificationService, eventWriter: AppEventWriter, appleCalls: AppleCallQueue?,
        refundReviews: RefundReviews
    ) {
        app = context.app
        store = context.store
        outbound = context.outbound
        instrumentation = context.instrumentation
        failures = context.failures
        self.verification = verification
        self.eventWriter = eventWriter
        self.appleCalls = appleCalls
        self.refundReviews = refundReviews
    }

    /// Verifies on the caller's thread (the outbound pool when verification waits on OCSP); the write goes
    /// to the store's writer, which calls back after the commit. No thread waits per notification.
    ///
    /// `body` is the request exactly as Apple sent it, passed on byte for byte when the app
    /// forwards notifications.
    package func ingest(
        _ parsed: SignedPayload, body: String? = nil, source: String = "notification", receivedAt: Date,
        completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void
    ) {
        let work: @Sendable () -> Void = {
            let batch: FactBatch
            do { batch = try self.batch(parsed, body: body, source: source, receivedAt: receivedAt) } catch {
                completion(.failure(error))
                return
            }
            store.record(batch, outbox: eventWriter) { result in
                let outcome = result.map { $0 == .duplicateNotification ? Outcome.duplicate : .applied }
                if case .success(let value) = outcome { instrumentation.record(.notificationOutcome(app: app.id, result: value.rawValue)) }
                if case .success(.applied) = outcome {
                    if batch.finishesPurchases { appleCalls?.kick() }
                    if let request = batch.refundRequest {
                        instrumentation.record(.refundRequested(app: app.id, store: request.store, reason: request.reason))
                        refundReviews.kick()
                    }
                    if let outcome = batch.refundOutcome {
                        instrumentation.record(.refundDecided(app: app.id, store: "app_store", outcome: outcome.outcome))
                    }
                }
                completion(outcome)
            }
        }
        verification.schedule(work, on: outbound) { completion(.failure(ServiceError.overloaded)) }
    }

    /// The same, blocking until durable (back-fill on the outbound pool, the CLI).
    func ingestNow(_ parsed: SignedPayload, source: String, receivedAt: Date) throws -> Outcome {
        try store.record(try batch(parsed, body: nil, source: source, receivedAt: receivedAt), outbox: eventWriter)
            == .duplicateNotification
            ? .duplicate : .applied
    }

    /// Verification and the facts to store (CPU only unless the app uses online checks).
    func batch(_ parsed: SignedPayload, body: String?, source: String, receivedAt: Date) throws -> FactBatch {
        let verified = verification.verifiedNotification(parsed)
        instrumentation.record(
            .verified(
                app: app.id, source: source, kind: SignedPayloadKind.notification.rawValue,
                result: verified.statusName))
        guard case .valid(let (notification, environment)) = verified else {
            instrumentation.record(.notificationOutcome(app: app.id, result: verified.statusName))
            remember(parsed, refusedWith: verified.statusName, reason: verified.failure!.reason, at: receivedAt)
            throw verified.failure!
        }
        instrumentation.record(.notificationReceived(app: app.id, type: notification.notification.notificationType?.rawValue ?? "UNKNOWN"))
        let nested: [(SignedPayloadKind, String?)] = [
            (.transaction, notification.transactionResult?.statusName),
            (.renewalInfo, notification.renewalInfoResult?.statusName),
            (.appTransaction, notification.appTransactionResult?.statusName),
        ]
        for case let (kind, result?) in nested {
            instrumentation.record(.verified(app: app.id, source: source, kind: kind.rawValue, result: result))
        }
        var batch: FactBatch
        do {
            batch = try NotificationFacts.batch(
                notification, jws: parsed.text, appId: app.id, environment: environment.rawValue,
                receivedAt: Milliseconds.since1970(receivedAt))
        } catch {
            instrumentation.record(.notificationOutcome(app: app.id, result: error.refusalName))
            remember(parsed, refusedWith: error.refusalName, reason: error.message, at: receivedAt)
            throw error
        }
        batch.source = source
        // What Apple sends of a new purchase is delivered by the server; a back-fill's old ones
        // were delivered (and finished) long ago.
        batch.finishesPurchases = appleCalls != nil && app.serverAPI.finishTransactions && source == "notification"
        if let consent = batch.consentRescinded { batch.consentRescinded = try whom(consent, environment: environment.rawValue) }
        if let url = app.forwardNotifications[environment] {
            // A notification Entitle fetched itself (back-fill) is passed on as Apple would post it.
            batch.forward = ForwardedNotification(
                url: url, body: body ?? JSONValue.object(["signedPayload": .string(parsed.text)]).serializedString)
        }
        return batch
    }

    /// The purchases made from the app download that lost consent, and their customer: read
    /// before the write (Apple sends this once per device, and nothing the write adds changes it).
    private func whom(_ consent: ConsentRescission, environment: String) throws -> ConsentRescission {
        guard let appTransactionId = consent.appTransactionId else { return consent }
        let originals = try store.originalTransactionIds(appId: app.id, environment: environment, appTransactionId: appTransactionId)
        var token: String?
        for original in originals where token == nil {
            token = try store.facts(appId: app.id, environment: environment, originalTransactionId: original)?.appAccountToken
        }
        return ConsentRescission(appTransactionId: appTransactionId, originalTransactionIds: originals, appAccountToken: token)
    }

    /// The notifications this instance refused lately, newest first, as `GET /v1/notifications/refused`
    /// answers them: what each claimed (unverified) and why it was refused.
    package func recentlyRefused() -> JSONObject {
        let items: [JSONValue] = failures.refusedNotifications(app: app.id).map { refused in
            var item: JSONObject = ["result": "refused", "status": .string(refused.status), "reason": .string(refused.reason)]
            Timestamps.set(&item, "receivedAt", refused.receivedAt)
            if let type = refused.claimedType { item["notificationType"] = .string(type) }
            if let subtype = refused.claimedSubtype { item["subtype"] = .string(subtype) }
            if let uuid = refused.claimedUUID { item["notificationUUID"] = .string(uuid) }
            if let environment = refused.claimedEnvironment { item["environment"] = .string(environment) }
            return .object(item)
        }
        return ["refused": .array(items), "scope": .string("this instance, the last \(RecentFailures.refusalsKept)")]
    }

    /// What a refused notification claimed, cut short (it is unverified input).
    private func remember(_ parsed: SignedPayload, refusedWith status: String, reason: String, at receivedAt: Date) {
        func claimed(_ key: String) -> String? { parsed.payload[key]?.stringValue.map { String($0.prefix(100)) } }
        let environment = parsed.payload["data"]?["environment"]?.stringValue.map { String($0.prefix(40)) }
        failures.refused(
            RecentFailures.RefusedNotification(
                receivedAt: Milliseconds.since1970(receivedAt), claimedType: claimed("notificationType"),
                claimedSubtype: claimed("subtype"), claimedUUID: claimed("notificationUUID"), claimedEnvironment: environment,
                status: status, reason: String(reason.prefix(300))), app: app.id)
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
