/// One stored event (the outbox row): what `GET /v1/events` lists and webhooks deliver. `body`
/// is the JSON document exactly as delivered, so every redelivery sends the same bytes.
public struct OutboxEvent: Sendable, Equatable {
    public var id: String
    public var appId: String
    /// Per app, strictly increasing in commit order (assigned by the store).
    public var sequence: Int64
    public var type: String
    public var environment: String
    public var originalTransactionId: String?
    public var appAccountToken: String?
    public var occurredAt: Int64
    public var createdAt: Int64
    public var body: String
    /// The webhook endpoints (URLs) it is to be delivered to; not stored with the event.
    public var endpoints: [String]

    public init(
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
public protocol EventWriting: Sendable {
    /// The environments a subscriber view spans (the app's enabled ones).
    var environments: [String] { get }
    /// The events the change causes, numbered from `firstSequence` in order, with their endpoints.
    func events(for change: FactChange, firstSequence: Int64) -> [OutboxEvent]
    /// How long after a retention answer a save is attributed to it, in milliseconds; nil when
    /// the app answers no retention requests (the writer then reads none).
    var retentionWindow: Int64? { get }
}

extension EventWriting {
    public var retentionWindow: Int64? { nil }
}

/// A notification to pass on byte for byte to the developer's previous handler.
public struct ForwardedNotification: Sendable, Equatable {
    public var url: String
    public var body: String

    public init(url: String, body: String) {
        self.url = url
        self.body = body
    }
}

/// One POST to make: an event to a webhook endpoint, or a notification forwarded.
public struct WebhookDelivery: Sendable, Equatable {
    public enum Kind: String, Sendable { case event, forward }
    public enum Status: String, Sendable, CaseIterable { case pending, delivered, failed }

    public var id: String
    public var appId: String
    public var kind: Kind
    /// The event delivered (nil for a forwarded notification).
    public var eventId: String?
    public var eventType: String?
    public var endpoint: String
    public var status: Status
    public var attempts: Int
    /// When it is due next (pending), or was last tried.
    public var nextAt: Int64
    public var createdAt: Int64
    /// Retries end (the delivery fails) once this much time has passed since it.
    public var windowStart: Int64
    public var lastStatus: Int?
    public var lastError: String?
    public var deliveredAt: Int64?
    /// What to POST; filled by claims (listings leave it empty).
    public var body: String

    public init(
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
public struct DeliveryOutcome: Sendable, Equatable {
    public enum Result: Sendable, Equatable {
        case delivered(at: Int64)
        /// Try again at the instant given.
        case retry(at: Int64)
        /// The retry window is over: the delivery is dead.
        case failed(at: Int64)
    }

    public var id: String
    public var result: Result
    /// The HTTP status answered, nil when there was no answer.
    public var httpStatus: Int?
    public var error: String?

    public init(id: String, result: Result, httpStatus: Int?, error: String?) {
        self.id = id
        self.result = result
        self.httpStatus = httpStatus
        self.error = error
    }
}

/// The delivery backlog of an app (metrics).
public struct DeliveryBacklog: Sendable, Equatable {
    public var pending: Int
    public var failed: Int
    public var oldestPendingCreatedAt: Int64?

    public init(pending: Int, failed: Int, oldestPendingCreatedAt: Int64?) {
        self.pending = pending
        self.failed = failed
        self.oldestPendingCreatedAt = oldestPendingCreatedAt
    }
}
