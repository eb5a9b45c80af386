import AppStore
import Application
import Entitlements
import Server

/// `entitle metrics rebuild`: computes the business figures' day sums again from the stored facts
/// (docs/METRICS.md, "Kept by the writer"): after an upgrade from a version that did not keep
/// them, or to check them. Safe while the server runs; until it ends the figures count only the
/// subscriptions done so far.
enum MetricsCommand {
    static let usage = "entitle metrics rebuild --config PATH [--app ID] [--environment Production|Sandbox]"

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["config", "app", "environment"])
        guard arguments.positionals == ["rebuild"] else { throw UsageError(usage) }
        let configuration = try loadConfiguration(arguments)
        let apps = configuration.apps.filter { app in arguments["app"].map { $0 == app.id } ?? true }
        guard !apps.isEmpty else { throw UsageError("no app \(arguments["app"] ?? "") in the configuration") }
        let store = try configuration.storage.openStore()
        for app in apps {
            for environment in app.environments.map(\.rawValue) where arguments["environment"].map({ $0 == environment }) ?? true {
                let counted = try store.rebuildMetrics(appId: app.id, environment: environment)
                Output.line("\(app.id) \(environment): the figures computed again from \(counted) subscription\(counted == 1 ? "" : "s")")
            }
        }
        return 0
    }
}
