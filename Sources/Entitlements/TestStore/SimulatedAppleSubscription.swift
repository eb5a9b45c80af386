import Foundation
package import Instants

/// An auto-renewable subscription as the test store's App Store holds it: what Apple knows of a
/// customer's subscription, from which it signs the transactions, renewal infos and
/// notifications it sends (docs/TEST_STORE.md). Pure data; `AppleStoreSimulation` moves it.
package struct SimulatedAppleSubscription: Sendable, Equatable {
    /// Apple's subscription status (the `status` of a notification's data, 1–5).
    package enum Status: Int64, Sendable {
        case active = 1
        case expired = 2
        case billingRetry = 3
        case gracePeriod = 4
        case revoked = 5
    }

    /// An offer that priced the current period (Apple's `offerType`: 1 introductory, 2
    /// promotional, 3 offer code, 4 win-back).
    package struct Offer: Sendable, Equatable {
        package var type: Int64
        package var identifier: String?
        /// `FREE_TRIAL`, `PAY_AS_YOU_GO` or `PAY_UP_FRONT`.
        package var discountType: String
        package var price: Int64
        /// Pay as you go: how many of the subscription's periods it prices. A free trial or pay
        /// up front is one period of its own length, `period`.
        package var periods: Int
        package var period: ISO8601Duration?

        package init(type: Int64, identifier: String?, discountType: String, price: Int64, periods: Int, period: ISO8601Duration?) {
            self.type = type
            self.identifier = identifier
            self.discountType = discountType
            self.price = price
            self.periods = periods
            self.period = period
        }
    }

    /// A product of the group, as a plan change names it.
    package struct Plan: Sendable, Equatable {
        package var productId: String
        package var period: ISO8601Duration
        package var price: Int64

        package init(productId: String, period: ISO8601Duration, price: Int64) {
            self.productId = productId
            self.period = period
            self.price = price
        }
    }

    /// A price increase Apple announced: the new price, and whether the customer consented
    /// (the renewal info's `priceIncreaseStatus` 1, else 0).
    package struct PriceIncrease: Sendable, Equatable {
        package var price: Int64
        package var consented: Bool
    }

    package var bundleId: String
    package var environment: String
    package var originalTransactionId: String
    package var appAccountToken: String?
    package var productId: String
    package var subscriptionGroup: String
    package var period: ISO8601Duration
    /// The regular price in milliunits, and its currency.
    package var price: Int64
    package var currency: String
    package var originalPurchaseDate: Int64
    /// The transaction of the current (or last) period.
    package var transactionId: String
    package var periodStart: Int64
    package var expiresDate: Int64
    package var status: Status
    package var autoRenew: Bool
    /// The offer of the current period and how many of its periods are left after this one.
    package var offer: Offer?
    /// Set by `fail-renewal`: the next renewal's charge fails (with a grace period when true).
    package var nextRenewalFails: Bool?
    /// While billing fails: the grace period's end (access continues until then), and when
    /// Apple stops retrying (60 days after the failed renewal).
    package var gracePeriodExpiresDate: Int64?
    package var billingRetryEndsAt: Int64?
    /// Why it stopped renewing (Apple's `expirationIntent`: 1 the customer, 2 billing).
    package var expirationIntent: Int64?
    package var revocationDate: Int64?
    package var renewals: Int
    /// Why the current transaction was made: `PURCHASE` (bought, resubscribed, changed plan) or
    /// `RENEWAL`.
    package var transactionReason: String
    /// A downgrade or crossgrade taking effect at the next renewal (the renewal info's
    /// `autoRenewProductId`).
    package var pendingPlan: Plan?
    package var priceIncrease: PriceIncrease?
    /// `PURCHASED`, or `FAMILY_SHARED` for a family member's access through Family Sharing.
    package var ownership = "PURCHASED"
    /// How the current transaction was revoked: `REFUND_FULL`, `REFUND_PRORATED` (with the
    /// percentage in milliunits) or `FAMILY_REVOKE`.
    package var revocationType: String?
    package var revocationPercentage: Int64?
    /// Set on the transaction an upgrade replaced.
    package var isUpgraded = false
    /// When the customer's latest run of uninterrupted periods began (a resubscription starts a
    /// new one): the renewal info's `recentSubscriptionStartDate`.
    package var recentStart: Int64

    /// Apple's grace period, as it applies to periods of a month or more (16 days; 6 for a week).
    package var gracePeriodDays: Int64 { period.years == 0 && period.months == 0 ? 6 : 16 }
    /// Apple retries a failed renewal for up to 60 days.
    package static let billingRetryDays: Int64 = 60
}
