import AppStore

/// The rules that turn a stored change into customer events (docs/EVENTS.md, "Which fact causes which
/// event"). Pure: the facts before and after one batch in, events out.
///
/// Every rule compares what was stored before the batch with what is stored after it, so a fact
/// Entitle already had causes nothing: a duplicate notification, a sync that repeats a
/// notification, and a client post followed by Apple's notification of the same purchase each
/// yield their events once.
package enum CustomerEventDerivation {
    package static func events(_ change: FactChange, billingRetryGrantsAccess: Bool) -> [CustomerEvent] {
        let batch = change.batch
        var events: [CustomerEvent] = []
        if batch.webhookTestId != nil || batch.notification?.notificationType == "TEST" {
            let at = batch.notification?.signedDate ?? batch.requestedAt
            events.append(
                CustomerEvent(.test, environment: batch.environment, originalTransactionId: nil, transaction: nil, occurredAt: at))
        }
        if let consent = batch.consentRescinded, let notification = batch.notification {
            var event = CustomerEvent(
                .consentRescinded, environment: batch.environment, originalTransactionId: nil, transaction: nil,
                occurredAt: notification.signedDate)
            event.consent = consent
            events.append(event)
        }
        if let grant = batch.grant { events += grantEvents(grant, before: change.grantBefore) }
        if let enrollment = change.newEnrollment {
            var event = CustomerEvent(
                .experimentEnrolled, environment: batch.environment, originalTransactionId: nil, transaction: nil,
                occurredAt: enrollment.enrolledAt)
            event.enrollment = enrollment
            events.append(event)
        }
        for after in change.playAfter {
            events += playEvents(before: change.playBefore[after.purchaseToken], after: after, at: batch.requestedAt)
        }
        events += refundEvents(batch)
        events += retentionEvents(change)
        for after in change.after {
            events += Subscription(
                before: change.before[after.originalTransactionId], after: after, notificationAt: batch.notification?.signedDate,
                notification: batch.notification, billingRetryGrantsAccess: billingRetryGrantsAccess
            ).events()
        }
        return events
    }

    /// A retention answer given (`RETENTION_OFFERED`), and the answers the change shows saved
    /// their subscription (`RETENTION_SAVED`).
    static func retentionEvents(_ change: FactChange) -> [CustomerEvent] {
        var events: [CustomerEvent] = []
        if let record = change.batch.retention {
            var event = CustomerEvent(
                .retentionOffered, environment: record.environment, originalTransactionId: record.originalTransactionId,
                transaction: nil, occurredAt: record.answeredAt)
            event.retention = record
            events.append(event)
        }
        for save in change.retentionSaves {
            var saved = save.record
            (saved.savedAt, saved.savedBy) = (save.at, save.how)
            var event = CustomerEvent(
                .retentionSaved, environment: saved.environment, originalTransactionId: saved.originalTransactionId, transaction: nil,
                occurredAt: save.at)
            event.retention = saved
            events.append(event)
        }
        return events
    }

    /// A store asking about a refund (the request stored with its notification), the answer
    /// accepted by the store, and Apple declining the refund.
    static func refundEvents(_ batch: FactBatch) -> [CustomerEvent] {
        var events: [CustomerEvent] = []
        func transaction(_ id: String?) -> TransactionRecord? { batch.transactions.first { $0.record.transactionId == id }?.record }
        if let request = batch.refundRequest {
            var event = CustomerEvent(
                .refundRequested, environment: request.environment, originalTransactionId: request.originalTransactionId,
                transaction: transaction(request.transactionId), occurredAt: request.requestedAt)
            event.refundRequest = request
            events.append(event)
        }
        if let request = batch.refundRequestUpdate, request.status == .sent {
            var event = CustomerEvent(
                .refundReviewSent, environment: request.environment, originalTransactionId: request.originalTransactionId,
                transaction: nil, occurredAt: request.sentAt ?? batch.requestedAt)
            event.refundRequest = request
            events.append(event)
        }
        if let notification = batch.notification, notification.notificationType == "REFUND_DECLINED",
            let record = batch.transactions.first?.record
        {
            events.append(
                CustomerEvent(
                    .refundDeclined, environment: batch.environment, originalTransactionId: record.originalTransactionId,
                    transaction: record, occurredAt: notification.signedDate))
        }
        return events
    }

    /// A grant stored for the first time was given; one stored again with `revokedAt` it did not
    /// have before was revoked. Storing the same grant again causes nothing.
    static func grantEvents(_ grant: PromotionalGrant, before: PromotionalGrant?) -> [CustomerEvent] {
        var kind: CustomerEvent.Kind?
        var at = grant.startsAt
        if before == nil && grant.revokedAt == nil {
            kind = .promotionalGrant
        } else if let revokedAt = grant.revokedAt, before != nil, before?.revokedAt == nil {
            kind = .promotionalGrantRevoked
            at = revokedAt
        }
        guard let kind else { return [] }
        var event = CustomerEvent(kind, environment: grant.environment, originalTransactionId: nil, transaction: nil, occurredAt: at)
        event.grant = grant
        return [event]
    }

    /// Google Play purchases by the same rules as the App Store's, comparing the purchase as
    /// stored before with the new read: new → `INITIAL_PURCHASE` (`PRODUCT_CHANGE` when it
    /// replaces a purchase, `NON_RENEWING_PURCHASE` for a one-time product), with `TRIAL_STARTED`
    /// in a free trial; a later expiry → `RENEWAL` (and `TRIAL_CONVERTED` out of a free trial);
    /// auto-renew off → `CANCELLATION` (and `TRIAL_CANCELLED` in a running free trial), back on →
    /// `UNCANCELLATION`; into grace or on hold
    /// → `BILLING_ISSUE`, back to active → `BILLING_RECOVERY`; expired → `EXPIRATION`; voided →
    /// `REFUND`. A read that changes nothing causes nothing.
    static func playEvents(before: PlayPurchase?, after: PlayPurchase, at instant: Int64) -> [CustomerEvent] {
        func event(_ kind: CustomerEvent.Kind) -> CustomerEvent {
            var event = CustomerEvent(
                kind, environment: after.environment, originalTransactionId: nil, transaction: nil, occurredAt: instant)
            event.play = after
            return event
        }
        guard let before else {
            if after.kind == .product { return after.googleState == "PURCHASED" ? [event(.nonRenewingPurchase)] : [] }
            var first = event(after.linkedPurchaseToken == nil ? .initialPurchase : .productChange)
            if after.linkedPurchaseToken != nil {
                first.newProductId = after.productId
                first.takesEffect = "IMMEDIATELY"
            }
            return after.details.periodType == "TRIAL" ? [first, event(.trialStarted)] : [first]
        }
        var events: [CustomerEvent] = []
        // A revocation (voided, or SUBSCRIPTION_REVOKED) reads as expired and not renewing too;
        // its one event is the refund below, not also a cancellation and an expiration.
        let revoked = after.voidedAt != nil && before.voidedAt == nil
        let troubled: Set<String> = ["SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "SUBSCRIPTION_STATE_ON_HOLD"]
        if after.kind == .subscription {
            let wasTrial = before.details.periodType == "TRIAL"
            // Google stretches the expiry over a grace period: that is no renewal, nothing was charged.
            if let expiry = after.expiryTime, expiry > (before.expiryTime ?? 0), before.expiryTime != nil,
                !troubled.contains(after.googleState)
            {
                var renewal = event(.renewal)
                renewal.previousExpiresDate = before.expiryTime
                let converted = wasTrial && after.details.periodType != "TRIAL"
                renewal.isTrialConversion = converted
                events.append(renewal)
                if converted { events.append(event(.trialConverted)) }
            }
            if before.autoRenewing && !after.autoRenewing && !revoked {
                var cancellation = event(.cancellation)
                cancellation.cancelReason = "UNSUBSCRIBE"
                events.append(cancellation)
                if wasTrial, after.details.periodType == "TRIAL", let end = after.expiryTime, end > instant {
                    var trial = event(.trialCancelled)
                    trial.cancelReason = "UNSUBSCRIBE"
                    events.append(trial)
                }
            } else if !before.autoRenewing && after.autoRenewing && after.googleState != "SUBSCRIPTION_STATE_EXPIRED" {
                events.append(event(.uncancellation))
            }
            if troubled.contains(after.googleState) && !troubled.contains(before.googleState) { events.append(event(.billingIssue)) }
            if troubled.contains(before.googleState) && after.googleState == "SUBSCRIPTION_STATE_ACTIVE" {
                events.append(event(.billingRecovery))
            }
            if after.googleState == "SUBSCRIPTION_STATE_EXPIRED" && before.googleState != "SUBSCRIPTION_STATE_EXPIRED" && !revoked {
                events.append(event(.expiration))
            }
            if let next = after.details.nextProductId, next != before.details.nextProductId {
                var change = event(.productChange)
                change.previousProductId = after.productId
                change.newProductId = next
                change.takesEffect = "AT_RENEWAL"
                events.append(change)
            }
            if let increase = after.details.pendingPriceIncrease, before.details.pendingPriceIncrease == nil {
                var price = event(.priceIncrease)
                price.priceIncreaseKind = increase.kind
                price.consentDeadline = increase.consentDeadline
                price.newPrice = increase.newPrice
                events.append(price)
            }
        }
        if revoked {
            events.append(event(.refund))
        } else if after.kind == .product, let had = before.details.entitledQuantity, let has = after.details.entitledQuantity, has < had {
            // A quantity-based partial refund: the purchase stands with fewer units.
            var refund = event(.refund)
            refund.refundedQuantity = had - has
            refund.remainingQuantity = has
            events.append(refund)
        }
        return events
    }

    /// The rules for one subscription (or one-time purchase) the batch touched.
    struct Subscription {
        let before: SubscriptionFacts?
        let after: SubscriptionFacts
        /// The notification's `signedDate`: when the batch is a notification, every event happened then.
        let notificationAt: Int64?
        let notification: StoredNotification?
        let billingRetryGrantsAccess: Bool

        private var stored: [TransactionRecord] { before?.transactions ?? [] }

        func events() -> [CustomerEvent] {
            let added = after.transactions.filter { record in !stored.contains { $0.transactionId == record.transactionId } }
            var events = added.flatMap(purchaseEvents)
            events += after.transactions.flatMap(updateEvents)
            events += renewalInfoEvents(addedTransactions: !added.isEmpty)
            events += priceIncreaseEvents()
            events += billingEvents(renewed: added.contains { isSubscription($0) && $0.transactionId != $0.originalTransactionId })
            return events
        }

        private func event(_ kind: CustomerEvent.Kind, _ transaction: TransactionRecord?, at instant: Int64) -> CustomerEvent {
            CustomerEvent(
                kind, environment: after.environment, originalTransactionId: after.originalTransactionId, transaction: transaction,
                occurredAt: notificationAt ?? instant)
        }

        private func isSubscription(_ record: TransactionRecord) -> Bool { record.type == ProductType.autoRenewable.rawValue }

        private func isFreeTrial(_ record: TransactionRecord?) -> Bool {
            record.map { SubscriptionEngine.periodType($0) == "TRIAL" } ?? false
        }

        /// A transaction Entitle did not have: a purchase, a renewal, or an upgrade's new period.
        private func purchaseEvents(_ record: TransactionRecord) -> [CustomerEvent] {
            guard isSubscription(record) else { return [event(.nonRenewingPurchase, record, at: record.purchaseDate)] }
            var events: [CustomerEvent] = []
            let previous = after.transactions.last {
                ($0.purchaseDate, $0.transactionId) < (record.purchaseDate, record.transactionId)
            }
            if record.transactionId == record.originalTransactionId {
                events.append(event(.initialPurchase, record, at: record.purchaseDate))
            } else if let previous, previous.productId != record.productId, let end = previous.expiresDate, record.purchaseDate < end {
                // The new product began before the old period ended: an upgrade, effective now.
                var change = event(.productChange, record, at: record.purchaseDate)
                change.previousProductId = previous.productId
                change.newProductId = record.productId
                change.takesEffect = "IMMEDIATELY"
                events.append(change)
            } else {
                var renewal = event(.renewal, record, at: record.purchaseDate)
                let converted = isFreeTrial(previous) && !isFreeTrial(record)
                renewal.isTrialConversion = converted
                events.append(renewal)
                if converted { events.append(event(.trialConverted, record, at: record.purchaseDate)) }
            }
            if isFreeTrial(record) { events.append(event(.trialStarted, record, at: record.purchaseDate)) }
            return events
        }

        /// A newer copy of a stored transaction (or a new one already refunded).
        private func updateEvents(_ record: TransactionRecord) -> [CustomerEvent] {
            let old = stored.first { $0.transactionId == record.transactionId }
            var events: [CustomerEvent] = []
            if record.revocationDate != nil && old?.revocationDate == nil {
                var refund = event(.refund, record, at: record.revocationDate ?? record.signedDate)
                refund.refundedTransactionId = record.transactionId
                refund.revocationReason = record.revocationReason
                refund.revocationType = record.revocationType
                refund.revocationPercentage = record.revocationPercentage
                refund.refundedMilliunits = record.refundedMilliunits
                refund.endedAccess = endedAccess(refund.occurredAt, refunded: record, known: old != nil)
                events.append(refund)
            } else if let old, old.revocationDate != nil, record.revocationDate == nil {
                events.append(event(.refundReversed, record, at: record.signedDate))
            }
            if let old, let was = old.expiresDate, let now = record.expiresDate, now > was, record.revocationDate == nil {
                var extended = event(.subscriptionExtended, record, at: record.signedDate)
                extended.previousExpiresDate = was
                events.append(extended)
            }
            return events
        }

        /// Whether the customer had the purchase's access just before the refund and not after.
        private func endedAccess(_ instant: Int64, refunded: TransactionRecord, known: Bool) -> Bool {
            guard known else { return false }
            guard isSubscription(refunded) else { return refunded.type != ProductType.consumable.rawValue }
            return isActive(before, at: instant) && !isActive(after, at: instant)
        }

        private func isActive(_ facts: SubscriptionFacts?, at instant: Int64) -> Bool {
            guard let facts else { return false }
            return SubscriptionEngine.evaluate(
                transactions: facts.transactions, renewal: facts.renewal, signals: facts.signals, now: instant,
                environment: facts.environment, billingRetryGrantsAccess: billingRetryGrantsAccess)?.isActive ?? false
        }

        /// Auto-renewal turned off or on, a pending product change, an expiration.
        private func renewalInfoEvents(addedTransactions: Bool) -> [CustomerEvent] {
            guard let renewal = after.renewal, renewal != before?.renewal else { return [] }
            let old = before?.renewal
            let current = SubscriptionEngine.currentTransaction(of: after.transactions)
            let at = renewal.signedDate
            var events: [CustomerEvent] = []
            // A subscription Entitle knew without renewal info was renewing (Apple's default).
            let wasRenewing = old.map { $0.autoRenewStatus == 1 } ?? !stored.isEmpty
            if renewal.autoRenewStatus == 0 && wasRenewing {
                var cancellation = event(.cancellation, current, at: at)
                cancellation.cancelReason = cancelReason(renewal)
                events.append(cancellation)
                if isFreeTrial(current), let end = current?.expiresDate, end > cancellation.occurredAt {
                    var trial = event(.trialCancelled, current, at: at)
                    trial.cancelReason = cancellation.cancelReason
                    events.append(trial)
                }
            } else if renewal.autoRenewStatus == 1, let old, old.autoRenewStatus == 0, old.expirationIntent == nil {
                events.append(event(.uncancellation, current, at: at))
            }
            if !addedTransactions, let was = old?.autoRenewProductId, let next = renewal.autoRenewProductId, was != next {
                var change = event(.productChange, current, at: at)
                change.previousProductId = current?.productId
                change.newProductId = next
                change.takesEffect = "AT_RENEWAL"
                events.append(change)
            }
            events += commitmentEvents(renewal, old: old, current: current)
            if renewal.expirationIntent != nil && old?.expirationIntent == nil {
                var expiration = event(.expiration, current, at: current?.expiresDate ?? at)
                expiration.expirationReason = ExpirationIntentName.name(renewal.expirationIntent)
                events.append(expiration)
            }
            return events
        }

        /// A 12-month commitment's own renewal (`commitmentAutoRenewStatus`) turned off or on again,
        /// as seen between two renewal infos: Apple ties no notification to it and documents no
        /// default, so only a change between two stated values counts.
        private func commitmentEvents(_ renewal: RenewalRecord, old: RenewalRecord?, current: TransactionRecord?) -> [CustomerEvent] {
            guard let was = old?.commitment?.autoRenewStatus, let now = renewal.commitment?.autoRenewStatus, was != now else {
                return []
            }
            var change = event(now == 0 ? .cancellation : .uncancellation, current, at: renewal.signedDate)
            change.scope = "commitment"
            if now == 0 { change.cancelReason = cancelReason(renewal) }
            return [change]
        }

        /// Apple's `PRICE_INCREASE` `PENDING`: the customer has not yet consented to a price
        /// increase that needs it (`ACCEPTED` means they did; nothing to tell then).
        private func priceIncreaseEvents() -> [CustomerEvent] {
            guard let notification, notification.notificationType == "PRICE_INCREASE", notification.subtype == "PENDING",
                notification.originalTransactionId == after.originalTransactionId
            else { return [] }
            var price = event(.priceIncrease, SubscriptionEngine.currentTransaction(of: after.transactions), at: notification.signedDate)
            price.priceIncreaseKind = "PRICE_INCREASE"
            return [price]
        }

        /// Apple's `expirationIntent` when it says; otherwise a customer's own switch-off.
        private func cancelReason(_ renewal: RenewalRecord) -> String {
            if renewal.expirationIntent != nil { return ExpirationIntentName.name(renewal.expirationIntent) }
            switch notification?.notificationType {
            case "DID_CHANGE_RENEWAL_STATUS": return "UNSUBSCRIBE"
            case "DID_FAIL_TO_RENEW": return "BILLING_ERROR"
            case "PRICE_INCREASE": return "PRICE_INCREASE"
            default: return renewal.isInBillingRetryPeriod ? "BILLING_ERROR" : "UNKNOWN"
            }
        }

        /// Billing trouble appearing (`BILLING_ISSUE`) or ending with a renewal (`BILLING_RECOVERY`).
        private func billingEvents(renewed: Bool) -> [CustomerEvent] {
            let troubleBefore = before.flatMap(billingIssueDetectedAt)
            let troubleAfter = billingIssueDetectedAt(after)
            let current = SubscriptionEngine.currentTransaction(of: after.transactions)
            if troubleBefore == nil, let detected = troubleAfter {
                var issue = event(.billingIssue, current, at: detected)
                issue.gracePeriodExpiresDate = after.renewal?.gracePeriodExpiresDate
                return [issue]
            }
            if troubleBefore != nil, troubleAfter == nil, renewed {
                return [event(.billingRecovery, current, at: current?.purchaseDate ?? 0)]
            }
            return []
        }

        private func billingIssueDetectedAt(_ facts: SubscriptionFacts) -> Int64? {
            guard let current = SubscriptionEngine.currentTransaction(of: facts.transactions), isSubscription(current) else { return nil }
            return SubscriptionEngine.billingIssueDetectedAt(facts.signals, renewal: facts.renewal, current: current)
        }
    }
}
