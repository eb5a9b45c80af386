package import Instants

/// A subscription as the test store's Google Play holds it: what Google knows of one purchase
/// token, from which the test store answers `purchases.subscriptionsv2` and sends its real-time
/// developer notifications (docs/TEST_STORE.md). Pure data; `PlayStoreSimulation` moves it.
package struct SimulatedPlaySubscription: Sendable, Equatable {
    /// Google's `subscriptionState`.
    package enum State: String, Sendable {
        case active = "SUBSCRIPTION_STATE_ACTIVE"
        /// Auto-renew off: entitled until `expiryTime`, then expired.
        case canceled = "SUBSCRIPTION_STATE_CANCELED"
        case inGracePeriod = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
        /// Account hold: the payment failed past the grace period; no access, Google still retries.
        case onHold = "SUBSCRIPTION_STATE_ON_HOLD"
        case paused = "SUBSCRIPTION_STATE_PAUSED"
        case expired = "SUBSCRIPTION_STATE_EXPIRED"
    }

    /// The offer of a base plan the purchase was made with (its id and tags), and the phase it
    /// prices: a free trial of its own length, or an introductory price for `cycles` billing
    /// periods of the base plan.
    package struct Offer: Sendable, Equatable {
        package var id: String
        package var tags: [String]
        /// `freeTrial`, `introductoryPrice`, or nil for a developer-determined offer priced as the
        /// base plan.
        package var phase: String?
        package var price: Int64
        package var period: ISO8601Duration?
        package var cycles: Int

        package init(id: String, tags: [String], phase: String?, price: Int64, period: ISO8601Duration?, cycles: Int) {
            self.id = id
            self.tags = tags
            self.phase = phase
            self.price = price
            self.period = period
            self.cycles = cycles
        }
    }

    /// Why a subscription stopped renewing (`canceledStateContext`).
    package enum Cancellation: String, Sendable {
        case user = "userInitiatedCancellation"
        case system = "systemInitiatedCancellation"
        case developer = "developerInitiatedCancellation"
        case replacement = "replacementCancellation"
    }

    /// A price step-up Google announced (`priceStepUpConsentDetails`): the new price, the
    /// deadline for the customer's consent, and whether it was given.
    package struct PriceStepUp: Sendable, Equatable {
        package var price: Int64
        package var consentDeadline: Int64
        package var consented: Bool
    }

    /// The plan a deferred replacement moves to at the renewal.
    package struct DeferredPlan: Sendable, Equatable {
        package var productId: String
        package var basePlanId: String
        package var period: ISO8601Duration
        package var price: Int64

        package init(productId: String, basePlanId: String, period: ISO8601Duration, price: Int64) {
            self.productId = productId
            self.basePlanId = basePlanId
            self.period = period
            self.price = price
        }
    }

    /// What this purchase replaced (`itemReplacement`): the old plan and the replacement mode.
    package struct Replacement: Sendable, Equatable {
        package var productId: String
        package var basePlanId: String
        package var offerId: String?
        package var mode: String
    }

    package var packageName: String
    package var purchaseToken: String
    package var productId: String
    package var basePlanId: String
    package var period: ISO8601Duration
    /// The base plan's price in milliunits, and its currency.
    package var price: Int64
    package var currency: String
    package var obfuscatedAccountId: String?
    package var startTime: Int64
    /// The end of the current period (of the grace period while in it).
    package var expiryTime: Int64
    package var state: State
    package var autoRenew: Bool
    package var offer: Offer?
    /// Billing periods the offer still prices after the current one (0: the base price next).
    package var offerCyclesLeft: Int
    /// The phase pricing the current period: `freeTrial`, `introductoryPrice` or `basePrice`.
    package var offerPhase: String
    /// The first order's id (`GPA.…`); renewals are `…..0`, `…..1`, … as Google numbers them.
    package var firstOrderId: String
    package var renewals: Int
    package var acknowledged: Bool
    /// Set by `fail-renewal`: the next charge fails, with this many days of grace (0: straight to hold).
    package var nextRenewalFails: Int?
    /// The grace period's and account hold's ends, while in them.
    package var graceEnds: Int64?
    package var holdEnds: Int64?
    package var cancellation: Cancellation?
    package var cancelTime: Int64?
    /// A pause the customer scheduled (it starts at the period's end) or is in: when it resumes.
    package var autoResumeTime: Int64?
    package var priceStepUp: PriceStepUp?
    package var linkedPurchaseToken: String?
    package var replacement: Replacement?
    /// A `DEFERRED` replacement waiting for the renewal (`deferredItemReplacement`): the plan the
    /// renewal moves to.
    package var deferredPlan: DeferredPlan?
    /// When Google revoked the purchase (refunded and ended access).
    package var revokedAt: Int64?

    /// Google's default grace period and account hold (the Play Console lets a developer choose;
    /// together at most 60 days).
    package static let defaultGraceDays = 7
    package static let holdDays: Int64 = 30
    /// Google refunds a purchase not acknowledged within three days.
    package static let acknowledgementDays: Int64 = 3

    /// The order of the current period (`latestSuccessfulOrderId`).
    package var latestOrderId: String { renewals == 0 ? firstOrderId : "\(firstOrderId)..\(renewals - 1)" }
    /// The order Google keeps trying to charge while in grace or on hold.
    package var pendingOrderId: String { "\(firstOrderId)..\(renewals)" }
    /// What the current period costs.
    package var currentPrice: Int64 { offerPhase == "basePrice" ? price : offer?.price ?? price }
}

/// A one-time product as the test store's Google Play holds it (`purchases.productsv2`).
package struct SimulatedPlayProduct: Sendable, Equatable {
    package var packageName: String
    package var purchaseToken: String
    package var productId: String
    package var orderId: String
    package var quantity: Int64
    /// Units not refunded yet.
    package var refundableQuantity: Int64
    /// Milliunits a unit, and the currency.
    package var price: Int64
    package var currency: String
    package var obfuscatedAccountId: String?
    package var purchaseTime: Int64
    package var acknowledged: Bool
    package var consumed: Bool
    package var voidedAt: Int64?
}
