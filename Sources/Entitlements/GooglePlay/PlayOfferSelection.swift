package import Instants

/// Which Google Play offer a purchase must use. Google does not check who may have a
/// developer-determined offer, so Entitle decides (docs/GOOGLE_PLAY.md, "Offers"):
///
/// - With a catalog offer id: exactly that offer, when the catalog maps it to this product's
///   base plan, the app listed it (ProductDetails), and the customer passes its eligibility rule;
///   otherwise `OFFER_UNAVAILABLE` — never the base price.
/// - Without: the introductory offer, only for a customer with no Play history in that
///   subscription: the offer tagged `entitle-intro`, else the one with the longest free trial that
///   no catalog entry lists and that is not tagged `entitle-ignore` (an offer that starts with a
///   paid phase only when tagged `entitle-intro`). None: the base plan.
package enum PlayOfferSelection {
    /// One offer as the app's ProductDetails listed it.
    package struct ListedOffer: Sendable, Equatable {
        package var offerId: String
        package var tags: [String]
        package var phases: [Phase]

        package init(offerId: String, tags: [String], phases: [Phase]) {
            self.offerId = offerId
            self.tags = tags
            self.phases = phases
        }
    }

    /// A pricing phase: its billing period (ISO 8601), how many times it recurs, its price.
    package struct Phase: Sendable, Equatable {
        package var billingPeriod: ISO8601Duration
        package var cycles: Int
        package var priceMicros: Int64

        package init(billingPeriod: ISO8601Duration, cycles: Int, priceMicros: Int64) {
            self.billingPeriod = billingPeriod
            self.cycles = cycles
            self.priceMicros = priceMicros
        }
    }

    /// A catalog offer that lives on Google Play.
    package struct CatalogOffer: Sendable, Equatable {
        package var id: String
        package var basePlanId: String
        package var offerId: String
        package var rule: OfferEligibility.PromotionalRule

        package init(id: String, basePlanId: String, offerId: String, rule: OfferEligibility.PromotionalRule) {
            self.id = id
            self.basePlanId = basePlanId
            self.offerId = offerId
            self.rule = rule
        }
    }

    package enum Answer: Sendable, Equatable {
        /// Purchase with this offer (its Play offer id; `catalogOfferId` when it is a catalog offer).
        case offer(offerId: String, catalogOfferId: String?)
        /// Purchase the base plan: no offer applies.
        case basePlan
        /// The requested catalog offer may not be used: `NOT_IN_CATALOG`, `NOT_OFFERED` (the app's
        /// listing lacks it), `NOT_ELIGIBLE`.
        case unavailable(reason: String)
    }

    /// The customer's history in the subscription: whether they ever had it, and whether it is
    /// active now (from the stored Play purchases).
    package struct History: Sendable, Equatable {
        package var hadSubscription: Bool
        package var isActive: Bool

        package init(hadSubscription: Bool, isActive: Bool) {
            self.hadSubscription = hadSubscription
            self.isActive = isActive
        }
    }

    package static let introTag = "entitle-intro"
    package static let ignoreTag = "entitle-ignore"

    package static func select(
        requested: String?, basePlanId: String, listed: [ListedOffer], catalog: [CatalogOffer], history: History
    ) -> Answer {
        if let requested {
            guard let offer = catalog.first(where: { $0.id == requested && $0.basePlanId == basePlanId }) else {
                return .unavailable(reason: "NOT_IN_CATALOG")
            }
            guard listed.contains(where: { $0.offerId == offer.offerId }) else { return .unavailable(reason: "NOT_OFFERED") }
            let eligible: Bool
            switch offer.rule {
            case .any: eligible = true
            case .existing: eligible = history.hadSubscription
            case .current: eligible = history.isActive
            case .lapsed: eligible = history.hadSubscription && !history.isActive
            }
            return eligible ? .offer(offerId: offer.offerId, catalogOfferId: offer.id) : .unavailable(reason: "NOT_ELIGIBLE")
        }
        guard !history.hadSubscription else { return .basePlan }
        if let tagged = listed.first(where: { $0.tags.contains(introTag) }) { return .offer(offerId: tagged.offerId, catalogOfferId: nil) }
        let catalogued = Set(catalog.map(\.offerId))
        let candidates = listed.filter { offer in
            !catalogued.contains(offer.offerId) && !offer.tags.contains(ignoreTag) && offer.phases.first?.priceMicros == 0
        }
        guard let best = candidates.max(by: { freeDays($0) < freeDays($1) }), freeDays(best) > 0 else { return .basePlan }
        return .offer(offerId: best.offerId, catalogOfferId: nil)
    }

    /// The length of an offer's leading free phases, in days (months as 30, years as 365).
    static func freeDays(_ offer: ListedOffer) -> Int {
        var days = 0
        for phase in offer.phases {
            guard phase.priceMicros == 0 else { break }
            let period = phase.billingPeriod
            days += (period.years * 365 + period.months * 30 + period.weeks * 7 + period.days) * max(1, phase.cycles)
        }
        return days
    }
}
