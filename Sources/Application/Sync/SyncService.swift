package import AppStore
package import AppStoreAPI
import Entitlements
import Foundation
import Instants
package import JSON

/// What a sync or back-fill did, item by item: nothing that failed is dropped silently (P-09).
package struct SyncReport: Sendable {
    package var environment: AppStoreEnvironment?
    package var stored = 0
    package var duplicates = 0
    package var revision: String?
    package var failures: [(item: String, status: String, reason: String)] = []

    package var json: JSONObject {
        var object: JSONObject = ["stored": .int(Int64(stored))]
        if let environment { object["environment"] = .string(environment.rawValue) }
        if duplicates > 0 { object["duplicates"] = .int(Int64(duplicates)) }
        if let revision { object["revision"] = .string(revision) }
        object["failures"] = .array(
            failures.map { .object(["item": .string($0.item), "status": .string($0.status), "reason": .string($0.reason)]) })
        return object
    }
}

/// Pulls the truth from the App Store Server API (docs/APP_STORE.md §5): a customer's statuses and
/// transaction history (incrementally, from the last stored `revision`), and missed notifications
/// (Get Notification History). Every signed item is verified and stored through the same path as
/// notifications. Apple's calls run on the outbound pool, the database's on the database pool,
/// and a retry's wait is a timer: a slow Apple holds no thread that a subscriber read needs.
package struct SyncService: Sendable {
    let app: AppConfiguration
    let verification: VerificationService
    let notifications: NotificationIngestion
    let subscribers: SubscriberQueries
    let store: any FactStore
    let pool: BlockingPool
    /// Where Apple's calls (and the verification that may ask OCSP) run.
    let outbound: BlockingPool
    let instrumentation: any Instrumentation
    /// The server's one clock: what "now" is for the subscriber a sync answers.
    let clock: any WallClock
    package let clients: AppStoreClients
    package let retry: RetryPolicy
    let eventWriter: AppEventWriter

    init(
        _ context: AppContext, clients: AppStoreClients, verification: VerificationService, notifications: NotificationIngestion,
        subscribers: SubscriberQueries, eventWriter: AppEventWriter, retry: RetryPolicy = RetryPolicy()
    ) {
        clock = context.clock
        app = context.app
        store = context.store
        pool = context.pool
        outbound = context.outbound
        instrumentation = context.instrumentation
        self.verification = verification
        self.notifications = notifications
        self.subscribers = subscribers
        self.eventWriter = eventWriter
        self.clients = clients
        self.retry = retry
    }

    /// The environments to try, Production first (the order of docs/APP_STORE.md §5.8's fallback).
    private var environments: [AppStoreEnvironment] { AppStoreEnvironment.all.filter { clients[$0] != nil } }

    // MARK: - Off the event loops

    /// What a sync reports, with the subscriber as it stands after it (nil when nothing is stored).
    package struct Synced: Sendable {
        package var report: SyncReport
        package var subscriber: JSONObject?
    }

    /// Syncs the subscription `transactionId` belongs to, then reads its subscriber.
    package func syncTransactionAndRead(_ transactionId: String) async throws -> Synced {
        let report = try await syncTransaction(transactionId)
        let subscriber = try await pool.perform {
            try report.environment.flatMap { try subscribers.subscriber(transactionId: transactionId, environment: $0, at: clock.now()) }
        }
        return Synced(report: report, subscriber: subscriber)
    }

    /// Syncs every subscription linked to the token, then reads the subscriber.
    package func syncSubscriberAndRead(appAccountToken: String) async throws -> Synced {
        let report = try await syncSubscriber(appAccountToken: appAccountToken)
        let subscriber = try await pool.perform {
            try subscribers.subscriber(appAccountToken: appAccountToken, environment: report.environment, at: clock.now())
        }
        return Synced(report: report, subscriber: subscriber)
    }

    // MARK: - Customers

    /// Syncs the subscription `transactionId` belongs to. The environment is the stored one when
    /// known; otherwise Production, then Sandbox when Apple does not know the id (§5.8).
    package func syncTransaction(_ transactionId: String) async throws -> SyncReport {
        var candidates = environments
        let all = candidates
        if let known = try await pool.perform({ try all.first { try subscribers.subscription(of: transactionId, in: $0) != nil } }) {
            candidates = [known]
        }
        var lastError: AppStoreAPIError?
        for environment in candidates {
            do {
                return try await sync(transactionId, environment: environment)
            } catch let error as AppStoreAPIError where error.apiCode == .transactionIdNotFound {
                lastError = error
            }
        }
        throw lastError ?? AppStoreAPIError.decoding("no App Store Server API environment is enabled", environment: "none")
    }

    /// Syncs every purchase linked to the token. Apple's history and statuses are the customer's
    /// (the Apple ID's), whichever of their transactions is named: one walk per environment and
    /// Apple ID covers all of its purchases, from the revision stored for it (a walk per purchase
    /// asked for the same history again, from the start, and Apple counts every request).
    package func syncSubscriber(appAccountToken: String) async throws -> SyncReport {
        let token = try AppAccountToken.validated(appAccountToken)
        var report = SyncReport()
        for environment in environments {
            let walks = try await pool.perform {
                let linked = try store.facts(appId: app.id, environment: environment.rawValue, appAccountToken: token)
                return try Self.oneWalkPerAccount(linked) {
                    try store.syncRevision(appId: app.id, environment: environment.rawValue, originalTransactionId: $0) != nil
                }
            }
            for original in walks {
                let one = try await sync(original, environment: environment)
                report.environment = one.environment
                report.stored += one.stored
                report.failures += one.failures
            }
        }
        return report
    }

    /// The purchase to name for each Apple ID among `linked` (told apart by the app download,
    /// `appTransactionId`; purchases without one count as one account): the one a revision is
    /// stored for, so the walk goes on from there, else the first.
    static func oneWalkPerAccount(_ linked: [SubscriptionFacts], hasRevision: (String) throws -> Bool) throws -> [String] {
        var accounts: [String: [String]] = [:]
        var order: [String] = []
        for facts in linked.sorted(by: { $0.originalTransactionId < $1.originalTransactionId }) {
            let account = facts.transactions.lazy.compactMap(\.appTransactionId).first ?? ""
            if accounts[account] == nil { order.append(account) }
            accounts[account, default: []].append(facts.originalTransactionId)
        }
        return try order.map { account in
            let originals = accounts[account] ?? []
            return try originals.first(where: hasRevision) ?? originals[0]
        }
    }

    private func sync(_ transactionId: String, environment: AppStoreEnvironment) async throws -> SyncReport {
        guard let client = clients[environment] else {
            throw AppStoreAPIError.decoding("\(environment.rawValue) is not enabled", environment: environment.rawValue)
        }
        let (original, since) = try await pool.perform { () throws -> (String?, String?) in
            let original = try subscribers.subscription(of: transactionId, in: environment)
            let since = try original.flatMap {
                try store.syncRevision(appId: app.id, environment: environment.rawValue, originalTransactionId: $0)
            }
            return (original, since)
        }
        let statuses = try await retry.run { try await client.getAllSubscriptionStatuses(transactionId) }
        let history = try await retry.run { try await client.getAllTransactionHistory(transactionId, since: since) }
        return try await outbound.perform {
            try storeVerified(statuses, history, of: transactionId, original: original, environment: environment)
        }
    }

    /// What Apple answered, verified and stored: the transactions in one batch with the revision
    /// reached, each renewal info in its own (the newest signedDate wins).
    private func storeVerified(
        _ statuses: StatusResponse, _ history: (signedTransactions: [String], revision: String?), of transactionId: String,
        original: String?,
        environment: AppStoreEnvironment
    ) throws -> SyncReport {
        var report = SyncReport(environment: environment, revision: history.revision)
        var batch = syncBatch(environment)
        addVerified(
            history.signedTransactions + statuses.lastTransactions.compactMap(\.signedTransactionInfo), to: &batch, report: &report,
            environment: environment)
        let subscription =
            original ?? batch.transactions.first { $0.record.transactionId == transactionId }?.record.originalTransactionId
            ?? batch.transactions.first?.record.originalTransactionId
        if let subscription, let revision = history.revision { batch.syncRevision = (subscription, revision) }
        report.stored = batch.transactions.count
        _ = try store.record(batch, outbox: eventWriter)
        for jws in statuses.lastTransactions.compactMap(\.signedRenewalInfo) {
            let result: VerificationResult<(JWSRenewalInfoDecodedPayload, AppStoreEnvironment)>
            do { result = verification.verifiedRenewalInfo(try SignedPayload(jws), environment: environment) } catch {
                result = .invalid(error)
            }
            instrumentation.record(
                .verified(
                    app: app.id, source: "sync", kind: SignedPayloadKind.renewalInfo.rawValue,
                    result: result.statusName))
            switch result {
            case .valid(let (payload, _)):
                guard let record = RenewalRecord(payload) else { continue }
                var renewal = syncBatch(environment)
                renewal.renewal = (record, jws)
                _ = try store.record(renewal, outbox: eventWriter)
            case .invalid(let failure):
                report.failures.append(("renewal info", failure.status.rawValue, failure.reason))
            }
        }
        return report
    }

    /// Verifies each signed transaction; the valid ones join the batch, the others the report.
    private func addVerified(_ items: [String], to batch: inout FactBatch, report: inout SyncReport, environment: AppStoreEnvironment) {
        for jws in items {
            let verdict: VerificationResult<(JWSTransactionDecodedPayload, AppStoreEnvironment)>
            var claimedId: String?
            do {
                let parsed = try SignedPayload(jws)
                claimedId = parsed.payload["transactionId"]?.stringValue
                verdict = verification.verifiedTransaction(parsed, environment: environment)
            } catch {
                verdict = .invalid(error)
            }
            instrumentation.record(
                .verified(
                    app: app.id, source: "sync", kind: SignedPayloadKind.transaction.rawValue,
                    result: verdict.statusName))
            switch verdict {
            case .valid(let (payload, _)):
                if let record = TransactionRecord(payload) { batch.transactions.append((record, jws)) }
            case .invalid(let failure):
                report.failures.append(
                    (
                        claimedId ?? "transaction",
                        failure.status.rawValue, failure.reason
                    ))
            }
        }
    }

    /// Look Up Order ID: the transactions of an order ID from a customer's receipt e-mail,
    /// verified and stored as a sync stores them. Answers the subscriptions they belong to, per
    /// environment (Production first; an ID Apple calls invalid there is tried in Sandbox).
    package func lookUpOrder(_ orderId: String) async throws -> [(environment: AppStoreEnvironment, originalTransactionIds: [String])] {
        var found: [(AppStoreEnvironment, [String])] = []
        for environment in environments {
            guard let client = clients[environment] else { continue }
            let answer = try await retry.run { try await client.lookUpOrderId(orderId) }
            guard answer.status == 0 else { continue }
            let originals = try await outbound.perform { () throws -> [String] in
                var report = SyncReport(environment: environment)
                var batch = syncBatch(environment)
                addVerified(answer.signedTransactions, to: &batch, report: &report, environment: environment)
                guard !batch.transactions.isEmpty else { return [] }
                _ = try store.record(batch, outbox: eventWriter)
                var originals: [String] = []
                for (record, _) in batch.transactions where !originals.contains(record.originalTransactionId) {
                    originals.append(record.originalTransactionId)
                }
                return originals
            }
            if !originals.isEmpty { found.append((environment, originals)) }
        }
        return found
    }

    private func syncBatch(_ environment: AppStoreEnvironment) -> FactBatch {
        var batch = FactBatch(appId: app.id, environment: environment.rawValue)
        batch.source = "sync"
        return batch
    }

    // MARK: - Notifications

    /// Walks Get Notification History for `[start, end)` (epoch ms) in every enabled environment and
    /// applies what is missing, exactly as the webhook would (stored notifications are duplicates).
    package func backfill(start: Int64, end: Int64) async throws -> SyncReport {
        var report = SyncReport()
        for environment in environments {
            guard let client = clients[environment] else { continue }
            var token: String?
            repeat {
                let cursor = token
                let page = try await retry.run {
                    try await client.getNotificationHistory(startDate: start, endDate: end, paginationToken: cursor)
                }
                let applied = try await outbound.perform { () throws -> SyncReport in
                    var applied = SyncReport()
                    for payload in page.signedPayloads {
                        do {
                            switch try notifications.ingestNow(try SignedPayload(payload), source: "backfill", receivedAt: clock.now()) {
                            case .applied: applied.stored += 1
                            case .duplicate: applied.duplicates += 1
                            }
                        } catch let failure as VerificationFailure {
                            applied.failures.append(("notification", failure.status.rawValue, failure.reason))
                        } catch let refusal as FactsRefusal {
                            applied.failures.append(("notification", refusal.refusalName, refusal.message))
                        }
                    }
                    return applied
                }
                report.stored += applied.stored
                report.duplicates += applied.duplicates
                report.failures += applied.failures
                token = page.hasMore ? page.paginationToken : nil
            } while token != nil
        }
        return report
    }
}
