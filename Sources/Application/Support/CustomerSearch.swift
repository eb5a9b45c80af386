import AppStore
import AppStoreAPI
import Entitlements
package import Foundation
package import JSON

/// `GET /v1/subscribers?query=`: finds the customer a support mail is about by whatever it
/// quotes — an appAccountToken, a transaction or original transaction id, an appTransactionId,
/// the order ID of Apple's receipt e-mail (looked up with Apple, then stored like a sync), or a
/// Google Play purchase token or order id (`GPA.…`).
package struct CustomerSearch: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let subscribers: SubscriberQueries
    let sync: SyncService?
    let pool: BlockingPool

    init(_ context: AppContext, subscribers: SubscriberQueries, sync: SyncService?) {
        app = context.app
        store = context.store
        pool = context.pool
        self.subscribers = subscribers
        self.sync = sync
    }

    /// One match: how the query matched, and the customer (a token, else one subscription).
    struct Match: Equatable {
        var matchedBy: String
        var environment: AppStoreEnvironment
        var appAccountToken: String?
        var originalTransactionId: String?

        /// The customer it found: a token, else one subscription.
        var customer: String { appAccountToken.map { "token:" + $0 } ?? "subscription:" + (originalTransactionId ?? "") }
    }

    /// The stored customers the text names; else, for what looks like an order ID, the ones Apple's
    /// Look Up Order ID finds (on the outbound pool; the database's work on the database pool).
    package func search(_ text: String, now: Date) async throws -> JSONObject {
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty, query.count <= 200 else { throw ServiceError.badRequest("query must have 1 to 200 characters") }
        var matches = try await pool.perform { try storedMatches(query) }
        var answer: JSONObject = ["query": .string(query)]
        if matches.isEmpty, Self.looksLikeOrderId(query), let sync {
            do {
                let found = try await sync.lookUpOrder(query)
                matches = try await pool.perform {
                    try found.flatMap { environment, originals in try originals.map { try customer("orderId", $0, environment) } }
                }
            } catch let error as AppStoreAPIError {
                answer["orderLookup"] = .string("Apple's Look Up Order ID failed: \(error.message)")
            }
        }
        let listed = matches
        answer["matches"] = try await pool.perform { .array(try listed.map { .object(try json($0, now: now)) }) }
        return answer
    }

    /// The customers whose stored facts the query names, each once.
    private func storedMatches(_ query: String) throws -> [Match] {
        var matches: [Match] = []
        func add(_ match: Match) { if !matches.contains(where: { $0.customer == match.customer }) { matches.append(match) } }
        for environment in subscribers.searchOrder {
            let name = environment.rawValue
            if let token = try? AppAccountToken.validated(query),
                try !store.facts(appId: app.id, environment: name, appAccountToken: token).isEmpty
                    || !store.grants(appId: app.id, environment: name, appAccountToken: token).isEmpty
                    || !store.linkTransfers(appId: app.id, environment: name, appAccountToken: token).isEmpty
                    || store.appDownloads(appId: app.id, appAccountToken: token).contains { $0.environment == name }
            {
                add(Match(matchedBy: "appAccountToken", environment: environment, appAccountToken: token))
            }
            if let facts = try store.facts(appId: app.id, environment: name, originalTransactionId: query) {
                add(try customer("originalTransactionId", facts.originalTransactionId, environment))
            }
            if let original = try store.originalTransactionId(appId: app.id, environment: name, transactionId: query),
                original != query
            {
                add(try customer("transactionId", original, environment))
            }
            for original in try store.originalTransactionIds(appId: app.id, environment: name, appTransactionId: query) {
                add(try customer("appTransactionId", original, environment))
            }
            for token in try store.appDownloadTokens(appId: app.id, environment: name, appTransactionId: query) {
                add(Match(matchedBy: "appTransactionId", environment: environment, appAccountToken: token))
            }
        }
        if app.googlePlay != nil {
            if let token = try? AppAccountToken.validated(query),
                let purchase = try store.playPurchases(appId: app.id, appAccountToken: token).first
            {
                add(
                    Match(
                        matchedBy: "appAccountToken", environment: AppStoreEnvironment(rawValue: purchase.environment),
                        appAccountToken: token))
            }
            let byToken = try store.playPurchase(appId: app.id, purchaseToken: query).map { ("purchaseToken", $0) }
            let byOrder =
                query.hasPrefix("GPA.") ? try store.playPurchase(appId: app.id, orderId: query).map { ("googleOrderId", $0) } : nil
            for (matchedBy, purchase) in [byToken, byOrder].compactMap({ $0 }) {
                guard let token = purchase.appAccountToken else { continue }
                add(Match(matchedBy: matchedBy, environment: AppStoreEnvironment(rawValue: purchase.environment), appAccountToken: token))
            }
        }
        return matches
    }

    /// The customer a stored subscription belongs to: its token when it is linked.
    private func customer(_ matchedBy: String, _ original: String, _ environment: AppStoreEnvironment) throws -> Match {
        let facts = try store.facts(appId: app.id, environment: environment.rawValue, originalTransactionId: original)
        return Match(
            matchedBy: matchedBy, environment: environment, appAccountToken: facts?.appAccountToken, originalTransactionId: original)
    }

    private func json(_ match: Match, now: Date) throws -> JSONObject {
        var object: JSONObject = ["matchedBy": .string(match.matchedBy), "environment": .string(match.environment.rawValue)]
        if let token = match.appAccountToken { object["appAccountToken"] = .string(token) }
        if let original = match.originalTransactionId { object["originalTransactionId"] = .string(original) }
        let subscriber =
            try match.appAccountToken.map { try subscribers.subscriber(appAccountToken: $0, environment: nil, at: now) }
            ?? match.originalTransactionId.map {
                try subscribers.subscriber(originalTransactionId: $0, environment: match.environment, at: now)
            }
        if let subscriber = subscriber ?? nil { object["subscriber"] = .object(subscriber) }
        return object
    }

    /// Apple's order IDs are 10 to 12 upper-case letters and digits (`MK5TTTVWJH`): only those are
    /// worth a call to Apple.
    static func looksLikeOrderId(_ text: String) -> Bool {
        (8...20).contains(text.count) && text.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
            && text.unicodeScalars.contains { ("A"..."Z").contains($0) }
    }
}
