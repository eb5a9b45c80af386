import Dispatch
import Entitlements
import Foundation
import HTTPClient
import Instants
import Synchronization

/// Delivers one app's outbox: a lane per endpoint (each webhook URL, each forwarding target),
/// each with its own threads and HTTP client, so a slow or dead endpoint delays only itself and
/// ingestion never waits on any. State lives in the store: a delivery is claimed with a lease,
/// then settled by its outcome, so a restart (or a crash mid-delivery) loses none.
package final class WebhookDispatcher: Sendable {
    let app: AppConfiguration
    private let lanes: [DeliveryLane]
    private let store: any FactStore
    private let instrumentation: any Instrumentation
    private let clock: any WallClock
    /// Reports the backlog while running. Set up once in `init`, then only cancelled: never
    /// shared mutable state.
    private nonisolated(unsafe) let backlogTimer: any DispatchSourceTimer
    private let running = Mutex(false)

    init?(_ context: AppContext, settings: DeliverySettings) {
        let (app, store, instrumentation, clock) = (context.app, context.store, context.instrumentation, context.clock)
        let machineClock = context.machineClock
        var lanes = app.webhooks.map {
            DeliveryLane(
                app: app.id, endpoint: $0.url, secret: $0.secret, kind: .event, store: store, settings: settings,
                instrumentation: instrumentation, clock: clock, machineClock: machineClock)
        }
        for url in Set(app.forwardNotifications.values).sorted() {
            lanes.append(
                DeliveryLane(
                    app: app.id, endpoint: url, secret: nil, kind: .forward, store: store, settings: settings,
                    instrumentation: instrumentation, clock: clock, machineClock: machineClock))
        }
        guard !lanes.isEmpty else { return nil }
        self.clock = clock
        self.app = app
        self.lanes = lanes
        self.store = store
        self.instrumentation = instrumentation
        backlogTimer = DispatchSource.makeTimerSource(queue: .global())
        backlogTimer.schedule(deadline: .now(), repeating: 5)
        backlogTimer.setEventHandler { [weak self] in self?.reportBacklog() }
        backlogTimer.resume()
    }

    deinit { backlogTimer.cancel() }

    package func start() {
        let first = running.withLock { running in
            defer { running = true }
            return !running
        }
        guard first else { return }
        for lane in lanes { lane.start() }
    }

    /// Something new is in the outbox (called after its commit).
    package func wake() { for lane in lanes { lane.wake() } }

    package func stop() {
        running.withLock { $0 = false }
        for lane in lanes { lane.stop() }
    }

    private func reportBacklog() {
        guard running.withLock({ $0 }) else { return }
        let backlog: DeliveryBacklog
        do { backlog = try store.deliveryBacklog(appId: app.id) } catch {
            instrumentation.backgroundFailed(app: app.id, task: "delivery_backlog", error)
            return
        }
        let oldest = backlog.oldestPendingCreatedAt.map { max(0, clock.now().timeIntervalSince1970 - Double($0) / 1000) } ?? 0
        instrumentation.record(
            .deliveryBacklog(app: app.id, pending: backlog.pending, failed: backlog.failed, oldestPendingSeconds: oldest))
    }
}

/// The deliveries to one endpoint, made by a few threads of its own.
final class DeliveryLane: Sendable {
    let app: String
    let endpoint: String
    let label: String
    /// The signing key of a webhook endpoint; nil for a forwarding target (Apple's payload is
    /// signed by Apple, and is passed on unchanged).
    private let secret: [UInt8]?
    private let kind: WebhookDelivery.Kind
    private let store: any FactStore
    private let settings: DeliverySettings
    private let instrumentation: any Instrumentation
    private let clock: any WallClock
    /// The machine's: the signed `webhook-timestamp` is real time, which receivers check against
    /// their own clock (within five minutes), even while the server's clock is moved.
    private let machineClock: any WallClock
    private let client: HTTPClient
    /// `wakeRequested` coalesces wake-ups: thousands of commits a second wake a waiting thread once.
    private let state = Mutex<(wakeRequested: Bool, stopped: Bool)>((false, false))
    private let bell = DispatchSemaphore(value: 0)
    /// Claims per round: many while the endpoint answers, one at a time while it fails.
    private static let batch = 64
    /// After a wake-up, how long a lane lets new events gather before claiming: under load one
    /// round then takes dozens of deliveries (one write for all their outcomes) instead of one.
    private static let gatherSeconds = 0.01
    /// How often a lane looks for due retries (and for work other processes committed).
    private static let pollSeconds = 1.0

    init(
        app: String, endpoint: String, secret: [UInt8]?, kind: WebhookDelivery.Kind, store: any FactStore,
        settings: DeliverySettings, instrumentation: any Instrumentation, clock: any WallClock, machineClock: any WallClock
    ) {
        self.app = app
        self.clock = clock
        self.machineClock = machineClock
        self.endpoint = endpoint
        label = WebhookEndpoint.label(of: endpoint)
        self.secret = secret
        self.kind = kind
        self.store = store
        self.settings = settings
        self.instrumentation = instrumentation
        var configuration = HTTPClient.Configuration()
        configuration.connectTimeout = min(settings.timeoutSeconds, 10)
        configuration.totalTimeout = settings.timeoutSeconds
        // Success is the status within the timeout; what the receiver writes after it is not
        // read past 64 KiB.
        configuration.maxResponseBytes = 64 << 10
        configuration.truncatesLargeResponses = true
        configuration.caFile = settings.caFile
        client = HTTPClient(configuration: configuration)
    }

    /// Delivery threads run at the lowest CPU priority: when the machine is saturated,
    /// acknowledging Apple and answering apps come first and deliveries catch up once the peak has
    /// passed. They still get a small share (the scheduler weighs nice 19 at 15 against 1,024),
    /// so a sustained overload slows them without stopping them.
    private static let niceness: Int32 = 19

    func start() {
        for index in 0..<settings.concurrencyPerEndpoint {
            let thread = Thread {
                // On Linux the nice value belongs to the thread: `who` 0 is the calling thread.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
                self.run()
            }
            thread.name = "entitle-delivery-\(index)"
            thread.start()
        }
    }

    func wake() {
        let ring = state.withLock { state -> Bool in
            defer { state.wakeRequested = true }
            return !state.wakeRequested
        }
        if ring { bell.signal() }
    }

    func stop() {
        state.withLock { $0.stopped = true }
        for _ in 0..<settings.concurrencyPerEndpoint { bell.signal() }
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func run() {
        var limit = Self.batch
        while !stopped {
            let now = now()
            // Long enough for every claimed attempt to time out, one after the other; a process that
            // dies holding claims leaves them to be taken again once the lease has passed.
            let lease = now + Int64(Double(limit + 1) * settings.timeoutSeconds * 1000)
            var claimed: [WebhookDelivery] = []
            do { claimed = try store.claimDeliveries(appId: app, endpoint: endpoint, now: now, leaseUntil: lease, limit: limit) } catch {
                // Waits the poll interval below, then tries again.
                instrumentation.backgroundFailed(app: app, task: "deliveries", error)
            }
            if claimed.isEmpty {
                if bell.wait(timeout: .now() + Self.pollSeconds) == .success { Thread.sleep(forTimeInterval: Self.gatherSeconds) }
                state.withLock { $0.wakeRequested = false }
                continue
            }
            // A full claim means more may be due: let a sibling thread work too.
            if claimed.count == limit { bell.signal() }
            let outcomes = claimed.map(deliver)
            do { try store.record(outcomes) } catch {
                // The claims stay leased: these deliveries are made again once the lease has passed.
                instrumentation.backgroundFailed(app: app, task: "deliveries", error)
            }
            limit = outcomes.allSatisfy({ if case .delivered = $0.result { true } else { false } }) ? Self.batch : 1
        }
    }

    private func now() -> Int64 { clock.milliseconds }

    /// One POST. Any 2xx within the timeout is success; every other end is retried.
    private func deliver(_ delivery: WebhookDelivery) -> DeliveryOutcome {
        let timestamp = machineClock.milliseconds / 1000
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("User-Agent", "Entitle/\(EntitleVersion.current)"),
        ]
        if let secret, let eventId = delivery.eventId {
            headers += [
                ("webhook-id", eventId), ("webhook-timestamp", String(timestamp)),
                ("webhook-signature", WebhookSignature.header(id: eventId, timestamp: timestamp, body: delivery.body, secret: secret)),
            ]
        }
        var status: Int?
        var failure: String?
        do {
            let response = try client.send(
                HTTPClientRequest(method: "POST", url: endpoint, headers: headers, body: Array(delivery.body.utf8)))
            status = response.status
            if !(200..<300).contains(response.status) { failure = "answered \(response.status)" }
        } catch {
            failure = error.message.replacingOccurrences(of: endpoint, with: label)
        }
        let now = now()
        let result: DeliveryOutcome.Result =
            failure == nil
            ? .delivered(at: now)
            : RetrySchedule.afterFailure(
                attempts: delivery.attempts + 1, now: now, windowStart: delivery.windowStart, settings: settings,
                jitter: Double.random(in: 0...1))
        let resultName =
            switch result {
            case .delivered: "delivered"
            case .retry: "retry"
            case .failed: "failed"
            }
        instrumentation.record(
            .deliveryAttempted(
                app: app, endpoint: label, kind: kind.rawValue, result: resultName, httpStatus: status, error: failure))
        return DeliveryOutcome(id: delivery.id, result: result, httpStatus: status, error: failure)
    }
}
