/// What a placement shows one customer, and why (docs/OFFERINGS.md, docs/EXPERIMENTS.md), in
/// this order: a running experiment on the placement whose audience holds the customer (their
/// variant's offering); the first targeting rule that matches; the offering a shipped experiment
/// made the placement's own; the placement's own offering.
package struct OfferingDecision: Sendable, Equatable {
    package var offering: String?
    package var reason: OfferingReason
    /// The experiment and variant the offering comes from, and whether the customer is enrolled
    /// already (else the paywall's first showing enrolls them).
    package var experiment: (id: String, variant: String, enrolled: Bool)?

    package static func == (left: OfferingDecision, right: OfferingDecision) -> Bool {
        left.offering == right.offering && left.reason == right.reason && left.experiment?.id == right.experiment?.id
            && left.experiment?.variant == right.experiment?.variant && left.experiment?.enrolled == right.experiment?.enrolled
    }

    package static func decide(
        _ placement: Placement, context: TargetingContext, experiments: [Experiment], assignments: [ExperimentAssignment],
        token: String
    ) -> OfferingDecision {
        if let drawn = Experiment.variant(
            on: placement.id, experiments: experiments, assignments: assignments, context: context, token: token)
        {
            return OfferingDecision(
                offering: drawn.variant.offering, reason: .experiment(drawn.experiment.id, variant: drawn.variant.id),
                experiment: (drawn.experiment.id, drawn.variant.id, drawn.enrolled))
        }
        var chosen = placement.choose(for: context)
        if chosen.reason == .default || chosen.reason == .none(rule: nil),
            let shipped = Experiment.shippedOffering(on: placement.id, experiments: experiments)
        {
            chosen = (shipped.offering, .shipped(shipped.experiment.id))
        }
        return OfferingDecision(offering: chosen.offering, reason: chosen.reason, experiment: nil)
    }
}
