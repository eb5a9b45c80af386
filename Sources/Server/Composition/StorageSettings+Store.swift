package import Application
package import Entitlements
import Foundation
import Storage

/// The composition root opens the store: the use cases see only the domain's `FactStore`.
extension StorageSettings {
    /// The store the configuration names: the shared PostgreSQL database when set, else the
    /// SQLite file. Opening applies pending migrations. The store's own background work (the
    /// PostgreSQL metric roll-up) reports its failures to `instrumentation` (logged and counted).
    package func openStore(instrumentation: (any Instrumentation)? = nil) throws -> any FactStore {
        if let postgresql {
            let report: @Sendable (String, any Error) -> Void =
                if let instrumentation {
                    { task, error in instrumentation.backgroundFailed(app: "", task: task, error) }
                } else {
                    PostgreSQLFactStore.printBackgroundFailure
                }
            return try PostgreSQLFactStore(url: postgresql.url, poolSize: postgresql.poolSize, reportBackgroundFailure: report)
        }
        return try SQLiteFactStore(path: sqlitePath)
    }

    /// Whether `serve` could open the store, without changing it: PostgreSQL is connected to
    /// once (no migration); for SQLite the file, or the folder it would be made in, must be
    /// writable. The error says what was tried and why it failed (never a password).
    package func checkReachable() throws(ConfigurationError) {
        if let postgresql {
            do { try PostgreSQLFactStore.checkConnection(url: postgresql.url) } catch {
                throw ConfigurationError(problems: ["storage: tried to connect to \(summary): \(error)"])
            }
            return
        }
        let files = FileManager.default
        let folder = (sqlitePath as NSString).deletingLastPathComponent
        let target = files.fileExists(atPath: sqlitePath) ? sqlitePath : (folder.isEmpty ? "." : folder)
        guard files.isWritableFile(atPath: target) else {
            throw ConfigurationError(problems: ["storage: SQLite \(sqlitePath): \(target) is not writable (or does not exist)"])
        }
    }

    /// What logs and check-config say about the store (never a password).
    package var summary: String {
        if let postgresql { return "PostgreSQL \(postgresql.redactedURL), pool of \(postgresql.poolSize)" }
        return "SQLite \(sqlitePath)"
    }
}
