package import AppStore
package import Entitlements
package import Foundation
import Instants
package import JSON

/// What each paywall sells (docs/OFFERINGS.md): the offering a placement shows a customer, chosen
/// by the placement's targeting rules over what Entitle knows of them, with the offers they may
/// not have left out; and the attributes the app sets on its customers for those rules.
package struct OfferingService: Sendable {
    /// What the app says of the device asking (the query of `GET …/offerings`).
    package struct Device: Sendable {
        package var store: String?
        package var country: String?
        package var platform: String?
        package var appVersion: String?
        package var environment: AppStoreEnvironment?

        package init(
            store: String? = nil, country: String? = nil, platform: String? = nil, appVersion: String? = nil,
            environment: AppStoreEnvironment? = nil
        ) {
            self.store = store
            self.country = country
            self.platform = platform
            self.appVersion = appVersion
            self.environment = environment
        }
    }

    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let subscribers: SubscriberQueries
    /// The offerings and placements as configured now (SIGHUP replaces them).
    package let catalog: OfferingCatalog
    /// Writes `EXPERIMENT_ENROLLED`.
    let eventWriter: AppEventWriter
    /// The app's experiments, read once a second at most.
    let experiments: ExperimentCache

    init(_ context: AppContext, subscribers: SubscriberQueries, eventWriter: AppEventWriter) {
        app = context.app
        store = context.store
        pool = context.pool
        self.subscribers = subscribers
        self.eventWriter = eventWriter
        experiments = ExperimentCache(app: context.app.id, store: context.store, clock: context.clock)
        catalog = OfferingCatalog(offerings: context.app.offerings, placements: context.app.placements)
    }

    /// `GET /v1/subscribers/{appAccountToken}/offerings?placement=`: the answer, made on the pool
    /// (no task: the read and the answer on one pool thread, as the subscriber answer is made).
    package func offering(
        appAccountToken: String, placement: String, device: Device, now: Date,
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        pool.run({ try offering(appAccountToken: appAccountToken, placement: placement, device: device, now: now) }, completion: completion)
    }

    /// The same answer, blocking (the pool's thread, tools).
    package func offering(appAccountToken: String, placement: String, device: Device, now: Date) throws -> JSONObject {
        let token = try AppAccountToken.validated(appAccountToken)
        let (configured, chosenPlacement) = try placed(placement)
        if let environment = device.environment { _ = try app.enabled(environment) }
        let (decision, held) = try decide(token, chosenPlacement, device: device, now: Milliseconds.since1970(now))
        var answer: JSONObject = ["placement": .string(placement)]
        if let offering = decision.offering.flatMap({ configured.offerings[$0] }) {
            answer["offering"] = .object(json(offering, held: held))
        } else {
            answer["offering"] = .null
        }
        answer["reason"] = .object(Self.json(decision.reason))
        return answer
    }

    /// The placement configured now, or 404 `UNKNOWN_PLACEMENT`.
    func placed(_ placement: String) throws(ServiceError) -> (OfferingCatalog.Contents, Placement) {
        let configured = catalog.current
        guard let chosen = configured.placements[placement] else {
            throw ServiceError(
                status: 404, code: "UNKNOWN_PLACEMENT",
                message: "no placement \"\(placement)\" (the app has \(configured.placements.keys.sorted().joined(separator: ", ")))")
        }
        return (configured, chosen)
    }

    /// The decision for the customer (blocking: the store's reads), and what they hold, for the
    /// offers' eligibility.
    func decide(
        _ token: String, _ placement: Placement, device: Device, now: Int64
    ) throws -> (OfferingDecision, OfferEligibility.Held) {
        let context = try targetingContext(token, device: device, now: now)
        let experiments = try self.experiments.experiments().filter { $0.placement == placement.id }
        let decision = OfferingDecision.decide(
            placement, context: context.targeting, experiments: experiments, assignments: context.assignments, token: token)
        return (decision, context.held)
    }

    static func json(_ reason: OfferingReason) -> JSONObject {
        var why: JSONObject = ["kind": .string(reason.kind)]
        switch reason {
        case .rule(let name): why["rule"] = .string(name)
        case .none(let rule?): why["rule"] = .string(rule)
        case .experiment(let id, let variant):
            why["experiment"] = .string(id)
            why["variant"] = .string(variant)
        case .shipped(let id): why["experiment"] = .string(id)
        case .default, .none(nil): break
        }
        return why
    }

    /// What targeting needs of the customer, from one subscriber read and their attributes.
    private func targetingContext(
        _ token: String, device: Device, now: Int64
    ) throws -> (targeting: TargetingContext, held: OfferEligibility.Held, assignments: [ExperimentAssignment]) {
        let spanned = device.environment.map { [$0] } ?? subscribers.searchOrder
        let read = try store.subscriber(appId: app.id, environments: spanned.map(\.rawValue), appAccountToken: token)
        let attributes = try store.attributes(appId: app.id, appAccountToken: token)
        let status = app.viewRules.evaluate(
            zip(spanned, read.environments).map { ($0, $1.facts) }, now: now, appAccountToken: token, promotional: read.grants,
            play: app.googlePlay == nil ? [] : read.playPurchases)
        let firstSeen = CustomerFirstSeen.instant(read, attributes: attributes)
        let targeting = TargetingContext(
            store: device.store, country: device.country?.uppercased(), platform: device.platform, appVersion: device.appVersion,
            environment: device.environment?.rawValue ?? read.environments.first(where: { !$0.facts.isEmpty })?.environment,
            state: CustomerLifecycle(status), daysSinceFirstSeen: firstSeen.map { max(0, (now - $0) / 86_400_000) } ?? 0,
            attributes: Dictionary(attributes.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }))
        return (targeting, OfferEligibility.Held(status, groupOf: { app.products[$0]?.subscriptionGroup }), read.assignments)
    }

    /// The package as the customer may have it: an offer the catalog's rule does not admit them
    /// to is left out.
    private func admitted(_ package: OfferingPackage, held: OfferEligibility.Held) -> OfferingPackage {
        package.admitting(
            appStoreOffer: { id in
                guard let offer = app.offers[id] else { return false }
                return held.admits(offer.eligibility, group: app.products[offer.productId]?.subscriptionGroup)
            },
            playOffer: { id in
                // A Play offer the catalog names follows the catalog's rule; another is Google's to refuse.
                guard let offer = app.offers.values.first(where: { $0.googlePlay?.offerId == id }) else { return true }
                return held.admits(offer.eligibility, group: app.products[offer.productId]?.subscriptionGroup)
            })
    }

    /// The offering as the answer gives it; with `held`, each package as the customer may have it.
    private func json(_ offering: Offering, held: OfferEligibility.Held?) -> JSONObject {
        let packages = offering.packages.map { package in held.map { admitted(package, held: $0) } ?? package }.map {
            package -> JSONValue in
            var item: JSONObject = ["id": .string(package.id)]
            if let appStore = package.appStore {
                var store: JSONObject = ["productId": .string(appStore.productId)]
                if let offerId = appStore.offerId, let offer = app.offers[offerId] {
                    store["offerId"] = .string(offerId)
                    store["offerIdentifier"] = .string(offer.offerIdentifier)
                }
                item["appStore"] = .object(store)
            }
            if let play = package.googlePlay {
                var store: JSONObject = ["productId": .string(play.productId), "basePlanId": .string(play.basePlanId)]
                if let offerId = play.offerId { store["offerId"] = .string(offerId) }
                item["googlePlay"] = .object(store)
            }
            return .object(item)
        }
        return ["id": .string(offering.id), "packages": .array(packages), "metadata": .object(offering.metadata)]
    }

    // MARK: - Attributes

    /// `POST /v1/subscribers/{appAccountToken}/attributes`: each name set to its value, or removed
    /// (null); the customer's attributes after.
    package func setAttributes(appAccountToken: String, changes: [String: String?], now: Date) async throws -> JSONObject {
        let token = try AppAccountToken.validated(appAccountToken)
        guard !changes.isEmpty else { throw ServiceError.badRequest("\"attributes\" names at least one attribute") }
        for (name, value) in changes {
            guard CustomerAttribute.isValidName(name) else {
                throw ServiceError.badRequest("\"\(name)\" is not an attribute name (1 to 64 of letters, digits, '_', '.', '-', '$')")
            }
            if let value, value.utf8.count > CustomerAttribute.maximumValueBytes {
                throw ServiceError.badRequest("the value of \"\(name)\" is over \(CustomerAttribute.maximumValueBytes) bytes")
            }
        }
        let at = Milliseconds.since1970(now)
        let stored = try await pool.perform { try store.attributes(appId: app.id, appAccountToken: token) }
        guard let after = CustomerAttribute.applying(changes, to: stored, at: at) else {
            throw ServiceError(
                status: 422, code: "TOO_MANY_ATTRIBUTES", message: "a customer has at most \(CustomerAttribute.maximumCount) attributes")
        }
        var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
        batch.attributes = (token, changes)
        batch.requestedAt = at
        batch.source = "attributes"
        try await store.record(batch)
        return ["attributes": .object(JSONObject(after.map { (key: $0.name, value: JSONValue.string($0.value)) }))]
    }
}

extension OfferingService {
    /// `GET /v1/offerings`: the app's offerings and placements as configured (for the console and
    /// for checking a configuration).
    package var configured: JSONObject {
        let configured = catalog.current
        let offerings = configured.offerings.values.sorted { $0.id < $1.id }.map { offering -> (key: String, value: JSONValue) in
            (key: offering.id, value: .object(json(offering, held: nil)))
        }
        let placements = configured.placements.values.sorted { $0.id < $1.id }.map { placement -> (key: String, value: JSONValue) in
            let rules = placement.rules.map { rule -> JSONValue in
                .object(["name": .string(rule.name), "offering": rule.offering.map(JSONValue.string) ?? .null])
            }
            return (
                key: placement.id,
                value: .object(["offering": placement.offering.map(JSONValue.string) ?? .null, "rules": .array(rules)])
            )
        }
        return ["offerings": .object(JSONObject(offerings)), "placements": .object(JSONObject(placements))]
    }
}
