import Crypto
import Foundation
import Synchronization

/// Remembers (leaf, intermediate) pairs whose path to a configured root has been validated, so a
/// warm verification costs one ECDSA verification plus parsing (APPSTORE.md §3.7).
///
/// Each entry keeps the window in which every certificate of the path is valid, so a hit still
/// honours the effective date of the payload at hand (offline mode verifies each payload at its
/// own `signedDate`). Entries live 15 minutes; at most 32 are kept. Only successes are stored.
public final class VerifiedChainCache: Sendable {
    public static let timeToLive: TimeInterval = 900
    public static let capacity = 32

    struct Entry: Sendable {
        let leafKey: P256.Signing.PublicKey
        /// Every certificate of the path is valid on [validFrom, validUntil).
        let validFrom: Date
        let validUntil: Date
        let expires: Date
    }

    /// Keyed by the two base64 texts of `x5c[0]` and `x5c[1]`, so a hit needs no decoding.
    private let entries = Mutex<[String: Entry]>([:])

    public init() {}

    func lookup(leaf: String, intermediate: String, now: Date) -> Entry? {
        let key = leaf + "." + intermediate
        return entries.withLock { entries in
            guard let entry = entries[key], entry.expires > now else { return nil }
            return entry
        }
    }

    func store(_ entry: Entry, leaf: String, intermediate: String, now: Date) {
        entries.withLock { entries in
            entries[leaf + "." + intermediate] = entry
            guard entries.count > Self.capacity else { return }
            entries = entries.filter { $0.value.expires > now }
            while entries.count > Self.capacity,
                  let oldest = entries.min(by: { $0.value.expires < $1.value.expires })?.key {
                entries[oldest] = nil
            }
        }
    }

    public var count: Int { entries.withLock { $0.count } }
}
