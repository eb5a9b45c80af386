import Foundation
import Synchronization

/// How fast one key (or one address) may call: `perSecond` on average, `burst` at once.
package struct RateLimit: Sendable, Equatable {
    package var perSecond: Double
    package var burst: Double
    /// The largest rate and burst a configuration may set: a million a second.
    package static let maximum = 1_000_000.0

    package init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }
}

/// `rateLimits`: per API key by role (a client key per address too: it ships in the app), and per
/// client address for what no key authenticates (sign-in, the console's page). Counted by each
/// instance on its own: with several instances behind a balancer, each allows this much.
package struct RateLimitSettings: Sendable, Equatable {
    package var client = RateLimit(perSecond: 20, burst: 40)
    package var server = RateLimit(perSecond: 500, burst: 1000)
    package var admin = RateLimit(perSecond: 50, burst: 100)
    package var address = RateLimit(perSecond: 10, burst: 20)
    /// Posts to the notification and retention routes that fail verification, per address (those
    /// that verify are never limited): a forged flood is refused before it costs a verification.
    package var failedVerification = RateLimit(perSecond: 5, burst: 20)
    /// Off: no limit anywhere.
    package var enabled = true

    package init() {}

    package func limit(for role: APIKeyRole?) -> RateLimit {
        switch role {
        case .client: client
        case .server: server
        case .admin: admin
        case nil: address
        }
    }
}

/// Token buckets, one per caller (`Caller`: a key, a key and address, an address…): a request
/// takes a token, tokens come back at the limit's rate up to its burst. Memory stays bounded: when
/// `maximumBuckets` are held, those idle for a minute (refilled long since) are dropped, and if
/// that frees under a tenth, all are — a flood of new addresses costs one sweep per 10,000 of
/// them, never one per request.
package final class RateLimiter<Caller: Hashable & Sendable>: Sendable {
    package struct Verdict: Sendable, Equatable {
        package var allowed: Bool
        /// Tokens left after this request, and seconds until the bucket is full again.
        package var remaining: Int
        package var resetSeconds: Int
        /// When refused: seconds until a token comes back.
        package var retryAfter: Int
    }

    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    static var maximumBuckets: Int { 100_000 }
    private let buckets = Mutex<[Caller: Bucket]>([:])

    package init() {}

    /// The buckets held now.
    package var bucketCount: Int { buckets.withLock { $0.count } }

    /// Whether `key`'s bucket holds a token at `now`, without taking one.
    package func hasToken(_ key: Caller, limit: RateLimit, now: Double) -> Bool {
        buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return true }
            return min(limit.burst, bucket.tokens + max(0, now - bucket.updated) * limit.perSecond) >= 1
        }
    }

    /// Takes a token from `key`'s bucket at `now` (seconds, monotonic).
    package func take(_ key: Caller, limit: RateLimit, now: Double) -> Verdict {
        buckets.withLock { buckets in
            if buckets.count >= Self.maximumBuckets, buckets[key] == nil {
                buckets = buckets.filter { now - $0.value.updated < 60 }
                if buckets.count > Self.maximumBuckets * 9 / 10 { buckets.removeAll(keepingCapacity: true) }
            }
            // One lookup: the bucket is updated where it is stored.
            return Self.take(&buckets[key, default: Bucket(tokens: limit.burst, updated: now)], limit: limit, now: now)
        }
    }

    private static func take(_ bucket: inout Bucket, limit: RateLimit, now: Double) -> Verdict {
        bucket.tokens = min(limit.burst, bucket.tokens + max(0, now - bucket.updated) * limit.perSecond)
        bucket.updated = now
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        let rate = max(limit.perSecond, 0.000_1)
        return Verdict(
            allowed: allowed, remaining: Int(bucket.tokens.rounded(.down)),
            resetSeconds: Int(((limit.burst - bucket.tokens) / rate).rounded(.up)),
            retryAfter: allowed ? 0 : max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))))
    }
}
