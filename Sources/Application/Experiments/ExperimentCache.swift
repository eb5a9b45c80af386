import Entitlements
import Instants
import Synchronization

/// An app's experiments as last read, for every offering answer: read again once a second at
/// most, and at once after this instance changed one. Another instance's start or stop is seen
/// within a second (docs/EXPERIMENTS.md); each answer costs no read of its own.
final class ExperimentCache: Sendable {
    private let app: String
    private let store: any FactStore
    private let clock: any WallClock
    private let kept: Mutex<(readAt: Int64, experiments: [Experiment])?> = Mutex(nil)
    static let lifetimeMilliseconds: Int64 = 1_000

    init(app: String, store: any FactStore, clock: any WallClock) {
        self.app = app
        self.store = store
        self.clock = clock
    }

    /// The experiments (blocking: a read of the store when the copy is older than a second).
    func experiments() throws -> [Experiment] {
        let now = Milliseconds.since1970(clock.now())
        if let copy = kept.withLock({ $0 }), now - copy.readAt < Self.lifetimeMilliseconds, now >= copy.readAt {
            return copy.experiments
        }
        let read = try store.experiments(appId: app)
        kept.withLock { $0 = (now, read) }
        return read
    }

    /// After this instance wrote an experiment: the next answer reads them again.
    func forget() { kept.withLock { $0 = nil } }
}
