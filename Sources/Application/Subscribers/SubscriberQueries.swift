package import AppStore
package import Entitlements
package import Foundation
import Instants
package import JSON

/// "What does this customer have": stored facts of one app read and evaluated at an instant.
///
/// The throwing methods block on the store (the pool, the CLI); the ones with a completion run
/// them on the blocking pool, so callers on an event loop never wait.
package struct SubscriberQueries: Sendable {
    package let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool

    init(_ context: AppContext) {
        app = context.app
        store = context.store
        pool = context.pool
    }

    /// The customer linked to `appAccountToken`, nil when nothing is stored for them.
    ///
    /// Without `environment`, an app that enables several environments answers for all of them
    /// at once (App Review and TestFlight buy in Sandbox against the production server): every
    /// entry says its `environment` and `isSandbox`, the answer lists the `environments` where the
    /// customer has facts, and the best grant of the environments the app's `sandboxAccess`
    /// permits decides each entitlement. Facts stay separate per environment; only the view spans
    /// them. With `environment` (or in a one-environment app) the answer is that environment's.
    package func subscriber(appAccountToken: String, environment: AppStoreEnvironment?, at now: Date) throws -> JSONObject? {
        var answer = JSONObject()
        return try subscriber(appAccountToken: appAccountToken, environment: environment, at: now, into: &answer) ? answer : nil
    }

    /// The same answer, serialized: `GET /v1/subscribers/{appAccountToken}` writes it straight into
    /// bytes, without a tree.
    package func serializedSubscriber(appAccountToken: String, environment: AppStoreEnvironment?, at now: Date) throws -> [UInt8]? {
        var answer = JSONObjectWriter()
        return try subscriber(appAccountToken: appAccountToken, environment: environment, at: now, into: &answer) ? answer.finish() : nil
    }

    /// Writes the answer into `answer`; false (nothing written) when nothing is stored for the token.
    private func subscriber<Answer: JSONObjectBuilder>(
        appAccountToken: String, environment: AppStoreEnvironment?, at now: Date, into answer: inout Answer
    ) throws -> Bool {
        let token = try AppAccountToken.validated(appAccountToken)
        let single = environment != nil || app.environments.count == 1
        let spanned = single ? [try chosen(environment)] : searchOrder
        // Everything at once: one statement on PostgreSQL.
        let read = try store.subscriber(appId: app.id, environments: spanned.map(\.rawValue), appAccountToken: token)
        // Google Play purchases of the customer, in whichever environments they are.
        let play = app.googlePlay == nil ? [] : read.playPurchases
        let instant = Milliseconds.since1970(now)
        if single {
            let environment = spanned[0]
            let facts = read.environments.first?.facts ?? []
            let plays = play.filter { $0.environment == environment.rawValue }
            let downloaded = read.downloads.contains { $0.environment == environment.rawValue }
            // A token whose subscription moved away still answers, with the move; one that only
            // posted its download or was enrolled in an experiment, with that.
            guard
                !facts.isEmpty || !read.grants.isEmpty || !plays.isEmpty || !read.transfers.isEmpty || downloaded
                    || !read.assignments.isEmpty
            else {
                return false
            }
            let status = rules.evaluate(
                facts, environment: environment, now: instant, appAccountToken: token, promotional: read.grants, play: plays)
            SubscriberView.write(status, appAccountToken: token, environment: environment, into: &answer)
            SubscriberViewRules.writeCustomerParts(read, into: &answer)
            return true
        }
        let found = zip(spanned, read.environments).filter { environment, span in
            !span.facts.isEmpty || read.grants.contains { $0.environment == environment.rawValue }
                || play.contains { $0.environment == environment.rawValue }
        }.map { ($0.0, $0.1.facts) }
        if found.isEmpty {
            let moved = spanned.filter { environment in
                read.transfers.contains { $0.environment == environment.rawValue }
                    || read.downloads.contains { $0.environment == environment.rawValue }
            }
            guard !moved.isEmpty || !read.assignments.isEmpty else { return false }
            SubscriberView.write(
                SubscriberStatus(), appAccountToken: token, environments: moved.isEmpty ? [spanned[0]] : moved, into: &answer)
            SubscriberViewRules.writeCustomerParts(read, into: &answer)
            return true
        }
        let status = rules.evaluate(found.map { ($0.0, $0.1) }, now: instant, appAccountToken: token, promotional: read.grants, play: play)
        SubscriberView.write(status, appAccountToken: token, environments: found.map(\.0), into: &answer)
        SubscriberViewRules.writeCustomerParts(read, into: &answer)
        return true
    }

    /// The subscriber a subscription belongs to (its whole subscriber when it is linked).
    /// Without `environment`, every enabled environment is searched (Production first): an
    /// original transaction id belongs to one environment, and the caller need not know which.
    package func subscriber(originalTransactionId: String, environment: AppStoreEnvironment?, at now: Date) throws -> JSONObject? {
        let candidates = environment == nil ? searchOrder : [try chosen(environment)]
        for candidate in candidates {
            guard
                let facts = try store.facts(
                    appId: app.id, environment: candidate.rawValue, originalTransactionId: originalTransactionId)
            else { continue }
            if let token = facts.appAccountToken { return try subscriber(appAccountToken: token, environment: environment, at: now) }
            return render([facts], appAccountToken: nil, environment: candidate, now: now)
        }
        return nil
    }

    /// The customer of an app download (`appTransactionId`): every subscription and purchase whose
    /// transactions or renewal info carry it, in every enabled environment (or `environment`), for
    /// customers who bought before the app set an appAccountToken or redeemed an offer code outside it.
    package func subscriber(appTransactionId: String, environment: AppStoreEnvironment?, at now: Date) throws -> JSONObject? {
        let candidates = environment == nil ? searchOrder : [try chosen(environment)]
        var found: [(AppStoreEnvironment, [SubscriptionFacts])] = []
        var tokens: [String] = []
        for candidate in candidates {
            let facts = try store.originalTransactionIds(appId: app.id, environment: candidate.rawValue, appTransactionId: appTransactionId)
                .compactMap { try store.facts(appId: app.id, environment: candidate.rawValue, originalTransactionId: $0) }
            if !facts.isEmpty { found.append((candidate, facts)) }
            tokens += try store.appDownloadTokens(appId: app.id, environment: candidate.rawValue, appTransactionId: appTransactionId)
        }
        guard !found.isEmpty || !tokens.isEmpty else { return nil }
        let status = rules.evaluate(found.map { ($0.0, $0.1) }, now: Milliseconds.since1970(now))
        var answer = SubscriberView.render(status, appAccountToken: nil, environments: found.map(\.0))
        answer["appTransactionId"] = .string(appTransactionId)
        // The customers whose app posted this download (`POST /v1/app-transactions`).
        if !tokens.isEmpty { answer["appAccountTokens"] = .array(tokens.map(JSONValue.string)) }
        return answer
    }

    package func subscriber(
        appTransactionId: String, environment: AppStoreEnvironment?, at now: Date,
        completion: @escaping @Sendable (Result<JSONObject?, any Error>) -> Void
    ) {
        pool.run({ try subscriber(appTransactionId: appTransactionId, environment: environment, at: now) }, completion: completion)
    }

    /// The enabled environments, Production first.
    var searchOrder: [AppStoreEnvironment] { rules.searchOrder }

    /// The app's view rules (the same ones its events are made with).
    var rules: SubscriberViewRules { app.viewRules }

    package func serializedSubscriber(
        appAccountToken: String, environment: AppStoreEnvironment?, at now: Date,
        completion: @escaping @Sendable (Result<[UInt8]?, any Error>) -> Void
    ) {
        pool.run({ try serializedSubscriber(appAccountToken: appAccountToken, environment: environment, at: now) }, completion: completion)
    }

    package func subscriber(
        appAccountToken: String, environment: AppStoreEnvironment?, at now: Date,
        completion: @escaping @Sendable (Result<JSONObject?, any Error>) -> Void
    ) {
        pool.run({ try subscriber(appAccountToken: appAccountToken, environment: environment, at: now) }, completion: completion)
    }

    package func subscriber(
        originalTransactionId: String, environment: AppStoreEnvironment?, at now: Date,
        completion: @escaping @Sendable (Result<JSONObject?, any Error>) -> Void
    ) {
        pool.run(
            { try subscriber(originalTransactionId: originalTransactionId, environment: environment, at: now) },
            completion: completion)
    }

    /// The subscriber a transaction (any of its ids) belongs to in `environment`.
    package func subscriber(transactionId: String, environment: AppStoreEnvironment, at now: Date) throws -> JSONObject? {
        guard let original = try subscription(of: transactionId, in: environment) else { return nil }
        return try subscriber(originalTransactionId: original, environment: environment, at: now)
    }

    /// The notification audit trail, newest first.
    package func notifications(
        limit: Int, before: Int64?,
        completion: @escaping @Sendable (Result<[StoredNotification], any Error>) -> Void
    ) {
        pool.run({ try store.notifications(appId: app.id, limit: limit, before: before) }, completion: completion)
    }

    // MARK: - History for offers

    /// The environment an offer request is about, so eligibility is decided on the history of the
    /// environment the purchase will happen in (App Review and TestFlight buy in Sandbox): the
    /// request's own `environment` (StoreKit's `AppTransaction.environment`), else the stored
    /// environment of its `transactionId`, else the one environment where the customer has facts,
    /// else Production (or the app's first environment when Production is not enabled).
    func purchaseEnvironment(
        requested: AppStoreEnvironment?, appAccountToken: String?,
        transactionId: String?
    ) throws -> AppStoreEnvironment {
        if let requested { return try app.enabled(requested) }
        if let transactionId {
            for environment in searchOrder where try subscription(of: transactionId, in: environment) != nil {
                return environment
            }
        }
        if let appAccountToken {
            let withFacts = try searchOrder.filter {
                try !store.facts(appId: app.id, environment: $0.rawValue, appAccountToken: appAccountToken).isEmpty
            }
            if withFacts.count == 1 { return withFacts[0] }
        }
        return app.defaultEnvironment
    }

    /// The stored subscriptions of the customer a request names, in `environment`: those linked
    /// to its token, plus the subscription its transaction id belongs to.
    func customerFacts(
        appAccountToken: String?, transactionId: String?,
        in environment: AppStoreEnvironment
    ) throws -> [SubscriptionFacts] {
        var facts: [SubscriptionFacts] = []
        if let token = appAccountToken {
            facts = try store.facts(appId: app.id, environment: environment.rawValue, appAccountToken: token)
        }
        if let transactionId, let original = try subscription(of: transactionId, in: environment),
            !facts.contains(where: { $0.originalTransactionId == original }),
            let found = try store.facts(appId: app.id, environment: environment.rawValue, originalTransactionId: original)
        {
            facts.append(found)
        }
        return facts
    }

    /// The customer's status at `now` in `environment` (promotional-offer rules).
    func status(
        appAccountToken: String?, transactionId: String?, in environment: AppStoreEnvironment,
        now: Date
    ) throws -> SubscriberStatus {
        evaluate(
            try customerFacts(appAccountToken: appAccountToken, transactionId: transactionId, in: environment),
            environment: environment, now: now)
    }

    /// The stored subscription `id` names in `environment`: a stored transaction's, or `id` itself
    /// when it is an original transaction id with stored facts.
    func subscription(of id: String, in environment: AppStoreEnvironment) throws -> String? {
        if let original = try store.originalTransactionId(appId: app.id, environment: environment.rawValue, transactionId: id) {
            return original
        }
        return try store.facts(appId: app.id, environment: environment.rawValue, originalTransactionId: id) == nil ? nil : id
    }

    // MARK: - Evaluation

    private func chosen(_ environment: AppStoreEnvironment?) throws(ServiceError) -> AppStoreEnvironment {
        guard let environment else { return app.defaultEnvironment }
        return try app.enabled(environment)
    }

    private func evaluate(
        _ facts: [SubscriptionFacts], environment: AppStoreEnvironment, now: Date, appAccountToken: String? = nil,
        promotional: [PromotionalGrant] = [], play: [PlayPurchase] = []
    ) -> SubscriberStatus {
        rules.evaluate(
            facts, environment: environment, now: Milliseconds.since1970(now), appAccountToken: appAccountToken,
            promotional: promotional, play: play)
    }

    private func render(
        _ facts: [SubscriptionFacts], appAccountToken: String?, environment: AppStoreEnvironment,
        now: Date, promotional: [PromotionalGrant] = [], play: [PlayPurchase] = []
    ) -> JSONObject {
        rules.render(
            facts, appAccountToken: appAccountToken, environment: environment, now: Milliseconds.since1970(now),
            promotional: promotional, play: play)
    }
}
