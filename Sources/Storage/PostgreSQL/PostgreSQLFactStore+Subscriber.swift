package import Entitlements
import Foundation

/// A subscriber view's facts in one statement: the linked subscriptions (transactions, renewal
/// infos, signals), grants, moves and Play purchases, every column as text (the parts' types
/// differ), each part padded to the widest one's width and told apart by the first column.
extension PostgreSQLFactStore {
    package func subscriber(appId: String, environments: [String], appAccountToken: String) throws -> SubscriberFacts {
        try pool.with { try Self.subscriber($0, appId: appId, environments: environments, appAccountToken: appAccountToken) }
    }

    static func subscriber(
        _ db: PostgreSQLConnection, appId: String, environments: [String], appAccountToken: String
    ) throws -> SubscriberFacts {
        let rows = try db.execute(
            subscriberStatement,
            [.text(appId), .texts(environments), .text(appAccountToken)]
        ).rows
        var subscriptions: [String: [String: SubscriptionFacts]] = [:]
        var grants: [PromotionalGrant] = []
        var transfers: [(String, LinkTransfer)] = []
        var plays: [PlayPurchase] = []
        var downloads: [AppDownload] = []
        var assignments: [ExperimentAssignment] = []
        for row in rows {
            let environment = row[1] ?? ""
            let key = row[2] ?? ""
            // In place: a copy taken out and put back would copy its transactions with each row.
            func subscription(_ change: (inout SubscriptionFacts) -> Void) {
                change(
                    &subscriptions[environment, default: [:]][
                        key,
                        default: SubscriptionFacts(
                            originalTransactionId: key, environment: environment, appAccountToken: appAccountToken, transactions: [],
                            renewal: nil, signals: [])
                    ])
            }
            let columns = Array(row[4...])
            switch row[0] {
            case "t": subscription { $0.transactions.append(transaction(columns, from: 0, original: key, environment: environment)) }
            case "r": subscription { $0.renewal = renewal(columns, from: 0, original: key, environment: environment) }
            case "s":
                guard let kind = columns[0].flatMap(SubscriptionSignal.Kind.init(storedName:)) else { continue }
                subscription { $0.signals.append(SubscriptionSignal(kind, at: columns[1].flatMap { Int64($0) } ?? 0)) }
            case "g": grants.append(grant(columns))
            case "x":
                transfers.append(
                    (
                        environment,
                        LinkTransfer(
                            originalTransactionId: columns[0] ?? "", from: columns[1] ?? "", to: columns[2] ?? "",
                            at: columns[3].flatMap { Int64($0) } ?? 0)
                    ))
            case "d": downloads.append(download(columns))
            case "e": assignments.append(assignment(columns))
            default: plays.append(playPurchase(columns))
            }
        }
        // A subscription with renewal info or signals but no transaction is not one yet.
        let spans = environments.map { environment in
            (
                environment,
                (subscriptions[environment] ?? [:]).values.filter { !$0.transactions.isEmpty }
                    .sorted { $0.originalTransactionId < $1.originalTransactionId }
            )
        }
        return SubscriberFacts(
            appAccountToken: appAccountToken, environments: spans, transfers: transfers, grants: grants, playPurchases: plays,
            downloads: downloads, assignments: assignments)
    }

    /// Ordered as the separate reads are (each kind by environment, then): subscriptions by id,
    /// their transactions by purchase and signals by instant; grants by start; moves as made;
    /// Play purchases (of every environment) by start; downloads by environment; assignments by
    /// enrollment.
    private static let subscriberStatement: String = {
        let text = PostgreSQLText.self
        let prefixed = { (columns: String) in
            columns.split(separator: ",").map { "x." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")
        }
        let linked = { (table: String) in PostgreSQLFactStore.linked(table, environments: "l.environment = ANY($2::text[])") }
        return """
            SELECT * FROM (
                SELECT 't' AS kind, x.environment, x.original_transaction_id, x.purchase_date AS ordering, \(text.columns(transactionColumns))
                \(linked("transactions"))
                UNION ALL
                SELECT 'r', x.environment, x.original_transaction_id, 0, \(text.columns(renewalColumns)), \(text.padding(after: renewalColumns))
                \(linked("renewal_infos"))
                UNION ALL
                SELECT 's', x.environment, x.original_transaction_id, x.at, x.kind, x.at::text, \(text.padding(2)) \(linked("signals"))
                UNION ALL
                SELECT 'g', x.environment, '', x.starts_at, \(text.columns(prefixed(grantColumns))), \(text.padding(after: grantColumns)) FROM grants x
                WHERE x.app_id = $1 AND x.environment = ANY($2::text[]) AND x.app_account_token = $3
                UNION ALL
                SELECT 'x', x.environment, '', x.id, x.original_transaction_id, x.from_token, x.to_token, x.at::text, \(text.padding(4))
                FROM link_transfers x
                WHERE x.app_id = $1 AND x.environment = ANY($2::text[]) AND (x.from_token = $3 OR x.to_token = $3)
                UNION ALL
                SELECT 'p', '', '', x.start_time, \(text.columns(prefixed(playColumns))), \(text.padding(after: playColumns))
                FROM play_purchases x WHERE x.app_id = $1 AND x.app_account_token = $3
                UNION ALL
                SELECT 'd', x.environment, '', 0, \(text.columns(prefixed(downloadColumns))), \(text.padding(after: downloadColumns))
                FROM app_downloads x WHERE x.app_id = $1 AND x.app_account_token = $3
                UNION ALL
                SELECT 'e', '', x.experiment, x.enrolled_at, \(text.columns(prefixed(assignmentColumns))), \(text.padding(after: assignmentColumns))
                FROM experiment_assignments x WHERE x.app_id = $1 AND x.app_account_token = $3
            ) facts ORDER BY kind, 2, 3, ordering, 5
            """
    }()
}
