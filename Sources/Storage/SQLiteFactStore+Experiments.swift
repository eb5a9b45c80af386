package import Entitlements

/// Experiments on offerings, customers' assignments and paywall reports.
extension SQLiteFactStore {
    package func experiments(appId: String) throws -> [Experiment] {
        try read { database in
            let query = try database.statement("SELECT id, body FROM experiments WHERE app_id = ? ORDER BY created_at, id")
                .bind([.text(appId)])
            var found: [Experiment] = []
            while try query.step() {
                guard let experiment = StoredJSON.object(query.text(1)).flatMap(Experiment.init(stored:)) else {
                    unreadableRows.record(UnreadableRow(table: "experiments", key: query.text(0) ?? ""))
                    continue
                }
                found.append(experiment)
            }
            return found
        }
    }

    /// Made once: every subscriber read runs it.
    static let assignmentsStatement =
        "SELECT \(StoredTable.list(AssignmentCodec.read)) FROM experiment_assignments WHERE app_id = ? AND app_account_token = ? "
        + "ORDER BY enrolled_at, experiment"

    static func experimentAssignments(_ database: SQLiteDatabase, appId: String, appAccountToken: String) throws -> [ExperimentAssignment] {
        let query = try database.statement(assignmentsStatement).bind([.text(appId), .text(appAccountToken)])
        var found: [ExperimentAssignment] = []
        while try query.step() { found.append(AssignmentCodec.record(SQLiteRow(statement: query))) }
        return found
    }

    package func experimentAssignments(appId: String, appAccountToken: String) throws -> [ExperimentAssignment] {
        try read { try Self.experimentAssignments($0, appId: appId, appAccountToken: appAccountToken) }
    }

    package func enrollmentCounts(appId: String, experiment: String) throws -> [String: Int64] {
        try read { database in
            let query = try database.statement(
                "SELECT variant, COUNT(*) FROM experiment_assignments WHERE app_id = ? AND experiment = ? GROUP BY variant"
            ).bind([.text(appId), .text(experiment)])
            var counts: [String: Int64] = [:]
            while try query.step() { counts[query.text(0) ?? ""] = query.int64(1) ?? 0 }
            return counts
        }
    }
}

extension SQLiteWriteTransaction {
    func putExperiment(_ experiment: Experiment) throws {
        try database.statement(ExperimentCodec.table.sqlitePut).bind(ExperimentCodec.values(appId: appId, experiment)).run()
    }

    func insertAssignmentIfNew(_ assignment: ExperimentAssignment) throws -> Bool {
        try database.statement(AssignmentCodec.table.sqliteInsertIfNew).bind(AssignmentCodec.values(appId: appId, assignment)).run()
        return database.changes > 0
    }

    func insertPaywallEvent(_ event: PaywallEvent) throws {
        try database.statement(PaywallEventCodec.table.sqliteInsertIfNew).bind(PaywallEventCodec.values(appId: appId, event)).run()
    }
}
