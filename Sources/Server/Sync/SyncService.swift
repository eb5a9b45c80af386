import AppStore
import AppStoreAPI
import Entitlements
import Foundation
import JSON

/// What a sync or back-fill did, item by item: nothing that failed is dropped silently (P-09).
public struct SyncReport: Sendable {
    public var environment: String?
    public var stored = 0
    public var duplicates = 0
    public var revision: String?
    public var failures: [(item: String, status: String, reason: String)] = []

    public var json: JSONObject {
        var object: JSONObject = ["stored": .int(Int64(stored))]
        if let environment { object["environment"] = .string(environment) }
        if duplicates > 0 { object["duplicates"] = .int(Int64(duplicates)) }
        if let revision { object["revision"] = .string(revision) }
        object["failures"] = .array(failures.map { .object(["item": .string($0.item), "status": .string($0.status), "reason": .string($0.reason)]) })
        return object
    }
}

/// Pulls the truth from the App Store Server API (APPSTORE.md §5): a customer's statuses and
/// transaction history (incrementally, from the last stored `revision`), and missed notifications
/// (Get Notification History). Every signed item is verified and stored through the same path as
/// notifications. Calls wait on the network: run them off the event loops.
public struct SyncService: Sendable {
    public let subscribers: SubscriberService
    public let clients: [String: AppStoreServerAPIClient]
    public let retry: RetryPolicy

    public enum SetupError: Error, CustomStringConvertible {
        case noIssuerId(String)
        public var description: String {
            switch self {
            case .noIssuerId(let app): "app \(app): the App Store Server API needs signingKey.issuerId"
            }
        }
    }

    /// One client per enabled Production/Sandbox environment, with the app's key and issuer ID.
    public init(subscribers: SubscriberService, retry: RetryPolicy = RetryPolicy()) throws {
        let app = subscribers.app
        guard let issuerId = app.signingKey.issuerId else { throw SetupError.noIssuerId(app.id) }
        let tokens = BearerTokenFactory(privateKey: app.signingKey.privateKey, keyId: app.signingKey.keyId,
                                        issuerId: issuerId, bundleId: app.bundleId)
        var clients: [String: AppStoreServerAPIClient] = [:]
        for environment in app.environments where environment == "Production" || environment == "Sandbox" {
            let url = environment == "Production" ? app.serverAPI.productionURL : app.serverAPI.sandboxURL
            clients[environment] = try AppStoreServerAPIClient(environment: environment, tokens: tokens, baseURL: url,
                                                               caFile: app.serverAPI.caFile)
        }
        self.subscribers = subscribers
        self.clients = clients
        self.retry = retry
    }

    private var store: any FactStore { subscribers.store }
    private var app: AppConfiguration { subscribers.app }

    // MARK: - Customers

    /// Syncs the subscription `transactionId` belongs to. The environment is the stored one when
    /// known; otherwise Production, then Sandbox when Apple does not know the id (§5.8).
    public func syncTransaction(_ transactionId: String) throws -> SyncReport {
        var candidates = clients.keys.sorted { ($0 == "Production" ? 0 : 1) < ($1 == "Production" ? 0 : 1) }
        if let known = try candidates.first(where: { try subscription(of: transactionId, environment: $0) != nil }) {
            candidates = [known]
        }
        var lastError: AppStoreAPIError?
        for environment in candidates {
            do {
                return try sync(transactionId, environment: environment)
            } catch let error as AppStoreAPIError where error.apiCode == .transactionIdNotFound {
                lastError = error
            }
        }
        throw lastError ?? AppStoreAPIError.decoding("no App Store Server API environment is enabled", environment: "none")
    }

    /// Syncs every subscription linked to the token.
    public func syncSubscriber(appAccountToken: String) throws -> SyncReport {
        var report = SyncReport()
        for environment in clients.keys.sorted() {
            for facts in try store.facts(appId: app.id, environment: environment, appAccountToken: appAccountToken.lowercased()) {
                let one = try sync(facts.originalTransactionId, environment: environment)
                report.environment = one.environment
                report.stored += one.stored
                report.failures += one.failures
            }
        }
        return report
    }

    private func sync(_ transactionId: String, environment: String) throws -> SyncReport {
        guard let client = clients[environment] else { throw AppStoreAPIError.decoding("\(environment) is not enabled", environment: environment) }
        let original = try subscription(of: transactionId, environment: environment)
        let since = try original.flatMap { try store.syncRevision(appId: app.id, environment: environment, originalTransactionId: $0) }
        let statuses = try retry.run { () throws(AppStoreAPIError) in try client.getAllSubscriptionStatuses(transactionId) }
        let history = try retry.run { () throws(AppStoreAPIError) in try client.getAllTransactionHistory(transactionId, since: since) }
        var report = SyncReport(environment: environment, revision: history.revision)
        var batch = FactBatch(appId: app.id, environment: environment)
        let items = history.signedTransactions + statuses.lastTransactions.compactMap(\.signedTransactionInfo)
        for jws in items {
            let (_, result) = subscribers.verification.verifiedTransaction(jws, environment: environment)
            switch result {
            case .valid(let payload):
                if let record = TransactionRecord(payload) { batch.transactions.append((record, jws)) }
            case .invalid(let failure):
                report.failures.append((SignedPayloadInspection.unverifiedPayload(jws)?["transactionId"]?.stringValue ?? "transaction",
                                        failure.status.rawValue, failure.reason))
            }
        }
        let subscription = original ?? batch.transactions.first { $0.record.transactionId == transactionId }?.record.originalTransactionId
            ?? batch.transactions.first?.record.originalTransactionId
        if let subscription, let revision = history.revision { batch.syncRevision = (subscription, revision) }
        report.stored = batch.transactions.count
        _ = try store.apply(batch)
        // One renewal info per subscription; each in its own batch (the newest signedDate wins).
        for jws in statuses.lastTransactions.compactMap(\.signedRenewalInfo) {
            let (_, result) = subscribers.verification.verifiedRenewalInfo(jws, environment: environment)
            switch result {
            case .valid(let payload):
                guard let record = RenewalRecord(payload) else { continue }
                var renewal = FactBatch(appId: app.id, environment: environment)
                renewal.renewal = (record, jws)
                _ = try store.apply(renewal)
            case .invalid(let failure):
                report.failures.append(("renewal info", failure.status.rawValue, failure.reason))
            }
        }
        return report
    }

    /// The stored subscription `id` names: a stored transaction's, or `id` itself when it is an
    /// original transaction id with stored facts.
    public func subscription(of id: String, environment: String) throws -> String? {
        if let original = try store.originalTransactionId(appId: app.id, environment: environment, transactionId: id) { return original }
        return try store.facts(appId: app.id, environment: environment, originalTransactionId: id) == nil ? nil : id
    }

    // MARK: - Notifications

    /// Walks Get Notification History for `[start, end)` (epoch ms) in every enabled environment and
    /// applies what is missing, exactly as the webhook would (stored notifications are duplicates).
    public func backfill(start: Int64, end: Int64) throws -> SyncReport {
        var report = SyncReport()
        for (environment, client) in clients.sorted(by: { $0.key < $1.key }) {
            var token: String?
            repeat {
                let page = try retry.run { () throws(AppStoreAPIError) in
                    try client.getNotificationHistory(startDate: start, endDate: end, paginationToken: token)
                }
                for payload in page.signedPayloads {
                    do {
                        let (batch, _) = try subscribers.prepareNotification(payload, claimedEnvironment: environment)
                        if try store.apply(batch) == .applied { report.stored += 1 } else { report.duplicates += 1 }
                    } catch let error as SubscriberService.IngestError {
                        if case .verification(let failure) = error {
                            report.failures.append(("notification", failure.status.rawValue, failure.reason))
                        } else {
                            report.failures.append(("notification", "INVALID_JWT_FORMAT", "\(error)"))
                        }
                    }
                }
                token = page.hasMore ? page.paginationToken : nil
            } while token != nil
        }
        return report
    }
}
