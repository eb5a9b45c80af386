import Entitlements
import Foundation
import JSON

/// How the subscription facts and grants become rows and back, once for both dialects: the
/// values a put writes in its table's column order (`StoredTables`), the columns a read takes
/// and the record made from them.
enum TransactionCodec {
    static let table = StoredTables.transactions

    static func values(appId: String, _ record: TransactionRecord, jws: String) -> [StoredValue] {
        [
            .text(appId), .text(record.environment), .text(record.transactionId), .text(record.originalTransactionId),
            .text(record.productId), .from(record.subscriptionGroupIdentifier), .text(record.type),
            .integer(record.purchaseDate), .from(record.originalPurchaseDate), .from(record.expiresDate),
            .from(record.revocationDate), .from(record.revocationReason), .from(record.revocationType),
            .from(record.isUpgraded), .from(record.offerType), .from(record.offerDiscountType),
            .from(record.offerIdentifier), .from(record.ownershipType), .integer(record.signedDate),
            .from(record.appAccountToken), .text(jws), .from(record.price), .from(record.currency),
            .from(record.revocationPercentage), .from(record.offerPeriod), .from(record.billingPlanType),
            .from(StoredCommitment.text(record.commitment)),
        ]
    }

    /// What a read takes: every column but the ones the reader knows already (app, environment,
    /// subscription) and the signed copy, which only the history reads.
    static let read = [
        "transaction_id", "product_id", "subscription_group", "type", "purchase_date", "original_purchase_date", "expires_date",
        "revocation_date", "revocation_reason", "revocation_type", "is_upgraded", "offer_type", "offer_discount_type",
        "offer_identifier", "ownership_type", "signed_date", "app_account_token", "price", "currency", "revocation_percentage",
        "offer_period", "billing_plan_type", "commitment",
    ]

    static func record(_ row: some ColumnReader, original: String, environment: String) -> TransactionRecord {
        TransactionRecord(
            transactionId: row.text(0) ?? "", originalTransactionId: original, productId: row.text(1) ?? "",
            subscriptionGroupIdentifier: row.text(2), type: row.text(3) ?? "", purchaseDate: row.integer(4) ?? 0,
            originalPurchaseDate: row.integer(5), expiresDate: row.integer(6), revocationDate: row.integer(7),
            revocationReason: row.integer(8), revocationType: row.text(9), isUpgraded: row.integer(10) == 1,
            offerType: row.integer(11), offerDiscountType: row.text(12), offerIdentifier: row.text(13),
            ownershipType: row.text(14), environment: environment, signedDate: row.integer(15) ?? 0,
            appAccountToken: row.text(16), price: row.integer(17), currency: row.text(18),
            revocationPercentage: row.integer(19), offerPeriod: row.text(20), billingPlanType: row.text(21),
            commitment: StoredCommitment.transaction(row.text(22)))
    }
}

enum RenewalCodec {
    static let table = StoredTables.renewalInfos

    static func values(appId: String, _ record: RenewalRecord, jws: String) -> [StoredValue] {
        [
            .text(appId), .text(record.environment), .text(record.originalTransactionId), .from(record.productId),
            .from(record.autoRenewProductId), .from(record.autoRenewStatus), .from(record.isInBillingRetryPeriod),
            .from(record.gracePeriodExpiresDate), .from(record.expirationIntent),
            .text(record.eligibleWinBackOfferIds.joined(separator: "\n")), .integer(record.signedDate), .text(jws),
            .from(record.renewalBillingPlanType), .from(StoredCommitment.text(record.commitment)),
        ]
    }

    /// What a read takes (as `TransactionCodec.read`).
    static let read = [
        "product_id", "auto_renew_product_id", "auto_renew_status", "is_in_billing_retry", "grace_period_expires_date",
        "expiration_intent", "eligible_win_back_offer_ids", "signed_date", "renewal_billing_plan_type", "commitment",
    ]

    static func record(_ row: some ColumnReader, original: String, environment: String) -> RenewalRecord {
        let offers = row.text(6) ?? ""
        return RenewalRecord(
            originalTransactionId: original, productId: row.text(0), autoRenewProductId: row.text(1),
            autoRenewStatus: row.integer(2), isInBillingRetryPeriod: row.integer(3) == 1,
            gracePeriodExpiresDate: row.integer(4), expirationIntent: row.integer(5),
            eligibleWinBackOfferIds: offers.isEmpty ? [] : offers.components(separatedBy: "\n"), environment: environment,
            signedDate: row.integer(7) ?? 0, renewalBillingPlanType: row.text(8), commitment: StoredCommitment.renewal(row.text(9)))
    }
}

enum GrantCodec {
    static let table = StoredTables.grants

    static func values(appId: String, _ grant: PromotionalGrant) -> [StoredValue] {
        [
            .text(appId), .text(grant.id), .text(grant.environment), .text(grant.appAccountToken), .text(grant.entitlement),
            .integer(grant.startsAt), .integer(grant.expiresDate), .from(grant.reason), .text(grant.grantedBy),
            .from(grant.revokedAt), .from(grant.revokedBy),
        ]
    }

    /// What a read takes: every column but the app's.
    static let read = Array(table.columns.dropFirst())

    static func record(_ row: some ColumnReader) -> PromotionalGrant {
        PromotionalGrant(
            id: row.text(0) ?? "", appAccountToken: row.text(2) ?? "", environment: row.text(1) ?? "",
            entitlement: row.text(3) ?? "", startsAt: row.integer(4) ?? 0, expiresDate: row.integer(5) ?? 0, reason: row.text(6),
            grantedBy: row.text(7) ?? "", revokedAt: row.integer(8), revokedBy: row.text(9))
    }
}

enum AppDownloadCodec {
    static let table = StoredTables.appDownloads

    static func values(appId: String, _ download: AppDownload) -> [StoredValue] {
        [
            .text(appId), .text(download.environment), .text(download.appAccountToken), .text(download.appTransactionId),
            .from(download.originalApplicationVersion), .from(download.originalPurchaseDate), .from(download.originalPlatform),
            .integer(download.postedAt),
        ]
    }

    /// What a read takes: every column but the app's.
    static let read = Array(table.columns.dropFirst())

    static func record(_ row: some ColumnReader) -> AppDownload {
        AppDownload(
            environment: row.text(0) ?? "", appAccountToken: row.text(1) ?? "", appTransactionId: row.text(2) ?? "",
            originalApplicationVersion: row.text(3), originalPurchaseDate: row.integer(4), originalPlatform: row.text(5),
            postedAt: row.integer(6) ?? 0)
    }
}

enum AttributeCodec {
    static let table = StoredTables.customerAttributes
    /// What a read takes: the attribute's own columns.
    static let read = Array(table.columns.dropFirst(2))

    static func record(_ row: some ColumnReader) -> CustomerAttribute {
        CustomerAttribute(name: row.text(0) ?? "", value: row.text(1) ?? "", updatedAt: row.integer(2) ?? 0)
    }
}

enum ExperimentCodec {
    static let table = StoredTables.experiments

    static func values(appId: String, _ experiment: Experiment) -> [StoredValue] {
        [
            .text(appId), .text(experiment.id), .text(experiment.placement), .text(experiment.status.rawValue),
            .integer(experiment.createdAt), .text(JSONValue.object(experiment.json).serializedString),
        ]
    }
}

enum AssignmentCodec {
    static let table = StoredTables.experimentAssignments

    static func values(appId: String, _ assignment: ExperimentAssignment) -> [StoredValue] {
        [
            .text(appId), .text(assignment.experiment), .text(assignment.appAccountToken), .text(assignment.variant),
            .text(assignment.placement), .text(assignment.offering), .integer(assignment.enrolledAt),
        ]
    }

    /// What a read takes: every column but the app's.
    static let read = Array(table.columns.dropFirst())

    static func record(_ row: some ColumnReader) -> ExperimentAssignment {
        ExperimentAssignment(
            experiment: row.text(0) ?? "", appAccountToken: row.text(1) ?? "", variant: row.text(2) ?? "", placement: row.text(3) ?? "",
            offering: row.text(4) ?? "", enrolledAt: row.integer(5) ?? 0)
    }
}

enum PaywallEventCodec {
    static let table = StoredTables.paywallEvents

    static func values(appId: String, _ event: PaywallEvent) -> [StoredValue] {
        [
            .text(appId), .text(event.appAccountToken), .integer(event.at), .text(event.kind.rawValue), .text(event.placement),
            .text(event.offering), .from(event.experiment), .from(event.variant),
        ]
    }
}

enum NotificationCodec {
    static let table = StoredTables.notifications

    static func values(_ notification: StoredNotification) -> [StoredValue] {
        [
            .text(notification.notificationUUID), .text(notification.appId), .text(notification.environment),
            .text(notification.notificationType), .from(notification.subtype), .integer(notification.signedDate),
            .integer(notification.receivedAt), .from(notification.originalTransactionId), .text(notification.jws),
            .text(notification.store),
        ]
    }
}

enum EventCodec {
    static let table = StoredTables.events

    static func values(_ event: OutboxEvent) -> [StoredValue] {
        [
            .text(event.appId), .integer(event.sequence), .text(event.id), .text(event.type), .text(event.environment),
            .from(event.originalTransactionId), .from(event.appAccountToken), .integer(event.occurredAt),
            .integer(event.createdAt), .text(event.body),
        ]
    }
}

enum DeliveryCodec {
    static let table = StoredTables.deliveries

    /// A new delivery: never tried, so no last answer and no delivery time.
    static func values(appId: String, _ delivery: NewDelivery) -> [StoredValue] {
        [
            .text(appId), .text(delivery.kind.rawValue), .from(delivery.eventId), .from(delivery.eventType), .text(delivery.endpoint),
            .from(delivery.body), .text(delivery.status.rawValue), .integer(Int64(delivery.attempts)), .integer(delivery.nextAt),
            .integer(delivery.createdAt), .integer(delivery.windowStart), .null, .null, .null,
        ]
    }
}
