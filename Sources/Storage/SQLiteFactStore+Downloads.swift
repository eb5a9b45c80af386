package import Entitlements

/// App downloads apps posted for their customers (`AppDownload`).
extension SQLiteFactStore {
    /// Made once: every subscriber read runs it, and the statement cache is keyed by its text.
    static let downloadsStatement =
        "SELECT \(StoredTable.list(AppDownloadCodec.read)) FROM app_downloads WHERE app_id = ? AND app_account_token = ? ORDER BY environment"

    static func appDownloads(_ database: SQLiteDatabase, appId: String, appAccountToken: String) throws -> [AppDownload] {
        let query = try database.statement(downloadsStatement).bind([.text(appId), .text(appAccountToken)])
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
    /// Made once: every offering answer runs it.
    static let attributesStatement =
        "SELECT \(StoredTable.list(AttributeCodec.read)) FROM customer_attributes WHERE app_id = ? AND app_account_token = ? ORDER BY name"

    package func attributes(appId: String, appAccountToken: String) throws -> [CustomerAttribute] {
        try read { database in
            let query = try database.statement(Self.attributesStatement).bind([.text(appId), .text(appAccountToken)])
            var found: [CustomerAttribute] = []
            while try query.step() { found.append(AttributeCodec.record(SQLiteRow(statement: query))) }
            return found
        }
    }
}

extension SQLiteFactStore {
    /// Everything a subscriber view shows, on one reader connection: each part a cached statement,
    /// the connection taken and given back once (not once a part).
    package func subscriber(appId: String, environments: [String], appAccountToken: String) throws -> SubscriberFacts {
        try read { database in
            try SubscriberFacts.assembled(
                appAccountToken, environments: environments,
                facts: { try Self.facts(database, appId: appId, environment: $0, appAccountToken: appAccountToken) },
                transfers: { try Self.linkTransfers(database, appId: appId, environment: $0, appAccountToken: appAccountToken) },
                grants: { try Self.grants(database, appId: appId, environment: $0, appAccountToken: appAccountToken) },
                playPurchases: { try Self.playPurchases(database, appId: appId, appAccountToken: appAccountToken) },
                downloads: { try Self.appDownloads(database, appId: appId, appAccountToken: appAccountToken) },
                assignments: { try Self.experimentAssignments(database, appId: appId, appAccountToken: appAccountToken) })
        }
    }
}
