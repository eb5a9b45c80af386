package import Entitlements
import Synchronization

/// An app's offerings and placements as the configuration says now: read by every offering
/// answer, replaced whole on SIGHUP (`EntitleApplication.reload`), so a paywall changes without a
/// restart and no answer sees half of a change.
package final class OfferingCatalog: Sendable {
    package struct Contents: Sendable {
        package var offerings: [String: Offering]
        package var placements: [String: Placement]
    }

    private let contents: Mutex<Contents>

    init(offerings: [String: Offering], placements: [String: Placement]) {
        contents = Mutex(Contents(offerings: offerings, placements: placements))
    }

    package var current: Contents { contents.withLock { $0 } }

    func replace(offerings: [String: Offering], placements: [String: Placement]) {
        contents.withLock { $0 = Contents(offerings: offerings, placements: placements) }
    }
}
