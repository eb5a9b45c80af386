import Foundation
import TestSupport
import XCTest

@testable import Storage

/// Each table is described once (`StoredTables`), and the description is what both schemas hold
/// and what `migrate-storage` copies: a table or column added to a migration and not to the
/// description, or described and not migrated, fails here.
final class StoredTablesTests: XCTestCase {
    /// Columns PostgreSQL keeps that SQLite has no counterpart for, and why.
    private let postgresOnlyColumns: [String: Set<String>] = [
        // PostgreSQL numbers these rows; SQLite keeps them in its rowid.
        "signals": ["id"], "link_transfers": ["id"],
        // Where a copied delivery came from, so that a second migrate-storage run copies nothing twice.
        "deliveries": ["source_key"],
    ]

    private func sqliteDatabase() throws -> (path: String, database: SQLiteDatabase) {
        let path = try makeTemporaryDirectory("entitle-tables").appendingPathComponent("entitle.sqlite3").path
        _ = try SQLiteFactStore(path: path)  // made and migrated
        return (path, try SQLiteDatabase(path: path))
    }

    private func sqliteColumns(_ database: SQLiteDatabase, _ table: String) throws -> [String: String] {
        let query = try database.statement("PRAGMA table_info(\(table))")
        var columns: [String: String] = [:]
        while try query.step() { columns[query.text(1) ?? ""] = query.text(2) ?? "" }
        return columns
    }

    func testTheDescriptionsAreSQLitesSchema() throws {
        let (_, database) = try sqliteDatabase()
        let query = try database.statement("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var tables: Set<String> = []
        while try query.step() { tables.insert(query.text(0) ?? "") }
        XCTAssertEqual(
            tables.subtracting(StoredTables.sqliteOnly), Set(StoredTables.all.map(\.name)),
            "every SQLite table is described, and every described table exists")
        XCTAssertEqual(StoredTables.all.count, Set(StoredTables.all.map(\.name)).count, "each table described once")
        for table in StoredTables.all {
            let columns = try sqliteColumns(database, table.name)
            XCTAssertEqual(Set(columns.keys), Set(table.columns + (table.numbered.map { [$0] } ?? [])), table.name)
            XCTAssertEqual(table.columns.count, Set(table.columns).count, "\(table.name): a column named twice")
            XCTAssertTrue(Set(table.key).isSubset(of: Set(columns.keys)), "\(table.name): its key is among its columns")
        }
    }

    func testTheDescriptionsArePostgreSQLsSchema() throws {
        let url = try postgreSQL()
        let store = try PostgreSQLFactStore(url: url, poolSize: 1)
        let rows = try store.pool.with {
            try $0.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()")
        }
        var columns: [String: Set<String>] = [:]
        for row in rows.rows { columns[row[0] ?? "", default: []].insert(row[1] ?? "") }
        XCTAssertEqual(
            Set(columns.keys).subtracting(StoredTables.postgresOnly), Set(StoredTables.all.map(\.name)),
            "every PostgreSQL table is described, and every described table exists")
        for table in StoredTables.all {
            XCTAssertEqual(
                columns[table.name] ?? [],
                Set(table.columns + (table.numbered.map { [$0] } ?? [])).union(postgresOnlyColumns[table.name] ?? []), table.name)
        }
    }

    /// Two rows in every described table (made from its SQLite column types), copied by
    /// migrate-storage, compared table by table: counts and every value. A second run copies
    /// nothing.
    func testMigrateStorageCopiesEveryTableWhole() throws {
        let url = try postgreSQL()
        let (path, database) = try sqliteDatabase()
        for table in StoredTables.all {
            let types = try sqliteColumns(database, table.name)
            for row in 1...2 {
                let values: [StoredValue] = table.columns.map { column in
                    types[column]?.uppercased() == "INTEGER" ? .integer(Int64(row * 1_000 + column.count)) : .text("\(column)-\(row)")
                }
                try database.statement(table.sqliteInsertIfNew).bind(values).run()
            }
        }
        let reports = try StorageMigration.copy(from: path, to: url)
        XCTAssertEqual(reports.map(\.table), StoredTables.all.map(\.name), "every table copied")
        for report in reports {
            XCTAssertEqual([report.source, report.copied, report.target], [2, 2, 2], report.table)
        }
        let target = try PostgreSQLFactStore(url: url, poolSize: 1)
        for table in StoredTables.all {
            let list = table.list()
            let source = try database.statement("SELECT \(list) FROM \(table.name)")
            var sourceRows: [[String?]] = []
            while try source.step() {
                sourceRows.append(table.columns.indices.map { source.value(Int32($0)).textForm })
            }
            let copied = try target.pool.with { try $0.execute("SELECT \(list) FROM \(table.name)") }.rows
            XCTAssertEqual(
                copied.sorted { $0.description < $1.description }, sourceRows.sorted { $0.description < $1.description }, table.name)
        }
        XCTAssertEqual(try StorageMigration.copy(from: path, to: url).map(\.copied).reduce(0, +), 0, "a second run copies nothing")
    }

    private func postgreSQL() throws -> String {
        do {
            return try PostgreSQLTestCluster.freshDatabase()
        } catch let unavailable as PostgreSQLTestCluster.Unavailable {
            throw XCTSkip("PostgreSQL unavailable: \(unavailable)")
        }
    }
}
