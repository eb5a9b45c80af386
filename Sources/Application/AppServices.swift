package import AppStore
import Entitlements
import Foundation
import Instants

/// Every use case of one configured app, wired once.
package final class AppServices: Sendable {
    package let app: AppConfiguration
    package let verification: VerificationService
    package let subscribers: SubscriberQueries
    package let transactions: TransactionIngestion
    package let notifications: NotificationIngestion
    package let offers: OfferService
    /// Nil when the app cannot call the App Store Server API (no issuer ID).
    package let sync: SyncService?
    /// The calls owed to Apple (Set App Account Token, Finish Transaction), when the app asks for
    /// either and can call the API.
    let appleCalls: AppleCallQueue?
    /// The pull feed and delivery control.
    package let events: EventFeed
    /// Delivers the outbox, when the app has webhook endpoints or forwards notifications.
    package let deliveries: WebhookDispatcher?
    /// Support's work (admin keys): grants, a customer's history, search, the overview.
    package let grants: GrantService
    package let history: CustomerHistory
    package let search: CustomerSearch
    package let overview: Overview
    /// The business figures (MRR, trials, churn, refunds) from the stored facts.
    package let metrics: MetricsService
    /// The app's Google Play side, when it sells there.
    package let googlePlay: GooglePlayService?
    /// Answers the stores' refund requests.
    let refundReviews: RefundReviews
    package let refunds: RefundService
    /// Apple's realtime retention requests, and the messages they answer with.
    package let retention: RetentionService
    package let retentionMessaging: RetentionMessaging
    let pool: BlockingPool
    let outbound: BlockingPool
    let instrumentation: any Instrumentation

    init(
        app: AppConfiguration, store: any FactStore, pool: BlockingPool, outbound: BlockingPool,
        revocationChecker: (any RevocationChecker)?,
        delivery: DeliverySettings, instrumentation: any Instrumentation, failures: RecentFailures,
        metrics metricsSettings: MetricsSettings = MetricsSettings(), clock: any WallClock,
        newId: @escaping @Sendable () -> String, outboundClients: OutboundClients
    ) throws {
        self.app = app
        self.pool = pool
        self.outbound = outbound
        self.instrumentation = instrumentation
        verification = try VerificationService(app: app, revocationChecker: revocationChecker, clock: { clock.now() })
        subscribers = SubscriberQueries(app: app, store: store, pool: pool)
        let deliveries = WebhookDispatcher(app: app, store: store, settings: delivery, instrumentation: instrumentation, clock: clock)
        self.deliveries = deliveries
        let eventWriter = AppEventWriter(
            app: app, instrumentation: instrumentation, deliveries: deliveries, clock: clock, newId: newId,
            keepsMetrics: metricsSettings.enabled)
        events = EventFeed(app: app, store: store, pool: pool, eventWriter: eventWriter)
        let clients = try outboundClients.appStore(app)
        let appleCalls =
            app.serverAPI.setAppAccountToken || app.serverAPI.finishTransactions
            ? clients.map {
                AppleCallQueue(app: app, store: store, pool: outbound, clients: $0, instrumentation: instrumentation, clock: clock)
            } : nil
        self.appleCalls = appleCalls
        let google = app.googlePlay.map(outboundClients.googlePlay)
        let refundReviews = RefundReviews(
            app: app, store: store, pool: outbound, apple: clients ?? [:], google: google?.api, eventWriter: eventWriter,
            instrumentation: instrumentation, retrySeconds: app.refundRetrySeconds, clock: clock)
        self.refundReviews = refundReviews
        retentionMessaging = RetentionMessaging(app: app, clients: clients ?? [:], outbound: outbound)
        refunds = RefundService(app: app, store: store, pool: pool, eventWriter: eventWriter)
        var notifications = NotificationIngestion(
            app: app, verification: verification, store: store, outbound: outbound,
            instrumentation: instrumentation, eventWriter: eventWriter, appleCalls: appleCalls)
        notifications.refundReviews = refundReviews
        notifications.failures = failures
        self.notifications = notifications
        offers = OfferService(
            app: app, history: subscribers, verification: verification, pool: pool, instrumentation: instrumentation)
        let (verification, subscribers) = (verification, subscribers)
        var sync = clients.map {
            SyncService(
                app: app, clients: $0, verification: verification, notifications: notifications, subscribers: subscribers,
                store: store, pool: pool, outbound: outbound, instrumentation: instrumentation, clock: clock)
        }
        sync?.eventWriter = eventWriter
        self.sync = sync
        grants = GrantService(app: app, store: store, pool: pool, eventWriter: eventWriter)
        retention = RetentionService(
            app: app, verification: verification, store: store, offers: offers, pool: pool, eventWriter: eventWriter,
            instrumentation: instrumentation)
        history = CustomerHistory(app: app, store: store, pool: pool)
        search = CustomerSearch(app: app, store: store, subscribers: subscribers, sync: sync, pool: pool)
        overview = Overview(app: app, store: store, pool: pool, failures: failures)
        metrics = MetricsService(app: app, store: store, pool: pool, settings: metricsSettings)
        let queries = subscribers
        var googlePlay = app.googlePlay.flatMap { settings in
            google.map {
                GooglePlayService(
                    app: app, settings: settings, connection: $0, store: store, subscribers: queries, outbound: outbound,
                    instrumentation: instrumentation, clock: clock)
            }
        }
        googlePlay?.eventWriter = eventWriter
        googlePlay?.refundReviews = refundReviews
        self.googlePlay = googlePlay
        transactions = TransactionIngestion(
            app: app, verification: verification, store: store, subscribers: subscribers,
            outbound: outbound, instrumentation: instrumentation, appleCalls: appleCalls, eventWriter: eventWriter)
    }

    /// `POST /v1/verify`: verifies and decodes one signed item without storing it (on the pool
    /// when verification waits on OCSP).
    package func verify(
        _ jws: String, kind: SignedPayloadKind,
        completion: @escaping @Sendable (VerificationOutcome) -> Void
    ) {
        let work: @Sendable () -> Void = { [self] in
            let outcome = verification.verify(jws, kind: kind)
            instrumentation.record(.verified(app: app.id, source: "verify", kind: kind.rawValue, result: outcome.result.statusName))
            for item in outcome.nested {
                instrumentation.record(.verified(app: app.id, source: "verify", kind: item.kind.rawValue, result: item.result.statusName))
            }
            completion(outcome)
        }
        verification.schedule(work, on: outbound) {
            completion(
                VerificationOutcome(
                    kind: kind, environment: nil,
                    result: .invalid(VerificationFailure(.retryableVerificationFailure, "the server is busy; try again"))))
        }
    }

    /// The Google Play use cases, or why the app has none.
    package func requireGooglePlay() throws(ServiceError) -> GooglePlayService {
        guard let googlePlay else {
            throw ServiceError(status: 422, code: "GOOGLE_PLAY_NOT_CONFIGURED", message: "this app has no googlePlay configuration")
        }
        return googlePlay
    }

    /// The sync use cases, or why the app has none.
    package func requireSync() throws(ServiceError) -> SyncService {
        guard let sync else {
            throw ServiceError(
                status: 422, code: "SYNC_NOT_CONFIGURED",
                message: "the App Store Server API needs signingKey.issuerId for this app")
        }
        return sync
    }
}
