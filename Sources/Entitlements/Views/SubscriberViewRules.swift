package import AppStore
import Instants
package import JSON

/// What an app's subscriber answer depends on besides the facts: its enabled environments, its
/// catalog, whether billing retry keeps access, and who gets access from Sandbox purchases. The
/// answers of `GET /v1/subscribers/…` and the `subscriber` of every event are made by these
/// rules, so they cannot differ.
package struct SubscriberViewRules: Sendable {
    /// The enabled environments, in the configuration's order.
    package var environments: [AppStoreEnvironment]
    package var products: [String: CatalogProduct]
    package var billingRetryGrantsAccess: Bool
    package var sandboxAccess: SandboxAccess

    package init(
        environments: [AppStoreEnvironment], products: [String: CatalogProduct], billingRetryGrantsAccess: Bool,
        sandboxAccess: SandboxAccess
    ) {
        self.environments = environments
        self.products = products
        self.billingRetryGrantsAccess = billingRetryGrantsAccess
        self.sandboxAccess = sandboxAccess
    }

    /// The environment answers are about when a request names none: Production when enabled.
    package var defaultEnvironment: AppStoreEnvironment {
        environments.contains(.production) ? .production : environments.first ?? .production
    }

    /// The enabled environments, Production first.
    package var searchOrder: [AppStoreEnvironment] { AppStoreEnvironment.all.filter(environments.contains) }

    /// Whether an environment's grants count for this customer: Sandbox ones as `sandboxAccess` says.
    package func grantsAccess(_ appAccountToken: String?) -> @Sendable (String) -> Bool {
        let sandboxAccess = sandboxAccess
        return { environment in
            environment != AppStoreEnvironment.sandbox.rawValue || sandboxAccess.grantsAccess(appAccountToken: appAccountToken)
        }
    }

    /// The customer's status at `now` over the environments given.
    package func evaluate(
        _ spans: [(environment: AppStoreEnvironment, facts: [SubscriptionFacts])], now: Int64, appAccountToken: String? = nil,
        promotional: [PromotionalGrant] = [], play: [PlayPurchase] = []
    ) -> SubscriberStatus {
        SubscriberEvaluation.evaluate(
            spans.map { ($0.environment.rawValue, $0.facts) }, now: now, products: products,
            billingRetryGrantsAccess: billingRetryGrantsAccess, promotional: promotional, play: play,
            grantsAccess: grantsAccess(appAccountToken))
    }

    /// The customer's status in one environment at `now`.
    package func evaluate(
        _ facts: [SubscriptionFacts], environment: AppStoreEnvironment, now: Int64, appAccountToken: String? = nil,
        promotional: [PromotionalGrant] = [], play: [PlayPurchase] = []
    ) -> SubscriberStatus {
        evaluate([(environment, facts)], now: now, appAccountToken: appAccountToken, promotional: promotional, play: play)
    }

    /// The answer for one environment.
    package func render(
        _ facts: [SubscriptionFacts], appAccountToken: String?, environment: AppStoreEnvironment, now: Int64,
        promotional: [PromotionalGrant] = [], play: [PlayPurchase] = []
    ) -> JSONObject {
        SubscriberView.render(
            evaluate(facts, environment: environment, now: now, appAccountToken: appAccountToken, promotional: promotional, play: play),
            appAccountToken: appAccountToken, environment: environment)
    }

    /// The answer a subscriber lookup gives, from facts already read: events carry it, made inside
    /// the write that stores them.
    package func view(of subscriber: SubscriberFacts, at now: Int64) -> JSONObject {
        var answer = JSONObject()
        write(view: subscriber, at: now, into: &answer)
        return answer
    }

    package func write<Object: JSONObjectBuilder>(view subscriber: SubscriberFacts, at now: Int64, into answer: inout Object) {
        let found = subscriber.environments.filter { span in
            !span.facts.isEmpty || subscriber.grants.contains { $0.environment == span.environment }
                || subscriber.playPurchases.contains { $0.environment == span.environment }
        }.map { (AppStoreEnvironment(rawValue: $0.environment), $0.facts) }
        if environments.count == 1 || subscriber.appAccountToken == nil || found.isEmpty {
            let environment = found.first?.0 ?? defaultEnvironment
            let status = evaluate(
                found.first?.1 ?? [], environment: environment, now: now, appAccountToken: subscriber.appAccountToken,
                promotional: subscriber.grants.filter { $0.environment == environment.rawValue },
                play: subscriber.playPurchases.filter { $0.environment == environment.rawValue })
            SubscriberView.write(status, appAccountToken: subscriber.appAccountToken, environment: environment, into: &answer)
        } else {
            let status = evaluate(
                found.map { ($0.0, $0.1) }, now: now, appAccountToken: subscriber.appAccountToken, promotional: subscriber.grants,
                play: subscriber.playPurchases)
            SubscriberView.write(status, appAccountToken: subscriber.appAccountToken, environments: found.map(\.0), into: &answer)
        }
        Self.writeCustomerParts(subscriber, into: &answer)
    }

    /// What follows the status in every subscriber answer, in this order: the download of the
    /// environments the read spanned, the experiments, the moves (the last member).
    package static func writeCustomerParts<Object: JSONObjectBuilder>(_ subscriber: SubscriberFacts, into answer: inout Object) {
        writeDownload(subscriber.downloads, spanning: subscriber.environments.map(\.environment), into: &answer)
        writeExperiments(subscriber.assignments, into: &answer)
        writeTransfers(subscriber.transfers, into: &answer)
    }

    /// `"appTransaction"`: the customer's app download (`AppDownload`) in the first of `environments`
    /// (the view's order: Production first) that has one.
    package static func writeDownload<Object: JSONObjectBuilder>(
        _ downloads: [AppDownload], spanning environments: [String], into answer: inout Object
    ) {
        guard let download = environments.lazy.compactMap({ environment in downloads.first { $0.environment == environment } }).first
        else { return }
        answer.object("appTransaction") { item in
            item.set("appTransactionId", download.appTransactionId)
            item.set("environment", download.environment)
            item.set("originalApplicationVersion", ifPresent: download.originalApplicationVersion)
            if let date = download.originalPurchaseDate { Timestamps.set(&item, "originalPurchaseDate", date) }
            item.set("originalPlatform", ifPresent: download.originalPlatform)
            Timestamps.set(&item, "postedAt", download.postedAt)
        }
    }

    /// `"experiments"`: the experiments the customer is enrolled in (docs/EXPERIMENTS.md), in
    /// enrollment order: on the subscriber answer and so on every event of theirs.
    package static func writeExperiments<Object: JSONObjectBuilder>(_ assignments: [ExperimentAssignment], into answer: inout Object) {
        guard !assignments.isEmpty else { return }
        answer.list("experiments") { list in
            for assignment in assignments {
                list.object { item in
                    item.set("id", assignment.experiment)
                    item.set("variant", assignment.variant)
                    item.set("placement", assignment.placement)
                    item.set("offering", assignment.offering)
                    Timestamps.set(&item, "enrolledAt", assignment.enrolledAt)
                }
            }
        }
    }

    /// `"transfers"`: subscriptions moved into or out of this token (`transferPolicy: transfer`),
    /// the answer's last member.
    package static func writeTransfers<Object: JSONObjectBuilder>(
        _ moves: [(environment: String, transfer: LinkTransfer)], into answer: inout Object
    ) {
        guard !moves.isEmpty else { return }
        answer.list("transfers") { list in
            for (environment, move) in moves {
                list.object { item in
                    item.set("originalTransactionId", move.originalTransactionId)
                    item.set("from", move.from)
                    item.set("to", move.to)
                    item.set("environment", environment)
                    Timestamps.set(&item, "at", move.at)
                }
            }
        }
    }
}
