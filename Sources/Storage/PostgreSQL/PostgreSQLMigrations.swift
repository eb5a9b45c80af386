/// The PostgreSQL schema: the SQLite layout (Migrations.swift) with PostgreSQL's types, as
/// numbered migrations. `schema_migrations` records those applied; start-up applies the rest
/// under an advisory lock, so two instances starting at once apply each exactly once.
enum PostgreSQLMigrations {
    /// `pg_advisory_lock` key of the migration step (an arbitrary constant: "entitle" in ASCII).
    static let lockKey: Int64 = 0x656E_7469_746C_65

    static let all: [String] = [
        // 1: everything of SQLite's migrations 1–7 at once.
        """
        CREATE TABLE transactions (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, transaction_id TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL, product_id TEXT NOT NULL, subscription_group TEXT,
            type TEXT NOT NULL, purchase_date BIGINT NOT NULL, original_purchase_date BIGINT, expires_date BIGINT,
            revocation_date BIGINT, revocation_reason BIGINT, revocation_type TEXT, is_upgraded BIGINT NOT NULL,
            offer_type BIGINT, offer_discount_type TEXT, offer_identifier TEXT, ownership_type TEXT,
            signed_date BIGINT NOT NULL, app_account_token TEXT, jws TEXT NOT NULL, price BIGINT, currency TEXT,
            PRIMARY KEY (app_id, environment, transaction_id));
        CREATE INDEX transactions_by_subscription ON transactions (app_id, environment, original_transaction_id);
        CREATE TABLE renewal_infos (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            product_id TEXT, auto_renew_product_id TEXT, auto_renew_status BIGINT, is_in_billing_retry BIGINT NOT NULL,
            grace_period_expires_date BIGINT, expiration_intent BIGINT, eligible_win_back_offer_ids TEXT NOT NULL,
            signed_date BIGINT NOT NULL, jws TEXT NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE TABLE subscriber_links (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            app_account_token TEXT NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE INDEX subscriber_links_by_token ON subscriber_links (app_id, environment, app_account_token, original_transaction_id);
        CREATE TABLE signals (
            id BIGSERIAL PRIMARY KEY, app_id TEXT NOT NULL, environment TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL, kind TEXT NOT NULL, at BIGINT NOT NULL,
            UNIQUE (app_id, environment, original_transaction_id, kind, at));
        CREATE TABLE notifications (
            sequence BIGSERIAL PRIMARY KEY, notification_uuid TEXT NOT NULL UNIQUE,
            app_id TEXT NOT NULL, environment TEXT NOT NULL, notification_type TEXT NOT NULL, subtype TEXT,
            signed_date BIGINT NOT NULL, received_at BIGINT NOT NULL, original_transaction_id TEXT, jws TEXT NOT NULL);
        CREATE INDEX notifications_by_app ON notifications (app_id, sequence);
        CREATE TABLE sync_revisions (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL, revision TEXT NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE TABLE app_transactions (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            app_transaction_id TEXT NOT NULL, PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE INDEX app_transactions_by_id ON app_transactions (app_id, environment, app_transaction_id);
        CREATE TABLE link_transfers (
            id BIGSERIAL PRIMARY KEY, app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            from_token TEXT NOT NULL, to_token TEXT NOT NULL, at BIGINT NOT NULL,
            UNIQUE (app_id, environment, original_transaction_id, from_token, to_token, at));
        CREATE INDEX link_transfers_from ON link_transfers (app_id, environment, from_token);
        CREATE INDEX link_transfers_to ON link_transfers (app_id, environment, to_token);
        CREATE TABLE token_calls (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            app_account_token TEXT NOT NULL, attempts BIGINT NOT NULL, next_at BIGINT NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE INDEX token_calls_due ON token_calls (app_id, next_at);
        CREATE TABLE events (
            app_id TEXT NOT NULL, sequence BIGINT NOT NULL, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL,
            environment TEXT NOT NULL, original_transaction_id TEXT, app_account_token TEXT,
            occurred_at BIGINT NOT NULL, created_at BIGINT NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (app_id, sequence));
        CREATE TABLE event_sequences (app_id TEXT PRIMARY KEY, last BIGINT NOT NULL);
        CREATE TABLE deliveries (
            id BIGSERIAL PRIMARY KEY, app_id TEXT NOT NULL, kind TEXT NOT NULL, event_id TEXT, event_type TEXT,
            endpoint TEXT NOT NULL, body TEXT, status TEXT NOT NULL, attempts BIGINT NOT NULL, next_at BIGINT NOT NULL,
            created_at BIGINT NOT NULL, window_start BIGINT NOT NULL, last_status BIGINT, last_error TEXT,
            delivered_at BIGINT, source_key TEXT UNIQUE);
        CREATE INDEX deliveries_due ON deliveries (app_id, endpoint, status, next_at);
        CREATE INDEX deliveries_by_status ON deliveries (app_id, status, created_at);
        """,
        // 2: SQLite's migration 8: promotional grants, and the indexes of a customer's history and
        // of the overview.
        """
        CREATE TABLE grants (
            app_id TEXT NOT NULL, id TEXT NOT NULL, environment TEXT NOT NULL, app_account_token TEXT NOT NULL,
            entitlement TEXT NOT NULL, starts_at BIGINT NOT NULL, expires_date BIGINT NOT NULL, reason TEXT,
            granted_by TEXT NOT NULL, revoked_at BIGINT, revoked_by TEXT,
            PRIMARY KEY (app_id, id));
        CREATE INDEX grants_by_token ON grants (app_id, environment, app_account_token, starts_at);
        CREATE INDEX grants_by_expiry ON grants (app_id, expires_date);
        CREATE INDEX notifications_by_subscription ON notifications (app_id, environment, original_transaction_id);
        CREATE INDEX notifications_by_arrival ON notifications (app_id, received_at);
        CREATE INDEX events_by_subscription ON events (app_id, original_transaction_id);
        CREATE INDEX events_by_token ON events (app_id, app_account_token);
        CREATE INDEX deliveries_by_event ON deliveries (app_id, event_id);
        """,
        // 3: SQLite's migration 9: Google Play purchases and the Pub/Sub messages applied.
        """
        CREATE TABLE play_purchases (
            app_id TEXT NOT NULL, purchase_token TEXT NOT NULL, kind TEXT NOT NULL, product_id TEXT NOT NULL,
            base_plan_id TEXT, offer_id TEXT, environment TEXT NOT NULL, google_state TEXT NOT NULL,
            start_time BIGINT NOT NULL, expiry_time BIGINT, auto_renewing BIGINT NOT NULL, linked_purchase_token TEXT,
            acknowledged BIGINT NOT NULL, app_account_token TEXT, order_id TEXT, voided_at BIGINT, read_at BIGINT NOT NULL,
            json TEXT NOT NULL, PRIMARY KEY (app_id, purchase_token));
        CREATE INDEX play_purchases_by_token ON play_purchases (app_id, app_account_token, start_time);
        CREATE INDEX play_purchases_by_order ON play_purchases (app_id, order_id);
        CREATE TABLE pubsub_messages (
            app_id TEXT NOT NULL, message_id TEXT NOT NULL, received_at BIGINT NOT NULL, PRIMARY KEY (app_id, message_id));
        """,
        // 4: SQLite's migration 10: Google acknowledgements waiting.
        """
        CREATE TABLE play_acknowledgements (
            app_id TEXT NOT NULL, purchase_token TEXT NOT NULL, kind TEXT NOT NULL, product_id TEXT NOT NULL,
            attempts BIGINT NOT NULL, queued_at BIGINT NOT NULL, next_at BIGINT NOT NULL, PRIMARY KEY (app_id, purchase_token));
        CREATE INDEX play_acknowledgements_due ON play_acknowledgements (app_id, next_at);
        """,
        // 5 (PostgreSQL only): the signed texts and bodies, a few KiB each and written with every
        // notification, compressed with lz4 where the server has it: pglz cost ~70 µs of the
        // backend's CPU per notification. Values already stored keep their compression.
        """
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
                ALTER TABLE notifications ALTER COLUMN jws SET COMPRESSION lz4;
                ALTER TABLE transactions ALTER COLUMN jws SET COMPRESSION lz4;
                ALTER TABLE renewal_infos ALTER COLUMN jws SET COMPRESSION lz4;
                ALTER TABLE events ALTER COLUMN body SET COMPRESSION lz4;
                ALTER TABLE deliveries ALTER COLUMN body SET COMPRESSION lz4;
                ALTER TABLE play_purchases ALTER COLUMN json SET COMPRESSION lz4;
            END IF;
        END $$;
        """,
        // 6: SQLite's migration 11: partial refunds (`revocationPercentage`), the offer's duration.
        """
        ALTER TABLE transactions ADD COLUMN revocation_percentage BIGINT;
        ALTER TABLE transactions ADD COLUMN offer_period TEXT;
        """,
        // 7: SQLite's migration 12: 12-month commitments billed monthly.
        """
        ALTER TABLE transactions ADD COLUMN billing_plan_type TEXT;
        ALTER TABLE transactions ADD COLUMN commitment TEXT;
        ALTER TABLE renewal_infos ADD COLUMN renewal_billing_plan_type TEXT;
        ALTER TABLE renewal_infos ADD COLUMN commitment TEXT;
        """,
        // 8: SQLite's migration 13: one queue for every call owed to Apple.
        """
        CREATE TABLE apple_calls (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, kind TEXT NOT NULL, transaction_id TEXT NOT NULL,
            app_account_token TEXT, attempts BIGINT NOT NULL, next_at BIGINT NOT NULL,
            PRIMARY KEY (app_id, environment, kind, transaction_id));
        CREATE INDEX apple_calls_due ON apple_calls (app_id, next_at);
        INSERT INTO apple_calls (app_id, environment, kind, transaction_id, app_account_token, attempts, next_at)
            SELECT app_id, environment, 'set_app_account_token', original_transaction_id, app_account_token, attempts, next_at
            FROM token_calls;
        DROP TABLE token_calls;
        """,
        // 9: SQLite's migration 14: Google's notifications beside Apple's, a Play purchase's details.
        """
        ALTER TABLE notifications ADD COLUMN store TEXT NOT NULL DEFAULT 'app_store';
        ALTER TABLE play_purchases ADD COLUMN details TEXT;
        """,
        // 10: SQLite's migration 15: refund reviews.
        """
        CREATE TABLE usage_records (
            app_id TEXT NOT NULL, id TEXT NOT NULL, app_account_token TEXT NOT NULL, recorded_at BIGINT NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (app_id, id));
        CREATE INDEX usage_records_by_token ON usage_records (app_id, app_account_token, recorded_at);
        CREATE TABLE refund_overrides (
            app_id TEXT NOT NULL, app_account_token TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (app_id, app_account_token));
        CREATE TABLE refund_requests (
            app_id TEXT NOT NULL, id TEXT NOT NULL, store TEXT NOT NULL, environment TEXT NOT NULL, app_account_token TEXT,
            transaction_id TEXT, purchase_token TEXT, status TEXT NOT NULL, next_at BIGINT NOT NULL, requested_at BIGINT NOT NULL,
            outcome TEXT, outcome_at BIGINT, body TEXT NOT NULL, PRIMARY KEY (app_id, id));
        CREATE INDEX refund_requests_due ON refund_requests (app_id, status, next_at);
        CREATE INDEX refund_requests_by_transaction ON refund_requests (app_id, transaction_id);
        CREATE INDEX refund_requests_by_purchase ON refund_requests (app_id, purchase_token);
        """,
        // 11: SQLite's migration 16: retention answers.
        """
        CREATE TABLE retention_records (
            app_id TEXT NOT NULL, request_identifier TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            answered_at BIGINT NOT NULL, saved_at BIGINT, saved_by TEXT, body TEXT NOT NULL, PRIMARY KEY (app_id, request_identifier));
        CREATE INDEX retention_records_by_subscription ON retention_records (app_id, environment, original_transaction_id);
        """,
        // 12: the business figures kept by the writer (docs/METRICS.md, "Kept by the writer"). The
        // writers only append their changes to the day sums (`metric_deltas`, no key, no index:
        // writers never wait on one another's rows), and a roll-up folds them into `metric_days`
        // every second or so; a reader adds both up.
        """
        CREATE TABLE metric_moments (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, subscription TEXT NOT NULL, figure TEXT NOT NULL, at BIGINT NOT NULL,
            product_id TEXT NOT NULL, currency TEXT NOT NULL, period TEXT NOT NULL, origin_day BIGINT NOT NULL, store TEXT NOT NULL,
            value BIGINT NOT NULL,
            PRIMARY KEY (app_id, environment, subscription, figure, at, product_id, currency, period, origin_day));
        -- On the instant alone: a generic plan made while the table was empty took an index led by
        -- (app_id, environment) for the writer's read of one subscription and scanned them all.
        CREATE INDEX metric_moments_by_instant ON metric_moments (at);
        CREATE TABLE metric_days (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, day BIGINT NOT NULL, store TEXT NOT NULL, figure TEXT NOT NULL,
            product_id TEXT NOT NULL, currency TEXT NOT NULL, period TEXT NOT NULL, origin_day BIGINT NOT NULL, value BIGINT NOT NULL,
            PRIMARY KEY (app_id, environment, day, store, figure, product_id, currency, period, origin_day));
        CREATE TABLE metric_deltas (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, day BIGINT NOT NULL, store TEXT NOT NULL, figure TEXT NOT NULL,
            product_id TEXT NOT NULL, currency TEXT NOT NULL, period TEXT NOT NULL, origin_day BIGINT NOT NULL, value BIGINT NOT NULL);
        """,
        // 13: the figures' sums per hour, ten minutes and minute (`width` in milliseconds,
        // `bucket` its number), filled from the moments already kept. Writers append their changes
        // to `metric_deltas` as for the days (a width of a day there is a day sum's change; its
        // `day` is the bucket's number), the roll-up folds each.
        """
        CREATE TABLE metric_buckets (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, width BIGINT NOT NULL, bucket BIGINT NOT NULL, store TEXT NOT NULL,
            figure TEXT NOT NULL, product_id TEXT NOT NULL, currency TEXT NOT NULL, period TEXT NOT NULL, origin_day BIGINT NOT NULL,
            value BIGINT NOT NULL,
            PRIMARY KEY (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day));
        ALTER TABLE metric_deltas ADD COLUMN width BIGINT NOT NULL DEFAULT 86400000;
        """ + metricBucketsFromMoments,
        // 14: SQLite's migration 19: app downloads posted by apps.
        """
        CREATE TABLE app_downloads (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, app_account_token TEXT NOT NULL, app_transaction_id TEXT NOT NULL,
            original_application_version TEXT, original_purchase_date BIGINT, original_platform TEXT, posted_at BIGINT NOT NULL,
            PRIMARY KEY (app_id, app_account_token, environment));
        CREATE INDEX app_downloads_by_id ON app_downloads (app_id, environment, app_transaction_id);
        """,
        // 15: SQLite's migration 20: attributes apps set on their customers.
        """
        CREATE TABLE customer_attributes (
            app_id TEXT NOT NULL, app_account_token TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, updated_at BIGINT NOT NULL,
            PRIMARY KEY (app_id, app_account_token, name));
        """,
        // 16: SQLite's migration 21: experiments, assignments, paywall events.
        """
        CREATE TABLE experiments (
            app_id TEXT NOT NULL, id TEXT NOT NULL, placement TEXT NOT NULL, status TEXT NOT NULL, created_at BIGINT NOT NULL,
            body TEXT NOT NULL, PRIMARY KEY (app_id, id));
        CREATE TABLE experiment_assignments (
            app_id TEXT NOT NULL, experiment TEXT NOT NULL, app_account_token TEXT NOT NULL, variant TEXT NOT NULL,
            placement TEXT NOT NULL, offering TEXT NOT NULL, enrolled_at BIGINT NOT NULL,
            PRIMARY KEY (app_id, experiment, app_account_token));
        CREATE INDEX experiment_assignments_by_token ON experiment_assignments (app_id, app_account_token);
        CREATE TABLE paywall_events (
            app_id TEXT NOT NULL, app_account_token TEXT NOT NULL, at BIGINT NOT NULL, kind TEXT NOT NULL, placement TEXT NOT NULL,
            offering TEXT NOT NULL, experiment TEXT, variant TEXT,
            PRIMARY KEY (app_id, app_account_token, at, kind, placement));
        CREATE INDEX paywall_events_by_experiment ON paywall_events (app_id, experiment, at);
        """,
    ]

    /// The hour, ten-minute and minute sums of every kept moment read to the instant
    /// (`MetricFigure.isReadToTheInstant`), as the writer adds them
    /// (`MetricMoment.bucket`), each held at BIGINT's bounds (SUM of a BIGINT is a NUMERIC).
    static let metricBucketsFromMoments = """
        INSERT INTO metric_buckets (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day, value)
        SELECT app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day,
            \(PostgreSQLFactStore.clamped("SUM(value)"))
        FROM (SELECT m.app_id, m.environment, w.width,
                CASE WHEN m.figure IN ('active', 'trial', 'mrr') THEN floor((m.at - 1)::NUMERIC / w.width)::BIGINT + 1
                    ELSE floor(m.at::NUMERIC / w.width)::BIGINT END AS bucket,
                m.store, m.figure, m.product_id, m.currency, m.period, m.origin_day, m.value
            FROM metric_moments m, (VALUES (3600000::BIGINT), (600000), (60000)) AS w(width)
            WHERE m.figure IN ('active', 'trial', 'mrr', 'lapsed_trial', 'churn_voluntary', 'churn_involuntary', 'churn_other')) AS spread
        GROUP BY app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day;
        """

    static func migrate(_ pool: PostgreSQLPool) throws {
        try pool.with { connection in
            try connection.execute("SELECT pg_advisory_lock($1)", [.integer(lockKey)])
            defer { _ = try? connection.execute("SELECT pg_advisory_unlock($1)", [.integer(lockKey)]) }
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            let applied = try connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").int64(0, 0) ?? 0
            try SchemaVersion.requireKnown(found: applied, known: all.count)
            for (index, migration) in all.enumerated() where Int64(index + 1) > applied {
                try connection.execute("BEGIN")
                do {
                    try connection.executeScript(migration)
                    try connection.execute("INSERT INTO schema_migrations (version) VALUES ($1)", [.integer(Int64(index + 1))])
                    try connection.execute("COMMIT")
                } catch {
                    _ = try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        }
    }
}
