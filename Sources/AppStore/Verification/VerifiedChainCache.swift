import Crypto
package import Foundation
import Synchronization

/// Remembers (leaf, intermediate) pairs whose path to a configured root has been validated, so a
/// warm verification costs one ECDSA verification plus parsing (docs/APP_STORE.md §3.7).
///
/// The key is the JWS header's exact text, which holds `alg` and the whole `x5c`: the same
/// header always names the same pair, and a different intermediate is a different header.
///
/// Each entry keeps the window in which every certificate of the path is valid, so a hit still
/// honours the effective date of the payload at hand (offline mode verifies each payload at its
/// own `signedDate`). Entries live 15 minutes; at most 32 are kept. Only successes are stored.
package final class VerifiedChainCache: Sendable {
    package static let timeToLive: TimeInterval = 900
    /// How many validated pairs are kept; 0 disables the cache (every verification validates).
    package let capacity: Int

    struct Entry: Sendable {
        let leafKey: P256.Signing.PublicKey
        /// Every certificate of the path is valid on [validFrom, validUntil).
        let validFrom: Date
        let validUntil: Date
        let expires: Date
    }

    /// Keyed by the header segment's bytes, so a hit needs no decoding at all.
    private let entries = Mutex<[HeaderKey: Entry]>([:])

    /// Equality compares every byte; the hash reads the length and the first 256 bytes in one
    /// pass, which already hold the leaf certificate's serial number (a collision costs a compare,
    /// never a wrong answer).
    struct HeaderKey: Hashable, Sendable {
        let bytes: ArraySlice<UInt8>
        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.count)
            bytes.prefix(256).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    package init(capacity: Int = 32) { self.capacity = capacity }

    func lookup(_ key: ArraySlice<UInt8>, now: Date) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[HeaderKey(bytes: key)], entry.expires > now else { return nil }
            return entry
        }
    }

    func store(_ entry: Entry, under key: ArraySlice<UInt8>, now: Date) {
        guard capacity > 0 else { return }
        entries.withLock { [capacity] entries in
            entries[HeaderKey(bytes: ArraySlice(Array(key)))] = entry  // a copy: the entry must not keep the whole JWS
            guard entries.count > capacity else { return }
            entries = entries.filter { $0.value.expires > now }
            while entries.count > capacity,
                let oldest = entries.min(by: { $0.value.expires < $1.value.expires })?.key
            {
                entries[oldest] = nil
            }
        }
    }

    package var count: Int { entries.withLock { $0.count } }
}
