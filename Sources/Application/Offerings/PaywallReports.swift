import AppStore
package import Entitlements
package import Foundation
import Instants
package import JSON

extension OfferingService {
    /// `POST /v1/subscribers/{appAccountToken}/paywall-events`: what the app reports of a paywall.
    /// A paywall shown with the offering of the customer's variant enrolls them in its experiment
    /// (enrollment is exposure: reading the offering enrolls nobody), once: an
    /// `EXPERIMENT_ENROLLED` event, and the assignment is never drawn again.
    package func reportPaywall(
        appAccountToken: String, placement: String, offering: String, kind: PaywallEvent.Kind, device: Device, now: Date
    ) async throws -> JSONObject {
        let token = try AppAccountToken.validated(appAccountToken)
        let (configured, chosenPlacement) = try placed(placement)
        guard configured.offerings[offering] != nil else {
            throw ServiceError.badRequest(
                "no offering \"\(offering)\" (the app has \(configured.offerings.keys.sorted().joined(separator: ", ")))")
        }
        let at = Milliseconds.since1970(now)
        let (decision, _) = try await pool.perform { try decide(token, chosenPlacement, device: device, now: at) }
        // The report belongs to the experiment only when the paywall showed the variant's offering.
        let fromExperiment = decision.experiment.flatMap { decision.offering == offering ? $0 : nil }
        var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
        batch.requestedAt = at
        batch.source = "paywall"
        batch.paywallEvent = PaywallEvent(
            appAccountToken: token, kind: kind, placement: placement, offering: offering, experiment: fromExperiment?.id,
            variant: fromExperiment?.variant, at: at)
        if kind == .shown, let drawn = fromExperiment, !drawn.enrolled {
            batch.enrollment = ExperimentAssignment(
                experiment: drawn.id, appAccountToken: token, variant: drawn.variant, placement: placement, offering: offering,
                enrolledAt: at)
        }
        try await store.record(batch, outbox: eventWriter)
        var answer: JSONObject = ["recorded": .string(kind.rawValue)]
        if let drawn = fromExperiment { answer["experiment"] = .object(["id": .string(drawn.id), "variant": .string(drawn.variant)]) }
        return answer
    }
}
