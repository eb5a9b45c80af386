import Entitlements
import Foundation
import Instants

/// What every use case of one app works with, given once by `AppServices` instead of restated by
/// each: the app's configuration, the store, the two pools, the instrumentation, the server's one
/// clock and id source, and the memory of recent failures.
struct AppContext: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    /// Where database work runs.
    let pool: BlockingPool
    /// Where calls to Apple and Google run, and verification that may wait on OCSP.
    let outbound: BlockingPool
    let instrumentation: any Instrumentation
    /// The server's one clock (docs/ARCHITECTURE.md, "One clock, one id source").
    let clock: any WallClock
    /// The machine's clock, for what is checked against real time on the wire: a webhook's
    /// signed timestamp (docs/EVENTS.md).
    let machineClock: any WallClock
    let newId: @Sendable () -> String
    /// Refused notifications and verification failures, for the overview and the console.
    let failures: RecentFailures
}
