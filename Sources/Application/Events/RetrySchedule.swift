import Entitlements

/// When a failed delivery is tried again (docs/EVENTS.md, "Retries"): after `firstRetrySeconds`, doubling
/// each time up to `maxRetrySeconds`, each delay scattered by ±20 % so endpoints that come back
/// are not hit by every delivery at once; once `retryWindowSeconds` have passed since the
/// delivery's window began, it is dead. Pure: the caller passes the clock and the randomness.
enum RetrySchedule {
    /// `attempts` counts the attempt that just failed (1 for the first).
    static func afterFailure(
        attempts: Int, now: Int64, windowStart: Int64, settings: DeliverySettings, jitter: Double
    ) -> DeliveryOutcome.Result {
        let windowEnd = windowStart + Int64(settings.retryWindowSeconds * 1000)
        guard now < windowEnd else { return .failed(at: now) }
        let doubled = settings.firstRetrySeconds * Double(1 << min(max(attempts - 1, 0), 30))
        let delay = min(doubled, settings.maxRetrySeconds) * (0.8 + 0.4 * min(max(jitter, 0), 1))
        // The last try is made at the window's end rather than skipped.
        return .retry(at: min(now + Int64(delay * 1000), windowEnd))
    }
}
