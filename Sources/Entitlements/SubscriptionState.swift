/// The state names of docs/ENTITLEMENTS.md.
package enum SubscriptionStateName: String, Sendable {
    case active = "ACTIVE"
    case gracePeriod = "GRACE_PERIOD"
    case billingRetry = "BILLING_RETRY"
    case expired = "EXPIRED"
    case revoked = "REVOKED"
}

/// What one auto-renewable subscription looks like at `now` (docs/ENTITLEMENTS.md, "State of one
/// subscription"). Dates are epoch milliseconds.
package struct SubscriptionState: Sendable, Equatable {
    package var originalTransactionId: String
    /// The current transaction's id.
    package var transactionId: String
    package var productId: String
    package var subscriptionGroupIdentifier: String?
    package var state: SubscriptionStateName
    package var isActive: Bool
    package var purchaseDate: Int64
    package var originalPurchaseDate: Int64?
    package var expiresDate: Int64?
    package var gracePeriodExpiresDate: Int64?
    package var willRenew: Bool
    package var autoRenewProductId: String?
    package var periodType: String
    package var offerType: Int64?
    package var offerIdentifier: String?
    /// `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`, `ONE_TIME`, or a newer value, as Apple sends it.
    package var offerDiscountType: String?
    package var offerPeriod: String?
    package var billingIssueDetectedAt: Int64?
    package var unsubscribeDetectedAt: Int64?
    package var revocationDate: Int64?
    package var revocationReason: Int64?
    /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`, or what Apple sends next, as sent.
    package var revocationType: String?
    /// Milliunits of a percent refunded (`REFUND_PRORATED`), as Apple sent it.
    package var revocationPercentage: Int64?
    package var isUpgraded: Bool
    package var ownershipType: String?
    package var environment: String
    package var eligibleWinBackOfferIds: [String]
    /// A 12-month commitment billed monthly: the current transaction's plan and place in the
    /// commitment, and what the renewal info says of the next term (API 1.21), as Apple sent them.
    package var billingPlanType: String? = nil
    package var renewalBillingPlanType: String? = nil
    package var commitment: TransactionCommitment? = nil
    package var renewalCommitment: RenewalCommitment? = nil
}

/// Derives subscription state from stored facts. Pure: facts and `now` in, state out.
package enum SubscriptionEngine {
    /// The current transaction: among those not upgraded, the latest `purchaseDate` (ties: the
    /// latest `signedDate`). An upgraded transaction never counts, whatever its `expiresDate` (E-02).
    package static func currentTransaction(of transactions: [TransactionRecord]) -> TransactionRecord? {
        let candidates = transactions.filter { !$0.isUpgraded }
        return (candidates.isEmpty ? transactions : candidates).max {
            ($0.purchaseDate, $0.signedDate) < ($1.purchaseDate, $1.signedDate)
        }
    }

    /// The state of one subscription (all `transactions` share an `originalTransactionId`) in one
    /// environment: facts of another environment are ignored, so Sandbox never touches Production.
    package static func evaluate(
        transactions allTransactions: [TransactionRecord], renewal allRenewal: RenewalRecord?,
        signals: [SubscriptionSignal] = [], now: Int64, environment: String,
        billingRetryGrantsAccess: Bool
    ) -> SubscriptionState? {
        let transactions = TransactionRecord.merged(
            allTransactions.allSatisfy { $0.environment == environment }
                ? allTransactions : allTransactions.filter { $0.environment == environment })
        let renewal = allRenewal?.environment == environment ? allRenewal : nil
        guard let current = currentTransaction(of: transactions) else { return nil }
        let (state, isActive) = stateName(current, renewal: renewal, now: now, billingRetryGrantsAccess: billingRetryGrantsAccess)
        let willRenew = renewal?.autoRenewStatus == 1 && state != .revoked && state != .expired
        var subscription = SubscriptionState(
            originalTransactionId: current.originalTransactionId, transactionId: current.transactionId, productId: current.productId,
            subscriptionGroupIdentifier: current.subscriptionGroupIdentifier, state: state, isActive: isActive,
            purchaseDate: current.purchaseDate,
            originalPurchaseDate: current.originalPurchaseDate ?? transactions.map(\.purchaseDate).min(),
            expiresDate: current.expiresDate,
            gracePeriodExpiresDate: state == .gracePeriod ? renewal?.gracePeriodExpiresDate : nil,
            willRenew: willRenew, autoRenewProductId: renewal?.autoRenewProductId,
            periodType: periodType(current), offerType: current.offerType, offerIdentifier: current.offerIdentifier,
            offerDiscountType: current.offerDiscountType, offerPeriod: current.offerPeriod,
            billingIssueDetectedAt: billingIssueDetectedAt(signals, renewal: renewal, current: current),
            unsubscribeDetectedAt: unsubscribeDetectedAt(signals, renewal: renewal),
            revocationDate: current.revocationDate, revocationReason: current.revocationReason,
            revocationType: current.revocationType, revocationPercentage: current.revocationPercentage,
            isUpgraded: current.isUpgraded, ownershipType: current.ownershipType, environment: current.environment,
            eligibleWinBackOfferIds: renewal?.eligibleWinBackOfferIds ?? [])
        subscription.billingPlanType = current.billingPlanType
        subscription.commitment = current.commitment
        subscription.renewalBillingPlanType = renewal?.renewalBillingPlanType
        subscription.renewalCommitment = renewal?.commitment
        return subscription
    }

    /// The table of docs/ENTITLEMENTS.md, first matching row wins.
    static func stateName(
        _ current: TransactionRecord, renewal: RenewalRecord?, now: Int64,
        billingRetryGrantsAccess: Bool
    ) -> (SubscriptionStateName, Bool) {
        if let revoked = current.revocationDate, revoked <= now { return (.revoked, false) }
        if let expires = current.expiresDate, expires > now { return (.active, true) }
        if let grace = renewal?.gracePeriodExpiresDate, grace > now { return (.gracePeriod, true) }
        if renewal?.isInBillingRetryPeriod == true { return (.billingRetry, billingRetryGrantsAccess) }
        return (.expired, false)
    }

    /// `TRIAL`, `INTRO`, `PROMOTIONAL`, `OFFER_CODE`, `WIN_BACK` or `NORMAL`.
    package static func periodType(_ transaction: TransactionRecord) -> String {
        switch transaction.offerType {
        case 1: transaction.offerDiscountType == "FREE_TRIAL" ? "TRIAL" : "INTRO"
        case 2: "PROMOTIONAL"
        case 3: "OFFER_CODE"
        case 4: "WIN_BACK"
        default: "NORMAL"
        }
    }

    /// The first billing trouble seen for the current period; a renewal clears it.
    static func billingIssueDetectedAt(
        _ signals: [SubscriptionSignal], renewal: RenewalRecord?,
        current: TransactionRecord
    ) -> Int64? {
        var detected: Int64?
        var all = signals
        if renewal?.isInBillingRetryPeriod == true, let renewal { all.append(SubscriptionSignal(.billingIssue, at: renewal.signedDate)) }
        for signal in all.sorted(by: { $0.at < $1.at }) {
            switch signal.kind {
            case .billingIssue where signal.at >= current.purchaseDate: if detected == nil { detected = signal.at }
            case .renewed: detected = nil
            default: continue
            }
        }
        return detected
    }

    /// When auto-renew was seen turning off; cleared when it turns on again.
    static func unsubscribeDetectedAt(_ signals: [SubscriptionSignal], renewal: RenewalRecord?) -> Int64? {
        var detected: Int64?
        var all = signals
        if let renewal, let status = renewal.autoRenewStatus {
            all.append(SubscriptionSignal(status == 0 ? .autoRenewDisabled : .autoRenewEnabled, at: renewal.signedDate))
        }
        for signal in all.sorted(by: { $0.at < $1.at }) {
            switch signal.kind {
            case .autoRenewDisabled: if detected == nil { detected = signal.at }
            case .autoRenewEnabled: detected = nil
            default: continue
            }
        }
        return detected
    }
}
