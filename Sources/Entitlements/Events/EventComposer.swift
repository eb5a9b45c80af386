import AppStore
import JSON

/// Where an app's events go: an endpoint and the events and environments it takes.
package struct EventEndpoint: Sendable, Equatable {
    package var url: String
    /// Nil: every environment.
    package var environments: Set<String>?
    /// Nil: every event type.
    package var types: Set<String>?

    package init(url: String, environments: Set<String>?, types: Set<String>?) {
        self.url = url
        self.environments = environments
        self.types = types
    }

    /// Whether an event goes to this endpoint. A `TEST` goes everywhere: it checks the endpoint.
    package func accepts(type: String, environment: String) -> Bool {
        type == CustomerEvent.Kind.test.rawValue || ((environments?.contains(environment) ?? true) && (types?.contains(type) ?? true))
    }
}

/// One app's outbox events, made inside the write that stores their facts: the derivation rules
/// decide which events a change causes; each is rendered with the subscriber as it is after the
/// change (by the same rules as the subscriber answers) and addressed to the endpoints that take
/// it. CPU only; the clock and the ids are injected (tests fix them).
package struct EventComposer: EventWriting {
    package var appId: String
    package var rules: SubscriberViewRules
    package var endpoints: [EventEndpoint]
    /// Now, in epoch milliseconds.
    package var clock: @Sendable () -> Int64
    /// A fresh event id.
    package var newId: @Sendable () -> String
    package var retentionWindow: Int64?
    /// Whether the writer keeps the business figures (`metrics.enabled`).
    package var keepsMetrics = true

    package init(
        appId: String, rules: SubscriberViewRules, endpoints: [EventEndpoint], clock: @escaping @Sendable () -> Int64,
        newId: @escaping @Sendable () -> String
    ) {
        self.appId = appId
        self.rules = rules
        self.endpoints = endpoints
        self.clock = clock
        self.newId = newId
    }

    package var environments: [String] { rules.searchOrder.map(\.rawValue) }

    package func events(for change: FactChange, firstSequence: Int64) -> [OutboxEvent] {
        let derived = CustomerEventDerivation.events(change, billingRetryGrantsAccess: rules.billingRetryGrantsAccess)
        guard !derived.isEmpty else { return [] }
        let createdAt = clock()
        var views: [String: [UInt8]] = [:]
        return derived.enumerated().map { index, event in
            var subscriber: [UInt8]?
            if let original = event.originalTransactionId, let facts = change.subscribers[original] {
                if views[original] == nil { views[original] = view(of: facts, at: createdAt) }
                subscriber = views[original]
            } else if event.grant != nil, let facts = change.grantSubscriber {
                subscriber = view(of: facts, at: createdAt)
            } else if let play = event.play, let facts = change.playSubscribers[play.purchaseToken] {
                subscriber = view(of: facts, at: createdAt)
            } else if event.consent != nil || event.refundRequest != nil || event.retention != nil || event.enrollment != nil,
                let facts = change.customerSubscriber
            {
                subscriber = view(of: facts, at: createdAt)
            }
            let token =
                event.grant?.appAccountToken ?? event.play?.appAccountToken ?? event.consent?.appAccountToken
                ?? event.refundRequest?.appAccountToken ?? event.retention?.appAccountToken ?? event.enrollment?.appAccountToken
                ?? event.originalTransactionId.flatMap { change.subscribers[$0]?.appAccountToken }
            let id = event.kind == .test ? change.batch.webhookTestId ?? newId() : newId()
            let sequence = firstSequence + Int64(index)
            let body = EventBody.render(
                event, id: id, sequence: sequence, appId: appId, createdAt: createdAt, appAccountToken: token,
                entitlements: entitlements(of: event), source: change.batch, subscriber: subscriber)
            return OutboxEvent(
                id: id, appId: appId, sequence: sequence, type: event.kind.rawValue, environment: event.environment,
                originalTransactionId: event.originalTransactionId, appAccountToken: token, occurredAt: event.occurredAt,
                createdAt: createdAt, body: String(decoding: body, as: UTF8.self),
                endpoints: endpoints.filter { $0.accepts(type: event.kind.rawValue, environment: event.environment) }.map(\.url))
        }
    }

    /// The subscriber as the lookup answers it, serialized.
    private func view(of facts: SubscriberFacts, at now: Int64) -> [UInt8] {
        var view = JSONObjectWriter()
        rules.write(view: facts, at: now, into: &view)
        return view.finish()
    }

    /// The entitlements the event's product (or grant) confers.
    private func entitlements(of event: CustomerEvent) -> [String] {
        if let grant = event.grant { return [grant.entitlement] }
        if let play = event.play {
            return rules.products.catalogId(playProduct: play.productId, basePlanId: play.basePlanId).flatMap {
                rules.products[$0]?.entitlements
            } ?? []
        }
        return event.transaction.map { rules.products[$0.productId]?.entitlements ?? [] } ?? []
    }
}
