/// The schema, as numbered migrations applied in order at start-up inside one transaction each.
/// Columns use portable types (TEXT, INTEGER) so a PostgreSQL store can follow the same layout.
enum Migrations {
    static let all: [String] = [
        // 1: facts and the notification audit trail.
        """
        CREATE TABLE transactions (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, transaction_id TEXT NOT NULL,
            original_transaction_id TEXT NOT NULL, product_id TEXT NOT NULL, subscription_group TEXT,
            type TEXT NOT NULL, purchase_date INTEGER NOT NULL, original_purchase_date INTEGER, expires_date INTEGER,
            revocation_date INTEGER, revocation_reason INTEGER, revocation_type TEXT, is_upgraded INTEGER NOT NULL,
            offer_type INTEGER, offer_discount_type TEXT, offer_identifier TEXT, ownership_type TEXT,
            signed_date INTEGER NOT NULL, app_account_token TEXT, jws TEXT NOT NULL,
            PRIMARY KEY (app_id, environment, transaction_id));
        CREATE INDEX transactions_by_subscription ON transactions (app_id, environment, original_transaction_id);
        CREATE TABLE renewal_infos (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            product_id TEXT, auto_renew_product_id TEXT, auto_renew_status INTEGER, is_in_billing_retry INTEGER NOT NULL,
            grace_period_expires_date INTEGER, expiration_intent INTEGER, eligible_win_back_offer_ids TEXT NOT NULL,
            signed_date INTEGER NOT NULL, jws TEXT NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE TABLE subscriber_links (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            app_account_token TEXT NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE INDEX subscriber_links_by_token ON subscriber_links (app_id, environment, app_account_token);
        CREATE TABLE signals (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            kind TEXT NOT NULL, at INTEGER NOT NULL);
        CREATE INDEX signals_by_subscription ON signals (app_id, environment, original_transaction_id);
        CREATE TABLE notifications (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT, notification_uuid TEXT NOT NULL UNIQUE,
            app_id TEXT NOT NULL, environment TEXT NOT NULL, notification_type TEXT NOT NULL, subtype TEXT,
            signed_date INTEGER NOT NULL, received_at INTEGER NOT NULL, original_transaction_id TEXT, jws TEXT NOT NULL);
        CREATE INDEX notifications_by_app ON notifications (app_id, sequence);
        """,
        // 2: the token index also orders by subscription, so "subscriptions of a token" is one index
        // range (without it the planner walked every link of the app to satisfy the ORDER BY).
        """
        DROP INDEX subscriber_links_by_token;
        CREATE INDEX subscriber_links_by_token ON subscriber_links (app_id, environment, app_account_token, original_transaction_id);
        """,
        // 3: the transaction-history revision each sync reached, so the next one asks only for changes.
        """
        CREATE TABLE sync_revisions (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL, revision TEXT NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        """,
        // 4: the app download each subscription belongs to, so a customer without an
        // appAccountToken is found by the appTransactionId of any of its transactions.
        """
        CREATE TABLE app_transactions (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            app_transaction_id TEXT NOT NULL, PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE INDEX app_transactions_by_id ON app_transactions (app_id, environment, app_transaction_id);
        """,
        // 5: subscriptions moved between appAccountTokens (transferPolicy "transfer"), shown on both.
        """
        CREATE TABLE link_transfers (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            from_token TEXT NOT NULL, to_token TEXT NOT NULL, at INTEGER NOT NULL);
        CREATE INDEX link_transfers_from ON link_transfers (app_id, environment, from_token);
        CREATE INDEX link_transfers_to ON link_transfers (app_id, environment, to_token);
        """,
        // 6: Set App Account Token calls queued with the link they report, until Apple took them.
        """
        CREATE TABLE token_calls (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            app_account_token TEXT NOT NULL, attempts INTEGER NOT NULL, next_at INTEGER NOT NULL,
            PRIMARY KEY (app_id, environment, original_transaction_id));
        CREATE INDEX token_calls_due ON token_calls (app_id, next_at);
        """,
        // 7: the outbox. Events are written in the transaction that stores the facts causing them,
        // numbered per app in commit order (the writer continues from the highest stored
        // sequence); each delivery (an event to an endpoint, or a
        // notification forwarded) keeps its own state so it survives restarts. Prices for events.
        """
        ALTER TABLE transactions ADD COLUMN price INTEGER;
        ALTER TABLE transactions ADD COLUMN currency TEXT;
        CREATE TABLE events (
            app_id TEXT NOT NULL, sequence INTEGER NOT NULL, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL,
            environment TEXT NOT NULL, original_transaction_id TEXT, app_account_token TEXT,
            occurred_at INTEGER NOT NULL, created_at INTEGER NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (app_id, sequence));
        CREATE TABLE deliveries (
            id INTEGER PRIMARY KEY, app_id TEXT NOT NULL, kind TEXT NOT NULL, event_id TEXT, event_type TEXT,
            endpoint TEXT NOT NULL, body TEXT, status TEXT NOT NULL, attempts INTEGER NOT NULL, next_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL, window_start INTEGER NOT NULL, last_status INTEGER, last_error TEXT,
            delivered_at INTEGER);
        CREATE INDEX deliveries_due ON deliveries (app_id, endpoint, status, next_at);
        CREATE INDEX deliveries_by_status ON deliveries (app_id, status, created_at);
        """,
        // 8: promotional grants (support's), and the indexes a customer's history and the overview
        // read by: notifications and events of one subscription or customer, deliveries of one event,
        // notifications by arrival time.
        """
        CREATE TABLE grants (
            app_id TEXT NOT NULL, id TEXT NOT NULL, environment TEXT NOT NULL, app_account_token TEXT NOT NULL,
            entitlement TEXT NOT NULL, starts_at INTEGER NOT NULL, expires_date INTEGER NOT NULL, reason TEXT,
            granted_by TEXT NOT NULL, revoked_at INTEGER, revoked_by TEXT,
            PRIMARY KEY (app_id, id));
        CREATE INDEX grants_by_token ON grants (app_id, environment, app_account_token, starts_at);
        CREATE INDEX grants_by_expiry ON grants (app_id, expires_date);
        CREATE INDEX notifications_by_subscription ON notifications (app_id, environment, original_transaction_id);
        CREATE INDEX notifications_by_arrival ON notifications (app_id, received_at);
        CREATE INDEX events_by_subscription ON events (app_id, original_transaction_id);
        CREATE INDEX events_by_token ON events (app_id, app_account_token);
        CREATE INDEX deliveries_by_event ON deliveries (app_id, event_id);
        """,
        // 9: Google Play purchases as last read from Google (a later read replaces an earlier
        // one), and the Pub/Sub messages already applied.
        """
        CREATE TABLE play_purchases (
            app_id TEXT NOT NULL, purchase_token TEXT NOT NULL, kind TEXT NOT NULL, product_id TEXT NOT NULL,
            base_plan_id TEXT, offer_id TEXT, environment TEXT NOT NULL, google_state TEXT NOT NULL,
            start_time INTEGER NOT NULL, expiry_time INTEGER, auto_renewing INTEGER NOT NULL, linked_purchase_token TEXT,
            acknowledged INTEGER NOT NULL, app_account_token TEXT, order_id TEXT, voided_at INTEGER, read_at INTEGER NOT NULL,
            json TEXT NOT NULL, PRIMARY KEY (app_id, purchase_token));
        CREATE INDEX play_purchases_by_token ON play_purchases (app_id, app_account_token, start_time);
        CREATE INDEX play_purchases_by_order ON play_purchases (app_id, order_id);
        CREATE TABLE pubsub_messages (
            app_id TEXT NOT NULL, message_id TEXT NOT NULL, received_at INTEGER NOT NULL, PRIMARY KEY (app_id, message_id));
        """,
        // 10: Google acknowledgements waiting (queued with their purchase, retried until Google
        // confirms).
        """
        CREATE TABLE play_acknowledgements (
            app_id TEXT NOT NULL, purchase_token TEXT NOT NULL, kind TEXT NOT NULL, product_id TEXT NOT NULL,
            attempts INTEGER NOT NULL, queued_at INTEGER NOT NULL, next_at INTEGER NOT NULL, PRIMARY KEY (app_id, purchase_token));
        CREATE INDEX play_acknowledgements_due ON play_acknowledgements (app_id, next_at);
        """,
        // 11: partial refunds (`revocationPercentage`) and the offer's duration (`offerPeriod`).
        """
        ALTER TABLE transactions ADD COLUMN revocation_percentage INTEGER;
        ALTER TABLE transactions ADD COLUMN offer_period TEXT;
        """,
        // 12: 12-month commitments billed monthly: each side's plan, and Apple's `commitmentInfo`
        // object as JSON text (read back into its typed form).
        """
        ALTER TABLE transactions ADD COLUMN billing_plan_type TEXT;
        ALTER TABLE transactions ADD COLUMN commitment TEXT;
        ALTER TABLE renewal_infos ADD COLUMN renewal_billing_plan_type TEXT;
        ALTER TABLE renewal_infos ADD COLUMN commitment TEXT;
        """,
        // 13: the Set App Account Token queue becomes the queue of every call owed to Apple (Finish
        // Transaction too), keyed by kind: a purchase's transaction id can equal a subscription's.
        """
        CREATE TABLE apple_calls (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, kind TEXT NOT NULL, transaction_id TEXT NOT NULL,
            app_account_token TEXT, attempts INTEGER NOT NULL, next_at INTEGER NOT NULL,
            PRIMARY KEY (app_id, environment, kind, transaction_id));
        CREATE INDEX apple_calls_due ON apple_calls (app_id, next_at);
        INSERT INTO apple_calls (app_id, environment, kind, transaction_id, app_account_token, attempts, next_at)
            SELECT app_id, environment, 'set_app_account_token', original_transaction_id, app_account_token, attempts, next_at
            FROM token_calls;
        DROP TABLE token_calls;
        """,
        // 14: Google's real-time developer notifications are kept beside Apple's, told apart by store;
        // what Google's 2026 answers add to a purchase (`PlayPurchaseDetails`, JSON text).
        """
        ALTER TABLE notifications ADD COLUMN store TEXT NOT NULL DEFAULT 'app_store';
        ALTER TABLE play_purchases ADD COLUMN details TEXT;
        """,
        // 15: refund reviews: the app's usage evidence, support's overrides, the stores' requests
        // (each as JSON, with the columns the queue and the outcome update need).
        """
        CREATE TABLE usage_records (
            app_id TEXT NOT NULL, id TEXT NOT NULL, app_account_token TEXT NOT NULL, recorded_at INTEGER NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (app_id, id));
        CREATE INDEX usage_records_by_token ON usage_records (app_id, app_account_token, recorded_at);
        CREATE TABLE refund_overrides (
            app_id TEXT NOT NULL, app_account_token TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (app_id, app_account_token));
        CREATE TABLE refund_requests (
            app_id TEXT NOT NULL, id TEXT NOT NULL, store TEXT NOT NULL, environment TEXT NOT NULL, app_account_token TEXT,
            transaction_id TEXT, purchase_token TEXT, status TEXT NOT NULL, next_at INTEGER NOT NULL, requested_at INTEGER NOT NULL,
            outcome TEXT, outcome_at INTEGER, body TEXT NOT NULL, PRIMARY KEY (app_id, id));
        CREATE INDEX refund_requests_due ON refund_requests (app_id, status, next_at);
        CREATE INDEX refund_requests_by_transaction ON refund_requests (app_id, transaction_id);
        CREATE INDEX refund_requests_by_purchase ON refund_requests (app_id, purchase_token);
        """,
        // 16: Apple's retention requests and the answers given (and what they saved).
        """
        CREATE TABLE retention_records (
            app_id TEXT NOT NULL, request_identifier TEXT NOT NULL, environment TEXT NOT NULL, original_transaction_id TEXT NOT NULL,
            answered_at INTEGER NOT NULL, saved_at INTEGER, saved_by TEXT, body TEXT NOT NULL, PRIMARY KEY (app_id, request_identifier));
        CREATE INDEX retention_records_by_subscription ON retention_records (app_id, environment, original_transaction_id);
        """,
        // 17: the business figures kept by the writer: each subscription's moments, and their sums
        // per day (docs/METRICS.md, "Kept by the writer").
        """
        CREATE TABLE metric_moments (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, subscription TEXT NOT NULL, figure TEXT NOT NULL, at INTEGER NOT NULL,
            product_id TEXT NOT NULL, currency TEXT NOT NULL, period TEXT NOT NULL, origin_day INTEGER NOT NULL, store TEXT NOT NULL,
            value INTEGER NOT NULL,
            PRIMARY KEY (app_id, environment, subscription, figure, at, product_id, currency, period, origin_day)) WITHOUT ROWID;
        CREATE INDEX metric_moments_by_instant ON metric_moments (app_id, environment, at);
        CREATE TABLE metric_days (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, day INTEGER NOT NULL, store TEXT NOT NULL, figure TEXT NOT NULL,
            product_id TEXT NOT NULL, currency TEXT NOT NULL, period TEXT NOT NULL, origin_day INTEGER NOT NULL, value INTEGER NOT NULL,
            PRIMARY KEY (app_id, environment, day, store, figure, product_id, currency, period, origin_day)) WITHOUT ROWID;
        """,
        // 18: the figures' sums per hour, ten minutes and minute (`width` in milliseconds,
        // `bucket` its number), so that reading them at an instant costs the same whatever its day
        // holds, filled from the moments already kept.
        """
        CREATE TABLE metric_buckets (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, width INTEGER NOT NULL, bucket INTEGER NOT NULL, store TEXT NOT NULL,
            figure TEXT NOT NULL, product_id TEXT NOT NULL, currency TEXT NOT NULL, period TEXT NOT NULL, origin_day INTEGER NOT NULL,
            value INTEGER NOT NULL,
            PRIMARY KEY (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day)) WITHOUT ROWID;
        """ + metricBucketsFromMoments,
        // 19: app downloads posted by apps (`AppDownload`): one per customer and environment, and
        // found again by the download's id.
        """
        CREATE TABLE app_downloads (
            app_id TEXT NOT NULL, environment TEXT NOT NULL, app_account_token TEXT NOT NULL, app_transaction_id TEXT NOT NULL,
            original_application_version TEXT, original_purchase_date INTEGER, original_platform TEXT, posted_at INTEGER NOT NULL,
            PRIMARY KEY (app_id, app_account_token, environment));
        CREATE INDEX app_downloads_by_id ON app_downloads (app_id, environment, app_transaction_id);
        """,
        // 20: attributes apps set on their customers, for targeting offerings.
        """
        CREATE TABLE customer_attributes (
            app_id TEXT NOT NULL, app_account_token TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, updated_at INTEGER NOT NULL,
            PRIMARY KEY (app_id, app_account_token, name));
        """,
        // 21: experiments on offerings, customers' assignments (at first exposure), and what apps
        // report of their paywalls.
        """
        CREATE TABLE experiments (
            app_id TEXT NOT NULL, id TEXT NOT NULL, placement TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL,
            body TEXT NOT NULL, PRIMARY KEY (app_id, id));
        CREATE TABLE experiment_assignments (
            app_id TEXT NOT NULL, experiment TEXT NOT NULL, app_account_token TEXT NOT NULL, variant TEXT NOT NULL,
            placement TEXT NOT NULL, offering TEXT NOT NULL, enrolled_at INTEGER NOT NULL,
            PRIMARY KEY (app_id, experiment, app_account_token));
        CREATE INDEX experiment_assignments_by_token ON experiment_assignments (app_id, app_account_token);
        CREATE TABLE paywall_events (
            app_id TEXT NOT NULL, app_account_token TEXT NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL, placement TEXT NOT NULL,
            offering TEXT NOT NULL, experiment TEXT, variant TEXT,
            PRIMARY KEY (app_id, app_account_token, at, kind, placement));
        CREATE INDEX paywall_events_by_experiment ON paywall_events (app_id, experiment, at);
        """,
    ]

    /// The hour, ten-minute and minute sums of every kept moment read to the instant
    /// (`MetricFigure.isReadToTheInstant`), as the writer adds them
    /// (`MetricMoment.bucket`: a stock change's bucket is the first whose end it reaches), each
    /// sum held at Int64's bounds (SQLite's `+` gives a REAL past them, which the clamp takes
    /// back to the bound; its SUM would stop the migration instead). `floor` of x / w is
    /// (x − ((x % w) + w) % w) / w, as SQLite's `/` truncates.
    static let metricBucketsFromMoments = """
        INSERT INTO metric_buckets (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day, value)
        SELECT app_id, environment, w.width,
            CASE WHEN figure IN ('active', 'trial', 'mrr')
                THEN (at - 1 - (((at - 1) % w.width) + w.width) % w.width) / w.width + 1
                ELSE (at - ((at % w.width) + w.width) % w.width) / w.width END,
            store, figure, product_id, currency, period, origin_day, value
        FROM metric_moments, (SELECT 3600000 AS width UNION ALL SELECT 600000 UNION ALL SELECT 60000) AS w
        WHERE figure IN ('active', 'trial', 'mrr', 'lapsed_trial', 'churn_voluntary', 'churn_involuntary', 'churn_other')
        ON CONFLICT (app_id, environment, width, bucket, store, figure, product_id, currency, period, origin_day)
        DO UPDATE SET value = MAX(MIN(value + excluded.value, 9223372036854775807), -9223372036854775808);
        """
}
