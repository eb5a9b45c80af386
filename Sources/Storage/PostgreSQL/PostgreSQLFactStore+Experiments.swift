package import Entitlements

/// Experiments on offerings, customers' assignments and paywall reports.
extension PostgreSQLFactStore {
    package func experiments(appId: String) throws -> [Experiment] {
        try pool.with { db in
            try db.execute("SELECT id, body FROM experiments WHERE app_id = $1 ORDER BY created_at, id", [.text(appId)]).rows.compactMap {
                row in
                guard let experiment = StoredJSON.object(row[1]).flatMap(Experiment.init(stored:)) else {
                    unreadableRows.record(UnreadableRow(table: "experiments", key: row[0] ?? ""))
                    return nil
                }
                return experiment
            }
        }
    }

    static let assignmentColumns = StoredTable.list(AssignmentCodec.read)
    static let assignmentsStatement =
        "SELECT \(assignmentColumns) FROM experiment_assignments WHERE app_id = $1 AND app_account_token = $2 ORDER BY enrolled_at, experiment"

    static func assignment(_ row: [String?]) -> ExperimentAssignment { AssignmentCodec.record(PostgreSQLRow(row: row)) }

    package func experimentAssignments(appId: String, appAccountToken: String) throws -> [ExperimentAssignment] {
        try pool.with { db in
            try db.execute(Self.assignmentsStatement, [.text(appId), .text(appAccountToken)]).rows.map(Self.assignment)
        }
    }

    package func enrollmentCounts(appId: String, experiment: String) throws -> [String: Int64] {
        try pool.with { db in
            var counts: [String: Int64] = [:]
            for row in try db.execute(
                "SELECT variant, COUNT(*) FROM experiment_assignments WHERE app_id = $1 AND experiment = $2 GROUP BY variant",
                [.text(appId), .text(experiment)]
            ).rows {
                counts[row[0] ?? ""] = row[1].flatMap { Int64($0) } ?? 0
            }
            return counts
        }
    }
}

extension PostgreSQLWriteTransaction {
    func putExperiment(_ experiment: Experiment) throws {
        try db.executeLater(ExperimentCodec.table.postgresPut, ExperimentCodec.values(appId: appId, experiment))
    }

    func insertAssignmentIfNew(_ assignment: ExperimentAssignment) throws -> Bool {
        !(try db.execute(AssignmentCodec.table.postgresInsertIfNew + " RETURNING 1", AssignmentCodec.values(appId: appId, assignment))
            .isEmpty)
    }

    func insertPaywallEvent(_ event: PaywallEvent) throws {
        try db.executeLater(PaywallEventCodec.table.postgresInsertIfNew, PaywallEventCodec.values(appId: appId, event))
    }
}
