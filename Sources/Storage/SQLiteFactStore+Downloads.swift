package import Entitlements

/// App downloads apps posted for their customers (`AppDownload`).
extension SQLiteFactStore {
    static let downloadColumns = StoredTable.list(AppDownloadCodec.read)

    static func appDownloads(_ database: SQLiteDatabase, appId: String, appAccountToken: String) throws -> [AppDownload] {
        let query = try database.statement(
            "SELECT \(downloadColumns) FROM app_downloads WHERE app_id = ? AND app_account_token = ? ORDER BY environment"
        ).bind([.text(appId), .text(appAccountToken)])
        var found: [AppDownload] = []
        while try query.step() { found.append(AppDownloadCodec.record(SQLiteRow(statement: query))) }
        return found
    }

    package func appDownloads(appId: String, appAccountToken: String) throws -> [AppDownload] {
        try read { try Self.appDownloads($0, appId: appId, appAccountToken: appAccountToken) }
    }

    package func appDownloadTokens(appId: String, environment: String, appTransactionId: String) throws -> [String] {
        try read { database in
            let query = try database.statement(
                """
                SELECT app_account_token FROM app_downloads WHERE app_id = ? AND environment = ? AND app_transaction_id = ?
                ORDER BY posted_at, app_account_token
                """
            ).bind([.text(appId), .text(environment), .text(appTransactionId)])
            var found: [String] = []
            while try query.step() { found.append(query.text(0) ?? "") }
            return found
        }
    }
}

/// Attributes apps set on their customers (`CustomerAttribute`).
extension SQLiteFactStore {
    package func attributes(appId: String, appAccountToken: String) throws -> [CustomerAttribute] {
        try read { database in
            let query = try database.statement(
                "SELECT \(StoredTable.list(AttributeCodec.read)) FROM customer_attributes WHERE app_id = ? AND app_account_token = ? "
                    + "ORDER BY name"
            ).bind([.text(appId), .text(appAccountToken)])
            var found: [CustomerAttribute] = []
            while try query.step() { found.append(AttributeCodec.record(SQLiteRow(statement: query))) }
            return found
        }
    }
}
