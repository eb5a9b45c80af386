package import Entitlements

/// App downloads apps posted for their customers (`AppDownload`).
extension PostgreSQLFactStore {
    static let downloadColumns = StoredTable.list(AppDownloadCodec.read)

    static func download(_ row: [String?]) -> AppDownload { AppDownloadCodec.record(PostgreSQLRow(row: row)) }

    static let downloadsStatement =
        "SELECT \(downloadColumns) FROM app_downloads WHERE app_id = $1 AND app_account_token = $2 ORDER BY environment"

    static func appDownloads(_ db: PostgreSQLConnection, appId: String, appAccountToken: String) throws -> [AppDownload] {
        try db.execute(downloadsStatement, [.text(appId), .text(appAccountToken)]).rows.map(download)
    }

    package func appDownloads(appId: String, appAccountToken: String) throws -> [AppDownload] {
        try pool.with { try Self.appDownloads($0, appId: appId, appAccountToken: appAccountToken) }
    }

    package func appDownloadTokens(appId: String, environment: String, appTransactionId: String) throws -> [String] {
        try pool.with { db in
            try db.execute(
                """
                SELECT app_account_token FROM app_downloads WHERE app_id = $1 AND environment = $2 AND app_transaction_id = $3
                ORDER BY posted_at, app_account_token
                """, [.text(appId), .text(environment), .text(appTransactionId)]
            ).rows.map { $0[0] ?? "" }
        }
    }
}

/// Attributes apps set on their customers (`CustomerAttribute`).
extension PostgreSQLFactStore {
    static let attributesStatement =
        "SELECT \(StoredTable.list(AttributeCodec.read)) FROM customer_attributes WHERE app_id = $1 AND app_account_token = $2 ORDER BY name"

    package func attributes(appId: String, appAccountToken: String) throws -> [CustomerAttribute] {
        try pool.with { db in
            try db.execute(Self.attributesStatement, [.text(appId), .text(appAccountToken)]).rows.map {
                AttributeCodec.record(PostgreSQLRow(row: $0))
            }
        }
    }
}
