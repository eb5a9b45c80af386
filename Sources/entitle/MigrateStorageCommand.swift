import Foundation
import Storage

/// `entitle migrate-storage --from FILE --to URL`: moves a SQLite deployment to PostgreSQL. Safe to
/// run again (nothing is copied twice); exits 1 when a table has fewer rows in PostgreSQL than in
/// SQLite afterwards.
enum MigrateStorageCommand {
    static let usage = "entitle migrate-storage --from <sqlite file> --to <postgresql url>"

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["from", "to"])
        let from = try arguments.required("from")
        let to = try arguments.required("to")
        guard to.hasPrefix("postgresql://") || to.hasPrefix("postgres://") else { throw UsageError("--to must be a postgresql:// URL") }
        let reports = try StorageMigration.copy(from: from, to: to) { Output.line($0) }
        let short = reports.filter { $0.target < $0.source }
        for report in short {
            Output.error("entitle: \(report.table) has \(report.target) rows in PostgreSQL, fewer than the \(report.source) in SQLite")
        }
        let copied = reports.map(\.copied).reduce(0, +)
        Output.line(short.isEmpty ? "verified: every table has all its rows (\(copied) copied now)" : "verification failed")
        return short.isEmpty ? 0 : 1
    }
}
