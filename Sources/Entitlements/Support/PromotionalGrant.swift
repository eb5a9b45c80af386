/// An entitlement given by a person rather than bought (`POST …/entitlements/{id}/grants`): a
/// stored fact of one customer (an appAccountToken) in one environment, from `startsAt` until
/// `expiresDate`, unless revoked first. A revocation is the same grant stored again with
/// `revokedAt`, so its history keeps both instants and who acted.
package struct PromotionalGrant: Sendable, Equatable {
    package var id: String
    package var appAccountToken: String
    package var environment: String
    package var entitlement: String
    package var startsAt: Int64
    package var expiresDate: Int64
    package var reason: String?
    /// The name of the admin key that granted it.
    package var grantedBy: String
    package var revokedAt: Int64?
    package var revokedBy: String?

    package init(
        id: String, appAccountToken: String, environment: String, entitlement: String, startsAt: Int64, expiresDate: Int64,
        reason: String?, grantedBy: String, revokedAt: Int64? = nil, revokedBy: String? = nil
    ) {
        self.id = id
        self.appAccountToken = appAccountToken
        self.environment = environment
        self.entitlement = entitlement
        self.startsAt = startsAt
        self.expiresDate = expiresDate
        self.reason = reason
        self.grantedBy = grantedBy
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
    }

    /// This grant stored over `stored`, the same grant as stored before: a grant given is never
    /// changed, and the first revocation stands (a second one, or a re-grant, changes nothing).
    package func replacing(_ stored: PromotionalGrant) -> PromotionalGrant {
        var merged = stored
        if stored.revokedAt == nil, let revokedAt {
            merged.revokedAt = revokedAt
            merged.revokedBy = revokedBy
        }
        return merged
    }

    /// `ACTIVE`, `EXPIRED` or `REVOKED` at `now`; nil before it was given (an "as of" view of an
    /// earlier instant does not show it).
    package func state(at now: Int64) -> String? {
        guard startsAt <= now else { return nil }
        if let revokedAt, revokedAt <= now { return "REVOKED" }
        return now < expiresDate ? "ACTIVE" : "EXPIRED"
    }

    /// Whether it entitles at `now`: given, not yet expired, not revoked by then. The one
    /// definition of an active grant; the stores only narrow their reads to grants not yet
    /// expired (`FactStore.grants(appId:unexpiredAt:)`).
    package func isActive(at now: Int64) -> Bool { state(at: now) == "ACTIVE" }

    /// The grant as the entitlement resolver weighs it, beside the store's: active beats inactive,
    /// the later expiry wins among active ones, the more recent among inactive ones.
    package func productGrant(at now: Int64) -> ProductGrant? {
        guard let state = state(at: now) else { return nil }
        let revoked = state == "REVOKED"
        var grant = ProductGrant(
            productId: "", isActive: state == "ACTIVE", state: state, originalTransactionId: nil, expiresDate: expiresDate,
            ownershipType: nil, lastEventDate: revoked ? revokedAt ?? expiresDate : expiresDate, environment: environment)
        grant.store = "promotional"
        grant.promotional = self
        return grant
    }
}
