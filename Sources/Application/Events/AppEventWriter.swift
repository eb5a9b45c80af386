import Entitlements
import Foundation
import Instants
import JSON

/// One app's outbox as the use cases see it: the domain's composer, which the store's writer
/// runs inside the write (with the real clock and random ids), and what happens once a write
/// that put something in the outbox has committed.
struct AppEventWriter: Sendable {
    let app: AppConfiguration
    let instrumentation: any Instrumentation
    /// Wakes the deliverers (nil when the app has no endpoints).
    let deliveries: WebhookDispatcher?
    /// Made once: every write of the app carries it.
    var composer: EventComposer

    init(_ context: AppContext, deliveries: WebhookDispatcher?, keepsMetrics: Bool) {
        app = context.app
        instrumentation = context.instrumentation
        self.deliveries = deliveries
        let clock = context.clock
        composer = EventComposer(
            appId: app.id, rules: app.viewRules, endpoints: app.webhooks.map(\.eventEndpoint), clock: { clock.milliseconds },
            newId: context.newId)
        composer.retentionWindow = app.retention.map { Int64($0.saveWindowDays) * 86_400_000 }
        composer.keepsMetrics = keepsMetrics
    }

    /// Once the transaction holding `events` (or a forward) has committed: count them and wake
    /// the deliverers.
    func committed(_ events: [OutboxEvent]) {
        for event in events {
            instrumentation.record(.eventWritten(app: app.id, type: event.type))
            // Saves are counted by the rule that answered (rare: its body is read for it).
            if event.type == CustomerEvent.Kind.retentionSaved.rawValue,
                let rule = JSONParser.storedObject(event.body)?["retention"]?["rule"]?.stringValue
            {
                instrumentation.record(.retentionSaved(app: app.id, rule: rule))
            }
        }
        deliveries?.wake()
    }
}
