/// Every table Entitle keeps, described once (see `StoredTable`). The order is the order
/// `migrate-storage` copies in. PostgreSQL has three tables of its own besides: `event_sequences`
/// (the event counter SQLite's writer keeps in memory), `metric_deltas` (the roll-up's queue)
/// and `schema_migrations`; SQLite has `sqlite_sequence` (its AUTOINCREMENT counter).
enum StoredTables {
    static let transactions = StoredTable(
        name: "transactions",
        columns: [
            "app_id", "environment", "transaction_id", "original_transaction_id", "product_id", "subscription_group", "type",
            "purchase_date", "original_purchase_date", "expires_date", "revocation_date", "revocation_reason", "revocation_type",
            "is_upgraded", "offer_type", "offer_discount_type", "offer_identifier", "ownership_type", "signed_date",
            "app_account_token", "jws", "price", "currency", "revocation_percentage", "offer_period", "billing_plan_type",
            "commitment",
        ],
        key: ["app_id", "environment", "transaction_id"])

    static let renewalInfos = StoredTable(
        name: "renewal_infos",
        columns: [
            "app_id", "environment", "original_transaction_id", "product_id", "auto_renew_product_id", "auto_renew_status",
            "is_in_billing_retry", "grace_period_expires_date", "expiration_intent", "eligible_win_back_offer_ids", "signed_date",
            "jws", "renewal_billing_plan_type", "commitment",
        ],
        key: ["app_id", "environment", "original_transaction_id"])

    static let subscriberLinks = StoredTable(
        name: "subscriber_links", columns: ["app_id", "environment", "original_transaction_id", "app_account_token"],
        key: ["app_id", "environment", "original_transaction_id"])

    static let signals = StoredTable(
        name: "signals", columns: ["app_id", "environment", "original_transaction_id", "kind", "at"],
        key: ["app_id", "environment", "original_transaction_id", "kind", "at"])

    static let notifications = StoredTable(
        name: "notifications",
        columns: [
            "notification_uuid", "app_id", "environment", "notification_type", "subtype", "signed_date", "received_at",
            "original_transaction_id", "jws", "store",
        ],
        key: ["notification_uuid"], numbered: "sequence")

    static let syncRevisions = StoredTable(
        name: "sync_revisions", columns: ["app_id", "environment", "original_transaction_id", "revision"],
        key: ["app_id", "environment", "original_transaction_id"])

    static let appTransactions = StoredTable(
        name: "app_transactions", columns: ["app_id", "environment", "original_transaction_id", "app_transaction_id"],
        key: ["app_id", "environment", "original_transaction_id"])

    static let linkTransfers = StoredTable(
        name: "link_transfers", columns: ["app_id", "environment", "original_transaction_id", "from_token", "to_token", "at"],
        key: ["app_id", "environment", "original_transaction_id", "from_token", "to_token", "at"])

    static let appleCalls = StoredTable(
        name: "apple_calls",
        columns: ["app_id", "environment", "kind", "transaction_id", "app_account_token", "attempts", "next_at"],
        key: ["app_id", "environment", "kind", "transaction_id"])

    static let events = StoredTable(
        name: "events",
        columns: [
            "app_id", "sequence", "id", "type", "environment", "original_transaction_id", "app_account_token", "occurred_at",
            "created_at", "body",
        ],
        key: ["app_id", "sequence"])

    /// PostgreSQL's copy has one more column, `source_key` (`sqlite:` and the SQLite id), which
    /// makes a second `migrate-storage` run a no-op; the store itself never writes it.
    static let deliveries = StoredTable(
        name: "deliveries",
        columns: [
            "app_id", "kind", "event_id", "event_type", "endpoint", "body", "status", "attempts", "next_at", "created_at",
            "window_start", "last_status", "last_error", "delivered_at",
        ],
        key: ["id"], numbered: "id")

    static let grants = StoredTable(
        name: "grants",
        columns: [
            "app_id", "id", "environment", "app_account_token", "entitlement", "starts_at", "expires_date", "reason", "granted_by",
            "revoked_at", "revoked_by",
        ],
        key: ["app_id", "id"])

    static let playPurchases = StoredTable(
        name: "play_purchases",
        columns: [
            "app_id", "purchase_token", "kind", "product_id", "base_plan_id", "offer_id", "environment", "google_state", "start_time",
            "expiry_time", "auto_renewing", "linked_purchase_token", "acknowledged", "app_account_token", "order_id", "voided_at",
            "read_at", "details", "json",
        ],
        key: ["app_id", "purchase_token"])

    static let pubSubMessages = StoredTable(
        name: "pubsub_messages", columns: ["app_id", "message_id", "received_at"], key: ["app_id", "message_id"])

    static let usageRecords = StoredTable(
        name: "usage_records", columns: ["app_id", "id", "app_account_token", "recorded_at", "body"], key: ["app_id", "id"])

    static let refundOverrides = StoredTable(
        name: "refund_overrides", columns: ["app_id", "app_account_token", "body"], key: ["app_id", "app_account_token"])

    static let retentionRecords = StoredTable(
        name: "retention_records",
        columns: [
            "app_id", "request_identifier", "environment", "original_transaction_id", "answered_at", "saved_at", "saved_by", "body",
        ],
        key: ["app_id", "request_identifier"])

    static let refundRequests = StoredTable(
        name: "refund_requests",
        columns: [
            "app_id", "id", "store", "environment", "app_account_token", "transaction_id", "purchase_token", "status", "next_at",
            "requested_at", "outcome", "outcome_at", "body",
        ],
        key: ["app_id", "id"])

    static let playAcknowledgements = StoredTable(
        name: "play_acknowledgements",
        columns: ["app_id", "purchase_token", "kind", "product_id", "attempts", "queued_at", "next_at"],
        key: ["app_id", "purchase_token"])

    static let metricMoments = StoredTable(
        name: "metric_moments",
        columns: [
            "app_id", "environment", "subscription", "figure", "at", "product_id", "currency", "period", "origin_day", "store", "value",
        ],
        key: ["app_id", "environment", "subscription", "figure", "at", "product_id", "currency", "period", "origin_day"],
        withoutRowid: true)

    static let metricDays = StoredTable(
        name: "metric_days",
        columns: ["app_id", "environment", "day", "store", "figure", "product_id", "currency", "period", "origin_day", "value"],
        key: ["app_id", "environment", "day", "store", "figure", "product_id", "currency", "period", "origin_day"],
        withoutRowid: true)

    static let metricBuckets = StoredTable(
        name: "metric_buckets",
        columns: [
            "app_id", "environment", "width", "bucket", "store", "figure", "product_id", "currency", "period", "origin_day", "value",
        ],
        key: ["app_id", "environment", "width", "bucket", "store", "figure", "product_id", "currency", "period", "origin_day"],
        withoutRowid: true)

    static let appDownloads = StoredTable(
        name: "app_downloads",
        columns: [
            "app_id", "environment", "app_account_token", "app_transaction_id", "original_application_version",
            "original_purchase_date", "original_platform", "posted_at",
        ],
        // The customer first: a subscriber read finds theirs by this key.
        key: ["app_id", "app_account_token", "environment"])

    static let customerAttributes = StoredTable(
        name: "customer_attributes", columns: ["app_id", "app_account_token", "name", "value", "updated_at"],
        key: ["app_id", "app_account_token", "name"])

    static let experiments = StoredTable(
        name: "experiments", columns: ["app_id", "id", "placement", "status", "created_at", "body"], key: ["app_id", "id"])

    static let experimentAssignments = StoredTable(
        name: "experiment_assignments",
        columns: ["app_id", "experiment", "app_account_token", "variant", "placement", "offering", "enrolled_at"],
        key: ["app_id", "experiment", "app_account_token"])

    static let paywallEvents = StoredTable(
        name: "paywall_events",
        columns: ["app_id", "app_account_token", "at", "kind", "placement", "offering", "experiment", "variant"],
        key: ["app_id", "app_account_token", "at", "kind", "placement"])

    static let all: [StoredTable] = [
        transactions, renewalInfos, subscriberLinks, signals, notifications, syncRevisions, appTransactions, linkTransfers,
        appleCalls, events, deliveries, grants, playPurchases, pubSubMessages, usageRecords, refundOverrides, retentionRecords,
        refundRequests, playAcknowledgements, metricMoments, metricDays, metricBuckets, appDownloads, customerAttributes, experiments,
        experimentAssignments, paywallEvents,
    ]

    /// Tables one dialect keeps for its own bookkeeping, which are not copied.
    static let sqliteOnly: Set<String> = ["sqlite_sequence"]
    static let postgresOnly: Set<String> = ["event_sequences", "metric_deltas", "schema_migrations"]
}
