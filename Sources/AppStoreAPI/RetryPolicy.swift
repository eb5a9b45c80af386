package import Foundation

/// Retries what may succeed later (docs/APP_STORE.md §5.6) — 429 after its `Retry-After`, the
/// `…Retryable` codes, 5xx and transport failures — with capped exponential backoff and jitter,
/// bounded in attempts and in total time. Everything else fails at once. Outside the client, so
/// each call site chooses whether to retry.
package struct RetryPolicy: Sendable {
    package var maxAttempts = 4
    package var baseDelay: TimeInterval = 0.5
    package var maxDelay: TimeInterval = 8
    /// No retry starts after this much time has gone by since the first attempt.
    package var maxTotal: TimeInterval = 30
    /// Waits between attempts: a timer (`Task.sleep`), so no thread is held meanwhile. Injected
    /// in tests.
    package var pause: @Sendable (TimeInterval) async -> Void = { seconds in
        // Cancelled: stop waiting; the attempt that follows decides.
        try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }
    package var now: @Sendable () -> Date = { Date() }

    package init() {}

    /// `operation` until it succeeds, fails for good, or the bounds are reached. It should hand
    /// its blocking call to a pool (`BlockingPool.perform`) and await it.
    package func run<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        let start = now()
        var attempt = 1
        while true {
            do {
                return try await operation()
            } catch let error as AppStoreAPIError {
                guard error.isRetryable, attempt < maxAttempts else { throw error }
                let delay = self.delay(after: error, attempt: attempt)
                guard now().timeIntervalSince(start) + delay <= maxTotal else { throw error }
                await pause(delay)
                attempt += 1
            }
        }
    }

    /// `Retry-After` (epoch milliseconds, as Apple documents it) when given, else backoff with jitter.
    func delay(after error: AppStoreAPIError, attempt: Int) -> TimeInterval {
        if case .api(_, _, _, let retryAfter?, _) = error {
            let wait = Double(retryAfter) / 1000 - now().timeIntervalSince1970
            return min(max(wait, 0), maxDelay)
        }
        let exponential = min(baseDelay * pow(2, Double(attempt - 1)), maxDelay)
        return exponential / 2 + Double.random(in: 0...(exponential / 2))
    }
}

/// Production first; on `TransactionIdNotFound` the same call against Sandbox (§5.8), for apps
/// that enable both and do not know a transaction's environment.
package struct EnvironmentFallback: Sendable {
    package let production: AppStoreServerAPIClient
    package let sandbox: AppStoreServerAPIClient

    package init(production: AppStoreServerAPIClient, sandbox: AppStoreServerAPIClient) {
        self.production = production
        self.sandbox = sandbox
    }

    package func run<T>(
        _ call: (AppStoreServerAPIClient) async throws(AppStoreAPIError) -> T
    ) async throws(AppStoreAPIError) -> (T, environment: String) {
        do {
            return (try await call(production), production.environment)
        } catch  where error.apiCode == .transactionIdNotFound {
            return (try await call(sandbox), sandbox.environment)
        }
    }
}
