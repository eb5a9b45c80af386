/// One stored event (the outbox row): what `GET /v1/events` lists and webhooks deliver. `body`
/// is the JSON document exactly as delivered, so every redelivery sends the same bytes.
package struct OutboxEvent: Sendable, Equatable {
    package var id: String
    package var appId: String
    /// Per app, strictly increasing in commit order (assigned by the store).
    package var sequence: Int64
    package var type: String
    package var environment: String
    package var originalTransactionId: String?
    package var appAccountToken: String?
    package var occurredAt: Int64
    package var createdAt: Int64
    package var body: String
    /// The webhook endpoints (URLs) it is to be delivered to; not stored with the event.
    package var endpoints: [String]

    package init(
        id: String, appId: String, sequence: Int64, type: String, environment: String, originalTransactionId: String?,
        appAccountToken: String?, occurredAt: Int64, createdAt: Int64, body: String, endpoints: [String] = []
    ) {
        self.id = id
        self.appId = appId
        self.sequence = sequence
        self.type = type
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.appAccountToken = appAccountToken
        self.occurredAt = occurredAt
        self.createdAt = createdAt
        self.body = body
        self.endpoints = endpoints
    }
}

/// Turns a stored change into outbox events, inside the transaction that stores the batch (so an
/// acknowledged fact never lacks its events). The application implements it: it knows the
/// catalog, the subscriber view and the configured endpoints.
package protocol EventWriting: Sendable {
    /// The environments a subscriber view spans (the app's enabled ones).
    var environments: [String] { get }
    /// The events the change causes, numbered from `firstSequence` in order, with their endpoints.
    func events(for change: FactChange, firstSequence: Int64) -> [OutboxEvent]
    /// How long after a retention answer a save is attributed to it, in milliseconds; nil when
    /// the app answers no retention requests (the writer then reads none).
    var retentionWindow: Int64? { get }
    /// Whether the writer keeps the business figures in the facts' commits (docs/METRICS.md).
    var keepsMetrics: Bool { get }
}

extension EventWriting {
    package var retentionWindow: Int64? { nil }
    package var keepsMetrics: Bool { true }
}

/// A notification to pass on byte for byte to the developer's previous handler.
package struct ForwardedNotification: Sendable, Equatable {
    package var url: String
    package var body: String

    package init(url: String, body: String) {
        self.url = url
        self.body = body
    }
}

/// One POST to make: an event to a webhook endpoint, or a notification forwarded.
package struct WebhookDelivery: Sendable, Equatable {
    /// The order deliveries are listed in, on every store: newest first, and of those made at one
    /// instant (one event fans out to every endpoint at once) the last made first, so the order
    /// is total. The SQL stores say it as `ORDER BY created_at DESC, id DESC` (ids are numbers).
    package static func listedBefore(_ a: WebhookDelivery, _ b: WebhookDelivery) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt > b.createdAt : (Int64(a.id) ?? 0) > (Int64(b.id) ?? 0)
    }

    package enum Kind: String, Sendable { case event, forward }
    package enum Status: String, Sendable, CaseIterable { case pending, delivered, failed }

    package var id: String
    package var appId: String
    package var kind: Kind
    /// The event delivered (nil for a forwarded notification).
    package var eventId: String?
    package var eventType: String?
    package var endpoint: String
    package var status: Status
    package var attempts: Int
    /// When it is due next (pending), or was last tried.
    package var nextAt: Int64
    package var createdAt: Int64
    /// Retries end (the delivery fails) once this much time has passed since it.
    package var windowStart: Int64
    package var lastStatus: Int?
    package var lastError: String?
    package var deliveredAt: Int64?
    /// What to POST; filled by claims (listings leave it empty).
    package var body: String

    package init(
        id: String, appId: String, kind: Kind, eventId: String?, eventType: String?, endpoint: String, status: Status,
        attempts: Int, nextAt: Int64, createdAt: Int64, windowStart: Int64, lastStatus: Int? = nil, lastError: String? = nil,
        deliveredAt: Int64? = nil, body: String = ""
    ) {
        self.id = id
        self.appId = appId
        self.kind = kind
        self.eventId = eventId
        self.eventType = eventType
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts
        self.nextAt = nextAt
        self.createdAt = createdAt
        self.windowStart = windowStart
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.deliveredAt = deliveredAt
        self.body = body
    }
}

/// How one attempt ended.
package struct DeliveryOutcome: Sendable, Equatable {
    package enum Result: Sendable, Equatable {
        case delivered(at: Int64)
        /// Try again at the instant given.
        case retry(at: Int64)
        /// The retry window is over: the delivery is dead.
        case failed(at: Int64)
    }

    package var id: String
    package var result: Result
    /// The HTTP status answered, nil when there was no answer.
    package var httpStatus: Int?
    package var error: String?

    package init(id: String, result: Result, httpStatus: Int?, error: String?) {
        self.id = id
        self.result = result
        self.httpStatus = httpStatus
        self.error = error
    }

    /// What the attempt makes of its pending delivery's row, which every store writes as given
    /// (one attempt more; a delivery no longer pending is left as it is).
    package struct Settlement: Sendable, Hashable {
        package var status: WebhookDelivery.Status
        /// When it is due next (pending), or was last tried.
        package var nextAt: Int64
        package var deliveredAt: Int64?
        package var lastStatus: Int?
        package var lastError: String?

        package init(status: WebhookDelivery.Status, nextAt: Int64, deliveredAt: Int64?, lastStatus: Int?, lastError: String?) {
            self.status = status
            self.nextAt = nextAt
            self.deliveredAt = deliveredAt
            self.lastStatus = lastStatus
            self.lastError = lastError
        }
    }

    package var settlement: Settlement {
        switch result {
        case .delivered(let at): Settlement(status: .delivered, nextAt: at, deliveredAt: at, lastStatus: httpStatus, lastError: nil)
        case .retry(let at): Settlement(status: .pending, nextAt: at, deliveredAt: nil, lastStatus: httpStatus, lastError: error)
        case .failed(let at): Settlement(status: .failed, nextAt: at, deliveredAt: nil, lastStatus: httpStatus, lastError: error)
        }
    }
}

/// The delivery backlog of an app (metrics).
package struct DeliveryBacklog: Sendable, Equatable {
    package var pending: Int
    package var failed: Int
    package var oldestPendingCreatedAt: Int64?

    package init(pending: Int, failed: Int, oldestPendingCreatedAt: Int64?) {
        self.pending = pending
        self.failed = failed
        self.oldestPendingCreatedAt = oldestPendingCreatedAt
    }
}

extension WebhookDelivery {
    /// What a manual retry (support's) makes of a delivery, which every store writes as given:
    /// pending, due at once, and its retry window starting again, so the schedule gives it every
    /// attempt anew whatever it had used up.
    package struct Rearming: Sendable, Equatable {
        package let status: Status
        package let nextAt: Int64
        package let windowStart: Int64
    }

    package static func rearmed(at now: Int64) -> Rearming { Rearming(status: .pending, nextAt: now, windowStart: now) }

    /// What becomes of a pending delivery whose endpoint is no longer configured (found at
    /// start-up): failed at `now`, saying why, so it neither waits forever nor counts as backlog.
    /// Its attempts and last answer are kept.
    package struct Abandonment: Sendable, Equatable {
        package let status: Status
        package let nextAt: Int64
        package let lastError: String
    }

    package static func abandoned(at now: Int64) -> Abandonment {
        Abandonment(status: .failed, nextAt: now, lastError: "endpoint no longer configured")
    }
}

/// A delivery as the writer creates it, which every store writes as given: pending, not tried
/// yet, due at once, its retry window opening at its creation. Of an event (its body is the
/// event's) or of a notification to pass on (`body`).
package struct NewDelivery: Sendable, Equatable {
    package let kind: WebhookDelivery.Kind
    package let eventId: String?
    package let eventType: String?
    package let endpoint: String
    package let body: String?
    package let createdAt: Int64

    package init(kind: WebhookDelivery.Kind, eventId: String?, eventType: String?, endpoint: String, body: String?, createdAt: Int64) {
        self.kind = kind
        self.eventId = eventId
        self.eventType = eventType
        self.endpoint = endpoint
        self.body = body
        self.createdAt = createdAt
    }

    package var status: WebhookDelivery.Status { .pending }
    package var attempts: Int { 0 }
    package var nextAt: Int64 { createdAt }
    package var windowStart: Int64 { createdAt }
}
