package import AppStore
import Crypto
package import Entitlements
package import Foundation
import GooglePlay
package import Instants
package import JSON

/// The application: every app's use cases over one store and one blocking pool. The HTTP server
/// and the command line both drive it; neither wires stores or services itself.
package final class EntitleApplication: Sendable {
    package let configuration: EntitleConfiguration
    package let store: any FactStore
    package let pool: BlockingPool
    /// Where calls to Apple and Google (and OCSP) run, apart from the database's work.
    package let outbound: BlockingPool
    package let authenticator: APIKeyAuthenticator
    /// Sign-in to the support console, and its sessions.
    package let console: ConsoleSessions
    package let apps: [String: AppServices]
    private let appsByBundle: [String: AppServices]
    /// What the use cases count and log (support actions among them).
    package let instrumentation: any Instrumentation
    /// The server's one clock: every instant a use case or handler uses is read from it.
    package let clock: any WallClock

    /// `clock`, `newId` (the ids of events and records) and `outboundClients` are the composition
    /// root's to give: the machine's clock, random UUIDs and Apple's API in a deployment; a moved
    /// clock and fakes or stand-ins in tests. `machineClock` is the machine's, for the one instant
    /// that must be real time even when `clock` is moved: a webhook's signed `webhook-timestamp`,
    /// which receivers check against their own clock.
    package init(
        configuration: EntitleConfiguration, store: any FactStore, pool: BlockingPool? = nil,
        revocationChecker: (any RevocationChecker)? = nil,
        instrumentation: any Instrumentation = NoInstrumentation(),
        clock: any WallClock,
        machineClock: any WallClock,
        newId: @escaping @Sendable () -> String,
        outboundClients: OutboundClients = .live
    ) throws {
        self.configuration = configuration
        self.clock = clock
        self.store = store
        self.pool = pool ?? BlockingPool(threads: configuration.server.blockingThreads)
        outbound = BlockingPool(threads: configuration.server.outboundThreads, name: "entitle-outbound")
        authenticator = APIKeyAuthenticator(apps: configuration.apps)
        console = ConsoleSessions(settings: configuration.console, authenticator: authenticator)
        let needsOCSP = configuration.apps.contains { $0.verification.onlineChecks }
        let checker = revocationChecker ?? (needsOCSP ? OCSPRevocationChecker() : nil)
        let failures = RecentFailures()
        let counting = FailureCountingInstrumentation(inner: instrumentation, failures: failures, clock: clock)
        self.instrumentation = counting
        store.unreadableRows.observe { row in counting.record(.unreadableRow(table: row.table, key: row.key)) }
        var apps: [String: AppServices] = [:]
        for app in configuration.apps {
            let context = AppContext(
                app: app, store: store, pool: self.pool, outbound: outbound, instrumentation: counting, clock: clock,
                machineClock: machineClock, newId: newId, failures: failures)
            apps[app.id] = try AppServices(
                context, revocationChecker: checker, delivery: configuration.delivery, metrics: configuration.metrics,
                outboundClients: outboundClients)
        }
        self.apps = apps
        appsByBundle = Dictionary(uniqueKeysWithValues: apps.values.map { ($0.app.bundleId, $0) })
    }

    /// The use cases of the app an API key belongs to.
    package func services(for caller: Caller) -> AppServices { apps[caller.app.id]! }

    package func services(appId: String) throws(ServiceError) -> AppServices {
        guard let services = apps[appId] else { throw .badRequest("no app \"\(appId)\" in the configuration") }
        return services
    }

    /// An App Store Server Notification, routed to the app whose bundle ID it claims (then
    /// verified against that app's verifiers). The JWS is read once for routing and verification.
    package func ingestNotification(
        signedPayload: String, body: String? = nil, receivedAt: Date,
        completion: @escaping @Sendable (Result<NotificationIngestion.Outcome, any Error>) -> Void
    ) {
        let parsed: SignedPayload
        do { parsed = try SignedPayload(signedPayload) } catch {
            completion(.failure(error))
            return
        }
        guard let bundleId = parsed.claimedNotificationBundleId, let services = appsByBundle[bundleId] else {
            let claimed = parsed.claimedNotificationBundleId ?? "(absent)"
            completion(.failure(VerificationFailure(.invalidAppIdentifier, "no configured app has bundle ID \(claimed)")))
            return
        }
        services.notifications.ingest(parsed, body: body, receivedAt: receivedAt, completion: completion)
    }

    /// A Retention Messaging realtime request, routed to the app whose `appAppleId` it claims
    /// (then verified against that app's verifiers, which check it again).
    package func answerRetention(signedPayload: String, now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void)
    {
        let parsed: SignedPayload
        do { parsed = try SignedPayload(signedPayload) } catch {
            completion(.failure(error))
            return
        }
        let claimed = parsed.payload["appAppleId"]?.integer(in: Int64.min...Int64.max)
        guard let services = apps.values.first(where: { $0.app.appAppleId != nil && $0.app.appAppleId == claimed }) else {
            completion(
                .failure(
                    VerificationFailure(.invalidAppIdentifier, "no configured app has appAppleId \(claimed.map(String.init) ?? "(absent)")")
                ))
            return
        }
        services.retention.answer(parsed, now: now, completion: completion)
    }

    /// A Pub/Sub push of a Google Play real-time developer notification: routed to the app whose
    /// package it names, trusted only once its OIDC token verifies for that app (401 otherwise,
    /// nothing stored), then applied once per `messageId` (the purchase is read from Google).
    package func ingestGooglePush(
        authorization: String?, body: [UInt8], receivedAt: Date
    ) async throws -> GooglePlayService.PushOutcome {
        guard let push = (try? JSONParser.parse(body))?.objectValue, let message = push["message"]?.objectValue,
            let data = message["data"]?.stringValue, let decoded = try? Base64.decode(data),
            let notification = (try? JSONParser.parse(decoded))?.objectValue,
            let messageId = message["messageId"]?.stringValue ?? message["message_id"]?.stringValue
        else {
            throw ServiceError.badRequest("not a Pub/Sub push of a developer notification")
        }
        let package = notification["packageName"]?.stringValue
        guard let play = apps.values.first(where: { $0.app.googlePlay?.packageName == package })?.googlePlay else {
            throw PubSubPushVerifier.Refusal(reason: "no configured app has package \(package ?? "(absent)")")
        }
        // The token's check may read Google's keys (JWKS, kept an hour): on the outbound pool.
        try await outbound.perform { try play.verifier.verify(authorization: authorization, now: receivedAt) }
        return try await play.push(notification, messageId: messageId, receivedAt: receivedAt)
    }

    /// Starts delivering every app's outbox (webhooks, forwarding) on their own threads. Pending
    /// deliveries to endpoints the configuration no longer names are marked failed first; the
    /// warnings say how many.
    @discardableResult
    package func startDeliveries() -> [String] {
        let now = clock.now()
        var warnings: [String] = []
        for (id, services) in apps.sorted(by: { $0.key < $1.key }) {
            let endpoints = Set(services.app.webhooks.map(\.url) + services.app.forwardNotifications.values)
            do {
                let abandoned = try store.abandonDeliveries(
                    appId: id, keeping: endpoints, WebhookDelivery.abandoned(at: Milliseconds.since1970(now)))
                if abandoned > 0 {
                    warnings.append("app \(id): \(abandoned) pending deliveries to endpoints no longer configured were marked failed")
                }
            } catch {
                services.instrumentation.backgroundFailed(app: id, task: "startup", error)
                warnings.append("app \(id): pending deliveries to endpoints no longer configured were not checked: \(error)")
            }
            services.deliveries?.start()
        }
        return warnings
    }

    /// Stops the deliverers; a delivery in flight ends first (its outcome is recorded).
    package func stopDeliveries() { for services in apps.values { services.deliveries?.stop() } }

    /// Stops the drainers of queued work; a call to Apple or Google in flight is cancelled, and
    /// what it was for stays due in the store for the next start.
    package func stopDueWork() { for services in apps.values { services.stopDueWork() } }

    // MARK: - Operations

    /// What `/readyz` reports. Not ready when the database does not answer, or when an app has a
    /// signed environment without a trusted root (its notifications and transactions would all be
    /// answered 503).
    package struct Readiness: Sendable {
        package var ready: Bool
        package var checks: JSONObject
    }

    package func readiness(completion: @escaping @Sendable (Readiness) -> Void) {
        pool.run({ [self] () throws -> [String: Int] in
            try store.checkHealth()
            return try lateAcknowledgements(now: clock.now())
        }) { [self] health in
            // A failure here is the answer itself: not ready, the database does not answer.
            let late: [String: Int]? = if case .success(let late) = health { late } else { nil }
            let storageReady = late != nil
            var roots = JSONObject()
            var rootsReady = true
            for app in configuration.apps {
                guard let verification = apps[app.id]?.verification else { continue }
                let missing = verification.environmentsMissingRoots
                if missing.isEmpty {
                    let names = verification.trustedRoots.map { AppleRootCertificates.appleRootName(of: $0) ?? "private root" }
                    roots[app.id] = .string(names.isEmpty ? "not needed" : names.joined(separator: ", "))
                } else {
                    rootsReady = false
                    roots[app.id] = .string(
                        "no Apple root configured for \(missing.map(\.rawValue).joined(separator: ", ")): "
                            + "verification answers 503 (run entitle fetch-apple-roots, then send SIGHUP)")
                }
            }
            var checks: JSONObject = [
                "signingKeys": .string("\(configuration.apps.count) loaded"),
                "storage": .string(storageReady ? "ok" : "the database does not answer"),
                "rootCertificates": .object(roots),
            ]
            // A warning, not unreadiness: another instance would not acknowledge them any sooner.
            if let late, !late.isEmpty {
                var acknowledgements = JSONObject()
                for (app, count) in late.sorted(by: { $0.key < $1.key }) {
                    acknowledgements[app] = .string(
                        count == 0
                            ? "ok" : "warning: \(count) purchases unacknowledged for more than a day (Google refunds them after three)")
                }
                checks["googleAcknowledgements"] = .object(acknowledgements)
            }
            // A warning too: the rows stay unreadable wherever the server runs; support must act.
            let unreadable = store.unreadableRows.rows
            if !unreadable.isEmpty {
                checks["storedRows"] = .object([
                    "warning": .string("\(unreadable.count) stored rows could not be read and are left out of every answer"),
                    "rows": .array(unreadable.map { .object(UnreadableRowsJSON.object($0)) }),
                ])
            }
            completion(Readiness(ready: storageReady && rootsReady, checks: checks))
        }
    }

    /// Per app selling on Google Play: its purchases still unacknowledged a day after they were stored.
    private func lateAcknowledgements(now: Date) throws -> [String: Int] {
        var late: [String: Int] = [:]
        for (id, services) in apps {
            guard let play = services.googlePlay else { continue }
            late[id] = try play.acknowledger.late(now: now)
        }
        return late
    }

    /// Reads the configuration file again and trusts the roots it names now (SIGHUP). Nothing
    /// else changes; a configuration with problems changes nothing. Returns the problems, or the
    /// apps whose roots were replaced.
    /// `withoutRoots`: apps that verify signed data and still have no root (SIGHUP before
    /// `entitle fetch-apple-roots` wrote any).
    /// SIGHUP: the configuration read again, and what may change without a restart taken from it —
    /// each app's trusted roots, offerings and placements. A configuration with problems changes
    /// nothing.
    package func reload() -> (replaced: [String], withoutRoots: [String], offerings: [String], problems: [String]) {
        let fresh: EntitleConfiguration
        do { fresh = try ConfigurationLoader.load(path: configuration.path) } catch { return ([], [], [], error.problems) }
        var replaced: [String] = []
        var withoutRoots: [String] = []
        var problems: [String] = []
        var offerings: [String] = []
        for app in fresh.apps {
            guard let services = apps[app.id] else { continue }
            services.offerings.catalog.replace(offerings: app.offerings, placements: app.placements)
            offerings.append(app.id)
            if app.verification.rootCertificates.isEmpty && app.environments.contains(where: \.isSigned) {
                withoutRoots.append(app.id)
            }
            do {
                try services.verification.replaceRoots(app.verification.rootCertificates)
                replaced.append(app.id)
            } catch {
                problems.append("app \(app.id): \(error)")
            }
        }
        return (replaced.filter { !withoutRoots.contains($0) }, withoutRoots, offerings, problems)
    }

    /// Start-up warnings about the configuration itself.
    package var warnings: [String] { configuration.warnings }
}
