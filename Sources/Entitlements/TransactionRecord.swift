package import AppStore
import Instants

/// The facts of one verified transaction that state derivation needs (docs/ENTITLEMENTS.md).
/// Dates are epoch milliseconds.
package struct TransactionRecord: Sendable, Equatable {
    package var transactionId: String
    package var originalTransactionId: String
    package var productId: String
    package var subscriptionGroupIdentifier: String?
    package var type: String
    package var purchaseDate: Int64
    package var originalPurchaseDate: Int64?
    package var expiresDate: Int64?
    package var revocationDate: Int64?
    package var revocationReason: Int64?
    package var revocationType: String?
    /// How much of the transaction a refund returned, in milliunits of a percent (Apple's
    /// `revocationPercentage`: 50000 is half), when Apple says (`REFUND_PRORATED`).
    package var revocationPercentage: Int64?
    /// The offer's duration as Apple sends it (ISO 8601, `P1M`), kept as text.
    package var offerPeriod: String?
    package var isUpgraded: Bool
    package var offerType: Int64?
    package var offerDiscountType: String?
    package var offerIdentifier: String?
    package var ownershipType: String?
    package var environment: String
    package var signedDate: Int64
    package var appAccountToken: String?
    /// The app download the purchase belongs to (`appTransactionId`): a customer without an
    /// appAccountToken is found by it.
    package var appTransactionId: String?
    /// What the customer paid, in milliunits of `currency` (Apple's `price`), when Apple said.
    package var price: Int64?
    package var currency: String?
    /// `BILLED_UPFRONT`, `MONTHLY` (a 12-month commitment billed monthly), or a newer value, as sent.
    package var billingPlanType: String?
    package var commitment: TransactionCommitment?

    package init(
        transactionId: String, originalTransactionId: String, productId: String,
        subscriptionGroupIdentifier: String? = nil, type: String = ProductType.autoRenewable.rawValue,
        purchaseDate: Int64, originalPurchaseDate: Int64? = nil, expiresDate: Int64? = nil,
        revocationDate: Int64? = nil, revocationReason: Int64? = nil, revocationType: String? = nil,
        isUpgraded: Bool = false, offerType: Int64? = nil, offerDiscountType: String? = nil,
        offerIdentifier: String? = nil, ownershipType: String? = "PURCHASED", environment: String = "Sandbox",
        signedDate: Int64, appAccountToken: String? = nil, appTransactionId: String? = nil,
        price: Int64? = nil, currency: String? = nil, revocationPercentage: Int64? = nil, offerPeriod: String? = nil,
        billingPlanType: String? = nil, commitment: TransactionCommitment? = nil
    ) {
        self.billingPlanType = billingPlanType
        self.commitment = commitment
        self.revocationPercentage = revocationPercentage
        self.offerPeriod = offerPeriod
        self.appTransactionId = appTransactionId
        self.price = price
        self.currency = currency
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.type = type
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerDiscountType = offerDiscountType
        self.offerIdentifier = offerIdentifier
        self.ownershipType = ownershipType
        self.environment = environment
        self.signedDate = signedDate
        self.appAccountToken = appAccountToken
    }

    /// From a verified payload; nil when an identifying member is missing.
    package init?(_ payload: JWSTransactionDecodedPayload) {
        guard let transactionId = payload.transactionId, let productId = payload.productId,
            let purchaseDate = payload.purchaseDate, let signedDate = payload.signedDate,
            let environment = payload.environment?.rawValue
        else { return nil }
        self.init(
            transactionId: transactionId, originalTransactionId: payload.originalTransactionId ?? transactionId,
            productId: productId, subscriptionGroupIdentifier: payload.subscriptionGroupIdentifier,
            type: payload.type?.rawValue ?? "", purchaseDate: purchaseDate,
            originalPurchaseDate: payload.originalPurchaseDate, expiresDate: payload.expiresDate,
            revocationDate: payload.revocationDate, revocationReason: payload.revocationReason?.rawValue,
            revocationType: payload.revocationType?.rawValue, isUpgraded: payload.isUpgraded ?? false,
            offerType: payload.offerType?.rawValue, offerDiscountType: payload.offerDiscountType?.rawValue,
            offerIdentifier: payload.offerIdentifier, ownershipType: payload.inAppOwnershipType?.rawValue,
            environment: environment, signedDate: signedDate, appAccountToken: payload.appAccountToken,
            appTransactionId: payload.appTransactionId, price: payload.price, currency: payload.currency,
            revocationPercentage: payload.revocationPercentage, offerPeriod: payload.offerPeriod,
            billingPlanType: payload.billingPlanType?.rawValue, commitment: payload.commitmentInfo.map(TransactionCommitment.init(apple:)))
    }

    /// What a refund of this transaction returned, in milliunits of `currency`: the price times
    /// `revocationPercentage` for a prorated refund, the whole price otherwise; nil when it was not
    /// refunded or Apple gave no price.
    package var refundedMilliunits: Int64? {
        guard revocationDate != nil, let price else { return nil }
        guard let percentage = revocationPercentage else { return price }
        // 100,000 milliunits of a percent are the whole price; round to the nearest milliunit.
        return price.multipliedSaturating(by: min(max(percentage, 0), 100_000)).addingSaturating(50_000) / 100_000
    }

    /// Merging copies of one transaction: the newer `signedDate` wins (a later refund is never
    /// overwritten by an older copy, E-01).
    package func newer(than other: TransactionRecord) -> Bool { signedDate > other.signedDate }
}

/// The facts of the newest renewal info of a subscription.
package struct RenewalRecord: Sendable, Equatable {
    package var originalTransactionId: String
    package var productId: String?
    package var autoRenewProductId: String?
    package var autoRenewStatus: Int64?
    package var isInBillingRetryPeriod: Bool
    package var gracePeriodExpiresDate: Int64?
    package var expirationIntent: Int64?
    package var eligibleWinBackOfferIds: [String]
    package var environment: String
    package var signedDate: Int64
    package var appTransactionId: String?
    /// How the next term is billed (`renewalBillingPlanType`), as sent.
    package var renewalBillingPlanType: String?
    package var commitment: RenewalCommitment?

    package init(
        originalTransactionId: String, productId: String? = nil, autoRenewProductId: String? = nil,
        autoRenewStatus: Int64? = 1, isInBillingRetryPeriod: Bool = false, gracePeriodExpiresDate: Int64? = nil,
        expirationIntent: Int64? = nil, eligibleWinBackOfferIds: [String] = [], environment: String = "Sandbox",
        signedDate: Int64, appTransactionId: String? = nil, renewalBillingPlanType: String? = nil,
        commitment: RenewalCommitment? = nil
    ) {
        self.renewalBillingPlanType = renewalBillingPlanType
        self.commitment = commitment
        self.appTransactionId = appTransactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.expirationIntent = expirationIntent
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.environment = environment
        self.signedDate = signedDate
    }

    package init?(_ payload: JWSRenewalInfoDecodedPayload) {
        guard let original = payload.originalTransactionId, let signedDate = payload.signedDate,
            let environment = payload.environment?.rawValue
        else { return nil }
        self.init(
            originalTransactionId: original, productId: payload.productId, autoRenewProductId: payload.autoRenewProductId,
            autoRenewStatus: payload.autoRenewStatus?.rawValue, isInBillingRetryPeriod: payload.isInBillingRetryPeriod ?? false,
            gracePeriodExpiresDate: payload.gracePeriodExpiresDate, expirationIntent: payload.expirationIntent?.rawValue,
            eligibleWinBackOfferIds: payload.eligibleWinBackOfferIds ?? [], environment: environment, signedDate: signedDate,
            appTransactionId: payload.appTransactionId, renewalBillingPlanType: payload.renewalBillingPlanType?.rawValue,
            commitment: payload.commitmentInfo.map(RenewalCommitment.init(apple:)))
    }
}

/// Something seen about a subscription at a time, from notifications and renewal infos, for
/// `billingIssueDetectedAt` and `unsubscribeDetectedAt`.
package struct SubscriptionSignal: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        case billingIssue, renewed, autoRenewDisabled, autoRenewEnabled
    }

    package var kind: Kind
    package var at: Int64

    package init(_ kind: Kind, at: Int64) {
        self.kind = kind
        self.at = at
    }
}

extension TransactionRecord {
    /// One record per `transactionId`, the newest `signedDate` winning (E-01, E-08): facts may
    /// arrive in any order and a late, older copy never regresses state.
    package static func merged(_ records: [TransactionRecord]) -> [TransactionRecord] {
        // What the stores answer: each transaction once, in this order. Every read evaluates it.
        if isMergedAlready(records) { return records }
        var latest: [String: TransactionRecord] = [:]
        for record in records {
            if let existing = latest[record.transactionId], !record.newer(than: existing) { continue }
            latest[record.transactionId] = record
        }
        return latest.values.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
    }

    /// In order and each transaction id once (checked pairwise: a subscription has few).
    private static func isMergedAlready(_ records: [TransactionRecord]) -> Bool {
        guard records.count <= 64 else { return false }
        for index in records.indices.dropFirst() {
            let (before, record) = (records[index - 1], records[index])
            guard (before.purchaseDate, before.transactionId) < (record.purchaseDate, record.transactionId) else { return false }
        }
        for index in records.indices {
            for other in records.indices where other > index && records[other].transactionId == records[index].transactionId {
                return false
            }
        }
        return true
    }
}

extension RenewalRecord {
    /// The newest renewal info wins.
    package static func newest(_ records: [RenewalRecord]) -> RenewalRecord? { records.max { $0.signedDate < $1.signedDate } }
}
