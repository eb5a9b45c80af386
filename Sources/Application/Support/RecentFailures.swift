import Instants
import Synchronization

/// Verification failures of the last day, per app and hour, counted as they happen (the overview's
/// "verification failures"), and the last refused notifications (the console's notifications with
/// the result "refused"). Refused data is not stored, so this instance's own memory is what there
/// is; `/metrics` keeps the running totals.
package final class RecentFailures: Sendable {
    private static let hour: Int64 = 3_600_000
    /// How many refused notifications each app keeps.
    static let refusalsKept = 200
    /// app → hour start → "source kind result" → count.
    private let counts = Mutex<[String: [Int64: [String: Int]]]>([:])
    private let refusals = Mutex<[String: [RefusedNotification]]>([:])

    package init() {}

    /// A notification that was refused, with what it claimed (unverified: shown, never trusted).
    package struct RefusedNotification: Sendable {
        package var receivedAt: Int64
        package var claimedType: String?
        package var claimedSubtype: String?
        package var claimedUUID: String?
        package var claimedEnvironment: String?
        package var status: String
        package var reason: String
    }

    func refused(_ notification: RefusedNotification, app: String) {
        refusals.withLock { refusals in
            refusals[app, default: []].append(notification)
            if refusals[app]!.count > Self.refusalsKept { refusals[app]!.removeFirst(refusals[app]!.count - Self.refusalsKept) }
        }
    }

    /// Newest first.
    func refusedNotifications(app: String) -> [RefusedNotification] { refusals.withLock { ($0[app] ?? []).reversed() } }

    func record(app: String, source: String, kind: String, result: String, at now: Int64) {
        let hour = now / Self.hour * Self.hour
        counts.withLock { counts in
            counts[app, default: [:]][hour, default: [:]]["\(source) \(kind) \(result)", default: 0] += 1
            // Forget what is older than a day.
            counts[app] = counts[app]?.filter { $0.key > hour - 24 * Self.hour }
        }
    }

    /// Failures since `since`, by `source kind result`.
    func counts(app: String, since: Int64) -> [String: Int] {
        counts.withLock { counts in
            var total: [String: Int] = [:]
            for (hour, byKind) in counts[app] ?? [:] where hour + Self.hour > since {
                for (key, count) in byKind { total[key, default: 0] += count }
            }
            return total
        }
    }
}

/// Passes every observation on, and remembers verification failures for the overview.
struct FailureCountingInstrumentation: Instrumentation {
    let inner: any Instrumentation
    let failures: RecentFailures
    let clock: any WallClock

    func record(_ observation: Observation) {
        inner.record(observation)
        if case .verified(let app, let source, let kind, let result) = observation, result != "VALID" {
            failures.record(app: app, source: source, kind: kind, result: result, at: clock.milliseconds)
        }
    }
}
