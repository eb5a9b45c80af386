import Application
import HTTP
import Instants

/// Every endpoint of docs/openapi.json (docs/API.md explains them), each a thin adapter over one
/// use case; `OpenAPIDocumentTests` fails when the two differ.
enum Routes {
    static func make(_ application: EntitleApplication, metrics: Metrics, testStore composition: TestStoreComposition? = nil) -> Router {
        let testStore = composition?.service
        let operations = OperationsHandlers(application: application, metrics: metrics)
        let offers = OfferHandlers(application: application)
        let verify = VerifyHandler(application: application)
        let subscribers = SubscriberHandlers(application: application)
        let offerings = OfferingHandlers(application: application)
        let notifications = NotificationHandler(application: application)
        let sync = SyncHandlers(application: application)
        let events = EventHandlers(application: application)
        let support = SupportHandlers(application: application)
        let console = ConsoleHandlers(application: application)
        let googlePlay = GooglePlayHandlers(application: application)
        let refunds = RefundHandlers(application: application)
        let retention = RetentionHandler(application: application)
        let metricsAPI = MetricsHandlers(application: application)
        let testStoreAPI = TestStoreHandlers(application: application, testStore: testStore)
        let appleAPI = TestStoreAppleAPIHandlers(application: application, testStore: testStore)
        let google = TestStoreGoogleHandlers(
            application: application, testStore: testStore, tokenURL: { composition?.googleURLs.token ?? "" })
        // The answer's time is the machine's: the app compares it with its own clock.
        let signing = ResponseSigning(application.configuration.responseSigning, clock: SystemClock())
        let signed = { (handler: @escaping HTTPHandler) -> HTTPHandler in signing?.signing(handler) ?? handler }
        var router = Router()
        router.add("GET", "/healthz") { operations.health($0) }
        router.add("GET", "/readyz") { operations.readiness($0) }
        router.add("GET", "/metrics") { operations.metrics($0) }
        router.add("GET", "/openapi.json") { OpenAPIHandler.serve($0) }
        router.add("GET", "/.well-known/entitle/jwks.json") { OperationsHandlers.jwks($0, signing: signing) }
        router.add("POST", "/v1/promotional-offers/sign", signed { offers.signPromotionalOffer($0) })
        router.add("POST", "/v1/introductory-offers/eligibility", signed { offers.introductoryOfferEligibility($0) })
        router.add("POST", "/v1/verify") { verify.handle($0) }
        router.add("POST", "/v1/transactions", signed { subscribers.postTransaction($0) })
        router.add("POST", "/v1/app-transactions", signed { subscribers.postAppTransaction($0) })
        router.add("POST", "/v1/notifications/apple") { notifications.handle($0) }
        router.add("POST", "/v1/notifications/google") { googlePlay.push($0) }
        router.add("POST", "/v1/retention/apple") { retention.handle($0) }
        for path in ["/v1/retention/messages", "/v1/retention/images"] {
            router.add("GET", path) { retention.manage($0) }
            router.add("PUT", path + "/{id}") { retention.manage($0) }
            router.add("DELETE", path + "/{id}") { retention.manage($0) }
        }
        for method in ["GET", "PUT", "DELETE"] {
            router.add(method, "/v1/retention/defaults/{productId}/{locale}") { retention.manage($0) }
            router.add(method, "/v1/retention/realtime-url") { retention.manage($0) }
        }
        router.add("POST", "/v1/retention/performance-test") { retention.manage($0) }
        router.add("GET", "/v1/retention/performance-test/{requestId}") { retention.manage($0) }
        router.add("POST", "/v1/purchases/google") { googlePlay.postPurchase($0) }
        router.add("POST", "/v1/purchases/google/voided") { googlePlay.syncVoided($0) }
        router.add("POST", "/v1/offers/google/select") { googlePlay.selectOffer($0) }
        router.add("GET", "/v1/notifications") { subscribers.listNotifications($0) }
        router.add("GET", "/v1/notifications/refused") { subscribers.listRefusedNotifications($0) }
        router.add("GET", "/v1/subscribers/by-transaction/{originalTransactionId}") { subscribers.getSubscriberByTransaction($0) }
        router.add("GET", "/v1/subscribers/by-app-transaction/{appTransactionId}") { subscribers.getSubscriberByAppTransaction($0) }
        router.add("GET", "/v1/subscribers") { support.search($0) }
        router.add("GET", "/v1/subscribers/{appAccountToken}", signed(EntityTag.conditional { subscribers.getSubscriber($0) }))
        router.add("GET", "/v1/subscribers/{appAccountToken}/offerings", signed { offerings.offering($0) })
        router.add("POST", "/v1/subscribers/{appAccountToken}/attributes", signed { offerings.setAttributes($0) })
        router.add("GET", "/v1/offerings") { offerings.list($0) }
        router.add("POST", "/v1/subscribers/{appAccountToken}/paywall-events", signed { offerings.reportPaywall($0) })
        router.add("POST", "/v1/experiments") { offerings.createExperiment($0) }
        router.add("GET", "/v1/experiments") { offerings.listExperiments($0) }
        router.add("POST", "/v1/experiments/{id}/{action}") { offerings.changeExperiment($0) }
        router.add("GET", "/v1/subscribers/{appAccountToken}/history") { support.history($0) }
        router.add("POST", "/v1/subscribers/{appAccountToken}/entitlements/{entitlementId}/grants") { support.grant($0) }
        router.add("DELETE", "/v1/subscribers/{appAccountToken}/entitlements/{entitlementId}/grants/{grantId}") { support.revoke($0) }
        router.add("GET", "/v1/stats") { support.stats($0) }
        router.add("GET", "/v1/metrics/summary") { metricsAPI.summary($0) }
        router.add("GET", "/v1/metrics/{name}") { metricsAPI.series($0) }
        router.add("POST", "/v1/subscribers/{appAccountToken}/usage") { refunds.recordUsage($0) }
        router.add("GET", "/v1/subscribers/{appAccountToken}/refund-override") { refunds.override($0) }
        router.add("PUT", "/v1/subscribers/{appAccountToken}/refund-override") { refunds.override($0) }
        router.add("DELETE", "/v1/subscribers/{appAccountToken}/refund-override") { refunds.override($0) }
        router.add("GET", "/v1/refund-requests") { refunds.list($0) }
        router.add("POST", "/v1/subscribers/{appAccountToken}/sync") { sync.syncSubscriber($0) }
        router.add("POST", "/v1/transactions/{transactionId}/sync") { sync.syncTransaction($0) }
        router.add("POST", "/v1/notifications/apple/backfill") { sync.backfill($0) }
        router.add("GET", "/v1/events") { events.listEvents($0) }
        router.add("GET", "/v1/events/{id}") { events.getEvent($0) }
        router.add("GET", "/v1/webhooks/deliveries") { events.listDeliveries($0) }
        router.add("POST", "/v1/webhooks/deliveries/{id}/retry") { events.retryDelivery($0) }
        router.add("POST", "/v1/webhooks/test") { events.sendTest($0) }
        router.add("GET", "/console") { console.page($0) }
        router.add("GET", "/console/console.js") { console.script($0) }
        router.add("GET", "/console/format.js") { console.formatting($0) }
        router.add("GET", "/console/console.css") { console.style($0) }
        router.add("POST", "/console/session") { console.signIn($0) }
        router.add("GET", "/console/session") { console.current($0) }
        router.add("DELETE", "/console/session") { console.signOut($0) }
        router.add("GET", "/v1/test-store/clock") { testStoreAPI.clock($0) }
        router.add("POST", "/v1/test-store/clock") { testStoreAPI.moveClock($0) }
        router.add("POST", "/v1/test-store/apple/purchases") { testStoreAPI.applePurchase($0) }
        router.add("POST", "/v1/test-store/apple/app-transactions") { testStoreAPI.appleAppTransaction($0) }
        router.add("POST", "/v1/test-store/scenarios") { testStoreAPI.runScenario($0) }
        router.add("POST", "/v1/test-store/apple/transactions/{transactionId}/{action}") {
            testStoreAPI.appleTransactionAction($0)
        }
        router.add("POST", "/v1/test-store/apple/ask-to-buy/{requestId}/{decision}") { testStoreAPI.appleAskToBuy($0) }
        router.add("POST", "/v1/test-store/apple/subscriptions/{originalTransactionId}/{action}") {
            testStoreAPI.appleSubscriptionAction($0)
        }
        let served = TestStoreComposition.appleAPIPath
        router.add("GET", served + "/inApps/v1/transactions/{transactionId}") { appleAPI.transactionInfo($0) }
        router.add("GET", served + "/inApps/v2/history/{transactionId}") { appleAPI.transactionHistory($0) }
        router.add("GET", served + "/inApps/v1/subscriptions/{transactionId}") { appleAPI.subscriptionStatuses($0) }
        router.add("GET", served + "/inApps/v2/refund/lookup/{transactionId}") { appleAPI.refundHistory($0) }
        router.add("GET", served + "/inApps/v1/lookup/{orderId}") { appleAPI.orderLookup($0) }
        router.add("PUT", served + "/inApps/v1/transactions/{originalTransactionId}/appAccountToken") { appleAPI.setAppAccountToken($0) }
        router.add("PUT", served + "/inApps/v2/transactions/consumption/{transactionId}") { appleAPI.sendConsumption($0) }
        router.add("POST", served + "/inApps/v1/notifications/history") { appleAPI.notificationHistory($0) }
        TestStoreAppleAPIHandlers.addMessagingRoutes(&router, base: served, handlers: appleAPI)
        TestStoreGoogleHandlers.addRoutes(&router, handlers: google)
        return router
    }
}
