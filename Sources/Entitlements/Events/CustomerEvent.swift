package import JSON

/// Something that happened to a customer, derived from stored facts (docs/EVENTS.md). The type
/// names are part of the API: receivers switch on them.
package struct CustomerEvent: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case initialPurchase = "INITIAL_PURCHASE"
        case trialStarted = "TRIAL_STARTED"
        case renewal = "RENEWAL"
        case trialConverted = "TRIAL_CONVERTED"
        case cancellation = "CANCELLATION"
        case trialCancelled = "TRIAL_CANCELLED"
        case uncancellation = "UNCANCELLATION"
        case billingIssue = "BILLING_ISSUE"
        case billingRecovery = "BILLING_RECOVERY"
        case productChange = "PRODUCT_CHANGE"
        case expiration = "EXPIRATION"
        case refund = "REFUND"
        case refundReversed = "REFUND_REVERSED"
        case subscriptionExtended = "SUBSCRIPTION_EXTENDED"
        case nonRenewingPurchase = "NON_RENEWING_PURCHASE"
        case promotionalGrant = "PROMOTIONAL_GRANT"
        case promotionalGrantRevoked = "PROMOTIONAL_GRANT_REVOKED"
        case priceIncrease = "PRICE_INCREASE"
        case refundRequested = "REFUND_REQUESTED"
        case refundReviewSent = "REFUND_REVIEW_SENT"
        case refundDeclined = "REFUND_DECLINED"
        case retentionOffered = "RETENTION_OFFERED"
        case retentionSaved = "RETENTION_SAVED"
        case consentRescinded = "CONSENT_RESCINDED"
        case experimentEnrolled = "EXPERIMENT_ENROLLED"
        case test = "TEST"
    }

    package var kind: Kind
    package var environment: String
    /// The subscription (or purchase) the event is about; nil for `TEST`.
    package var originalTransactionId: String?
    /// The transaction whose product, period and price the event reports: the new one for a
    /// purchase, the refunded one for a refund, the current one otherwise.
    package var transaction: TransactionRecord?
    /// When it happened: the notification's `signedDate`, else the fact's own instant.
    package var occurredAt: Int64
    /// The promotional grant given or revoked (`PROMOTIONAL_GRANT…` only).
    package var grant: PromotionalGrant?
    /// The Google Play purchase the event is about (events from Play facts).
    package var play: PlayPurchase?
    /// Whom a withdrawn consent concerns (`CONSENT_RESCINDED` only).
    package var consent: ConsentRescission?
    /// The refund request (`REFUND_REQUESTED`, `REFUND_REVIEW_SENT`).
    package var refundRequest: RefundRequest?
    /// The retention answer (`RETENTION_OFFERED`, `RETENTION_SAVED` with `savedBy`).
    package var retention: RetentionRecord?
    /// The customer's place in an experiment (`EXPERIMENT_ENROLLED`).
    package var enrollment: ExperimentAssignment?

    // The type's own fields; nil where they do not apply.
    package var isTrialConversion: Bool?
    package var cancelReason: String?
    /// `commitment` when a `CANCELLATION` or `UNCANCELLATION` is of a 12-month commitment's own
    /// renewal (`commitmentAutoRenewStatus`), not of the subscription's.
    package var scope: String?
    package var gracePeriodExpiresDate: Int64?
    package var newProductId: String?
    package var previousProductId: String?
    /// `IMMEDIATELY` (an upgrade: a new transaction replaced the period) or `AT_RENEWAL`.
    package var takesEffect: String?
    package var expirationReason: String?
    package var refundedTransactionId: String?
    package var revocationReason: Int64?
    package var revocationType: String?
    /// Milliunits of a percent refunded (a prorated refund), and what the refund returned.
    package var revocationPercentage: Int64?
    package var refundedMilliunits: Int64?
    /// Whether the refund took away access the customer had just before it.
    package var endedAccess: Bool?
    package var previousExpiresDate: Int64?
    /// A price increase to consent to: `PRICE_STEP_UP` (Google, by `consentDeadline`) or
    /// `PRICE_INCREASE` (Google's opt-in price change, Apple's `PRICE_INCREASE` `PENDING`), and
    /// the new price as the store gave it.
    package var priceIncreaseKind: String?
    package var consentDeadline: Int64?
    package var newPrice: JSONObject?
    /// A quantity-based partial refund of a one-time product: the units refunded and those left.
    package var refundedQuantity: Int64?
    package var remainingQuantity: Int64?

    package init(
        _ kind: Kind, environment: String, originalTransactionId: String?, transaction: TransactionRecord?,
        occurredAt: Int64
    ) {
        self.kind = kind
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.transaction = transaction
        self.occurredAt = occurredAt
    }
}

/// Apple's `expirationIntent` as the reason names of `CANCELLATION` and `EXPIRATION`.
enum ExpirationIntentName {
    static func name(_ intent: Int64?) -> String {
        switch intent {
        case 1: "UNSUBSCRIBE"
        case 2: "BILLING_ERROR"
        case 3: "PRICE_INCREASE"
        case 4: "PRODUCT_UNAVAILABLE"
        default: "UNKNOWN"
        }
    }
}
