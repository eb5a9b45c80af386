package import AppStore
import Entitlements
import Foundation
import HTTPClient
import Instants

/// Every use case of one configured app, wired once.
package final class AppServices: Sendable {
    package let app: AppConfiguration
    package let verification: VerificationService
    package let subscribers: SubscriberQueries
    package let transactions: TransactionIngestion
    package let downloads: AppDownloadPosting
    /// What each paywall sells, and the attributes apps set for targeting.
    package let offerings: OfferingService
    /// Experiments on offerings (admins).
    package let experiments: ExperimentService
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
        _ context: AppContext, revocationChecker: (any RevocationChecker)?, delivery: DeliverySettings,
        metrics metricsSettings: MetricsSettings, outboundClients: OutboundClients
    ) throws {
        let app = context.app
        self.app = app
        pool = context.pool
        outbound = context.outbound
        instrumentation = context.instrumentation
        let verification = try VerificationService(
            app: app, revocationChecker: revocationChecker, clock: { [clock = context.clock] in clock.now() })
        self.verification = verification
        let subscribers = SubscriberQueries(context)
        self.subscribers = subscribers
        let deliveries = WebhookDispatcher(context, settings: delivery)
        self.deliveries = deliveries
        let eventWriter = AppEventWriter(context, deliveries: deliveries, keepsMetrics: metricsSettings.enabled)
        events = EventFeed(context, eventWriter: eventWriter)
        // Calls to Apple and Google run their transfers on the outbound pool: at most its threads wait on them.
        let runTransfer: TransferRunner = { [outbound = context.outbound] in outbound.submit($0) }
        let clients = try outboundClients.appStore(app, runTransfer)
        let appleCalls =
            app.serverAPI.setAppAccountToken || app.serverAPI.finishTransactions
            ? clients.map { AppleCallQueue(context, clients: $0) } : nil
        self.appleCalls = appleCalls
        let google = app.googlePlay.map { outboundClients.googlePlay($0, runTransfer) }
        let refundReviews = RefundReviews(context, apple: clients ?? [:], google: google?.api, eventWriter: eventWriter)
        self.refundReviews = refundReviews
        retentionMessaging = RetentionMessaging(context, clients: clients ?? [:])
        refunds = RefundService(context, eventWriter: eventWriter)
        let notifications = NotificationIngestion(
            context, verification: verification, eventWriter: eventWriter, appleCalls: appleCalls, refundReviews: refundReviews)
        self.notifications = notifications
        let offers = OfferService(context, history: subscribers, verification: verification)
        self.offers = offers
        let sync = clients.map {
            SyncService(
                context, clients: $0, verification: verification, notifications: notifications, subscribers: subscribers,
                eventWriter: eventWriter)
        }
        self.sync = sync
        grants = GrantService(context, eventWriter: eventWriter)
        retention = RetentionService(context, verification: verification, offers: offers, eventWriter: eventWriter)
        history = CustomerHistory(context)
        search = CustomerSearch(context, subscribers: subscribers, sync: sync)
        overview = Overview(context)
        metrics = MetricsService(context, settings: metricsSettings)
        googlePlay = app.googlePlay.flatMap { settings in
            google.map {
                GooglePlayService(
                    context, settings: settings, connection: $0, subscribers: subscribers, eventWriter: eventWriter,
                    refundReviews: refundReviews)
            }
        }
        transactions = TransactionIngestion(
            context, verification: verification, subscribers: subscribers, appleCalls: appleCalls, eventWriter: eventWriter)
        downloads = AppDownloadPosting(context, verification: verification, subscribers: subscribers)
        offerings = OfferingService(context, subscribers: subscribers, eventWriter: eventWriter)
        experiments = ExperimentService(context, catalog: offerings.catalog, cache: offerings.experiments)
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

    /// Stops the queued work's drainers (Apple's calls, refund answers, Google's acknowledgements),
    /// cancelling the call each has in flight: what is not done stays due in the store.
    func stopDueWork() {
        appleCalls?.stop()
        refundReviews.stop()
        googlePlay?.acknowledger.stop()
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
