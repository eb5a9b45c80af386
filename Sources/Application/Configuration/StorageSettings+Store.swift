import Entitlements
import Storage

extension StorageSettings {
    /// The store the configuration names: the shared PostgreSQL database when set, else the
    /// SQLite file. Opening applies pending migrations.
    public func openStore() throws -> any FactStore {
        if let postgresql { return try PostgreSQLFactStore(url: postgresql.url, poolSize: postgresql.poolSize) }
        return try SQLiteFactStore(path: sqlitePath)
    }

    /// What logs and check-config say about the store (never a password).
    public var summary: String {
        if let postgresql { return "PostgreSQL \(postgresql.redactedURL), pool of \(postgresql.poolSize)" }
        return "SQLite \(sqlitePath)"
    }
}
