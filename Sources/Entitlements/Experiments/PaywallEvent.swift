/// What the app reports of a paywall (`POST /v1/subscribers/{appAccountToken}/paywall-events`):
/// shown (which enrolls the customer in the experiment whose variant it showed), closed, or a
/// purchase started from it.
package struct PaywallEvent: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case shown
        case closed
        case purchaseStarted
    }

    package var appAccountToken: String
    package var kind: Kind
    package var placement: String
    package var offering: String
    /// The experiment and variant the offering came from, when it did.
    package var experiment: String?
    package var variant: String?
    package var at: Int64

    package init(
        appAccountToken: String, kind: Kind, placement: String, offering: String, experiment: String? = nil, variant: String? = nil,
        at: Int64
    ) {
        self.appAccountToken = appAccountToken
        self.kind = kind
        self.placement = placement
        self.offering = offering
        self.experiment = experiment
        self.variant = variant
        self.at = at
    }
}
