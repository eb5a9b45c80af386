/// A test of offerings on one placement (docs/EXPERIMENTS.md): 2–4 variants, each an offering
/// with a weight, shown to an audience, of which a fraction is enrolled. A customer's variant is
/// drawn from the experiment's seed and their token (`GrowthBookHashing`), so it is the same on
/// every read; it is stored when the app reports the paywall shown (enrollment is exposure) and
/// never drawn again.
package struct Experiment: Sendable, Equatable {
    package enum Status: String, Sendable, CaseIterable {
        /// Made, not yet running: nobody sees it.
        case draft
        case running
        /// Stopped for good: nobody is enrolled any more.
        case stopped
    }

    package struct Variant: Sendable, Equatable {
        package var id: String
        package var offering: String
        package var weight: Double

        package init(id: String, offering: String, weight: Double) {
            self.id = id
            self.offering = offering
            self.weight = weight
        }
    }

    package var id: String
    package var placement: String
    /// The first is the control.
    package var variants: [Variant]
    /// Who may be enrolled (default: customers who never subscribed).
    package var audience: TargetingCondition
    /// The fraction of the audience enrolled, (0, 1].
    package var enrollment: Double
    package var seed: String
    package var status: Status
    /// The variant shipped when it stopped: its offering becomes the placement's own.
    package var shipped: String?
    package var createdAt: Int64
    package var startedAt: Int64?
    package var stoppedAt: Int64?

    package init(
        id: String, placement: String, variants: [Variant], audience: TargetingCondition, enrollment: Double = 1, seed: String? = nil,
        createdAt: Int64
    ) {
        self.id = id
        self.placement = placement
        self.variants = variants
        self.audience = audience
        self.enrollment = enrollment
        self.seed = seed ?? id
        status = .draft
        self.createdAt = createdAt
    }

    /// Without an audience, an experiment is for customers who never subscribed: a paywall test
    /// measures what makes them start.
    package static var defaultAudience: TargetingCondition {
        var audience = TargetingCondition()
        audience.states = [.neverSubscribed]
        return audience
    }

    /// The variant `token` would be drawn into, nil when outside the enrolled fraction.
    package func draw(_ token: String) -> Variant? {
        guard let n = GrowthBookHashing.hash(seed: seed, value: token) else { return nil }
        let ranges = GrowthBookHashing.bucketRanges(count: variants.count, coverage: enrollment, weights: variants.map(\.weight))
        return GrowthBookHashing.chooseVariant(n, ranges).map { variants[$0] }
    }
}

/// A customer's place in an experiment, stored at their first exposure and never drawn again.
package struct ExperimentAssignment: Sendable, Equatable {
    package var experiment: String
    package var appAccountToken: String
    package var variant: String
    package var placement: String
    package var offering: String
    package var enrolledAt: Int64

    package init(experiment: String, appAccountToken: String, variant: String, placement: String, offering: String, enrolledAt: Int64) {
        self.experiment = experiment
        self.appAccountToken = appAccountToken
        self.variant = variant
        self.placement = placement
        self.offering = offering
        self.enrolledAt = enrolledAt
    }
}

extension Experiment {
    /// What the placement shows a customer because of the running experiments on it (in start
    /// order), while the customer is in an experiment's audience: the variant they were enrolled
    /// in, else the variant the experiment draws for them. Nil: the placement's rules decide (a
    /// customer who left the audience — who subscribed, say — keeps their assignment for the
    /// results, and sees what the rules say).
    package static func variant(
        on placement: String, experiments: [Experiment], assignments: [ExperimentAssignment], context: TargetingContext, token: String
    ) -> (experiment: Experiment, variant: Variant, enrolled: Bool)? {
        let running = experiments.filter { $0.placement == placement && $0.status == .running }
            .sorted { ($0.startedAt ?? 0, $0.id) < ($1.startedAt ?? 0, $1.id) }
        for experiment in running where experiment.audience.matches(context) {
            if let kept = assignments.first(where: { $0.experiment == experiment.id }) {
                guard let variant = experiment.variants.first(where: { $0.id == kept.variant }) else { continue }
                return (experiment, variant, true)
            }
            if let variant = experiment.draw(token) { return (experiment, variant, false) }
        }
        return nil
    }

    /// The offering a shipped experiment made the placement's own (the last one shipped).
    package static func shippedOffering(on placement: String, experiments: [Experiment]) -> (experiment: Experiment, offering: String)? {
        experiments.filter { $0.placement == placement && $0.status == .stopped && $0.shipped != nil }
            .max { ($0.stoppedAt ?? 0, $0.id) < ($1.stoppedAt ?? 0, $1.id) }
            .flatMap { experiment in
                experiment.variants.first { $0.id == experiment.shipped }.map { (experiment, $0.offering) }
            }
    }
}
