/// The write path, once for every store: the order of a batch's steps, the merge rules (through
/// `FactChange.applying`: the newest signed copy wins, a signed token links, the first link
/// stands unless moved, a void and a revocation are never forgotten, a duplicate applies nothing)
/// and the events they cause. A store runs it inside one of its transactions.
package enum FactWriter {
    /// What writing a batch came to.
    package struct Written: Sendable {
        package var outcome: ApplyOutcome
        /// The events written (announced once the transaction has committed).
        package var events: [OutboxEvent]
        /// Whether the store must undo everything the batch wrote (a link conflict undoes the
        /// notification too, so that Apple's retry is applied) and still answer `outcome`.
        package var undo: Bool
        var forwards: Bool
        /// What the batch changed, its events still to be numbered and written (`writeEvents`).
        var unnumbered: FactChange?

        /// What the store answers: nothing written when undone.
        package var applied: AppliedBatch {
            AppliedBatch(outcome: outcome, events: undo ? [] : events, forwards: !undo && forwards)
        }
    }

    /// A batch, facts and events.
    package static func write(_ batch: FactBatch, into store: some FactWriteTransaction) throws -> Written {
        var written = try writeFacts(batch, into: store)
        var sequences: [String: Int64] = [:]
        try writeEvents(&written, into: store, sequences: &sequences)
        if let next = sequences[batch.appId] { try store.eventsWritten(through: next - 1) }
        return written
    }

    /// A batch's first step: everything but its events. A store with several writers runs this
    /// for each batch of a group, then `writeEvents` for all of them, so the app's event counter
    /// is held only from then to the commit.
    package static func writeFacts(_ batch: FactBatch, into store: some FactWriteTransaction) throws -> Written {
        try store.lock(lockKeys(batch))
        if let notification = batch.notification, try !store.insertNotificationIfNew(notification) {
            return Written(outcome: .duplicateNotification, events: [], undo: true, forwards: false, unnumbered: nil)
        }
        if let message = batch.pubsubMessageId, try !store.insertPubSubMessageIfNew(message, receivedAt: batch.requestedAt) {
            return Written(outcome: .duplicateNotification, events: [], undo: true, forwards: false, unnumbered: nil)
        }
        // Decided under the subscription's lock, against what is committed: of requests answered
        // at once, one offer stands and one answer per request identifier.
        if let record = batch.retention {
            let answered = try store.retentionRecords(environment: batch.environment, originalTransactionId: record.originalTransactionId)
            if let refusal = record.refusal(answered: answered, offerCooldown: batch.retentionOfferCooldown) {
                return Written(outcome: refusal, events: [], undo: true, forwards: false, unnumbered: nil)
            }
            if try !store.insertRetentionRecordIfNew(record) {
                return Written(outcome: .retentionAlreadyAnswered, events: [], undo: true, forwards: false, unnumbered: nil)
            }
        }
        let pending = try FactChange.read(
            batch, environments: batch.eventWriter?.environments, retentionWindow: batch.eventWriter?.retentionWindow, from: store)
        var outcome = ApplyOutcome.applied
        if let requested = batch.requestedLink, let existing = pending.stored[requested.originalTransactionId]?.appAccountToken,
            existing != requested.appAccountToken
        {
            guard batch.transfersLink else {
                return Written(outcome: .linkConflict(existingToken: existing), events: [], undo: true, forwards: false, unnumbered: nil)
            }
            try store.insertTransfer(
                environment: batch.environment,
                LinkTransfer(
                    originalTransactionId: requested.originalTransactionId, from: existing, to: requested.appAccountToken,
                    at: batch.requestedAt))
            outcome = .transferred(from: existing)
        }
        var change = FactChange.applying(batch, to: pending)
        for after in change.after {
            let stored = pending.stored[after.originalTransactionId]
            try putChanges(after, over: stored, from: batch, into: store)
            if after != stored, keepsMetrics(batch) { try keepMetrics(of: after, into: store) }
        }
        try rebuildMetrics(of: batch, into: store)
        for (record, _) in batch.transactions {
            guard let app = record.appTransactionId else { continue }
            try store.putAppTransaction(
                environment: record.environment, originalTransactionId: record.originalTransactionId, appTransactionId: app)
        }
        if let (record, _) = batch.renewal, let app = record.appTransactionId {
            try store.putAppTransaction(
                environment: record.environment, originalTransactionId: record.originalTransactionId, appTransactionId: app)
        }
        try storeCalls(of: batch, newPurchases: batch.finishesPurchases ? newTransactions(change, over: pending) : [], into: store)
        for after in change.playAfter where after != change.playBefore[after.purchaseToken] {
            if keepsMetrics(batch) { try keepMetrics(ofPlay: after, into: store) }
            guard let answer = batch.playPurchases.last(where: { $0.purchase.purchaseToken == after.purchaseToken })?.json else { continue }
            try store.putPlayPurchase(after, answer: answer)
        }
        try queueAcknowledgements(of: change, into: store)
        try storeRefundFacts(of: batch, into: store)
        for save in change.retentionSaves {
            try store.markRetentionSaved(requestIdentifier: save.record.requestIdentifier, at: save.at, how: save.how)
        }
        if let grant = change.grantAfter, grant != change.grantBefore { try store.putGrant(grant) }
        if let download = batch.appDownload { try store.putAppDownload(download) }
        if let experiment = batch.experiment { try store.putExperiment(experiment) }
        if let enrollment = batch.enrollment, try store.insertAssignmentIfNew(enrollment) {
            change.newEnrollment = enrollment
            // The customer as their events show them: enrolled now.
            change.customerSubscriber?.assignments.append(enrollment)
        }
        if let event = batch.paywallEvent { try store.insertPaywallEvent(event) }
        if let (token, changes) = batch.attributes {
            for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
                try store.putAttribute(appAccountToken: token, name: name, value: value, at: batch.requestedAt)
            }
        }
        if let forward = batch.forward {
            try store.insertDelivery(
                NewDelivery(
                    kind: .forward, eventId: nil, eventType: batch.notification?.notificationType, endpoint: forward.url,
                    body: forward.body, createdAt: batch.notification?.receivedAt ?? batch.requestedAt))
        }
        return Written(
            outcome: outcome, events: [], undo: false, forwards: batch.forward != nil, unnumbered: batch.eventWriter == nil ? nil : change)
    }

    /// A batch's second step: its events, numbered on from `sequences[app]` (read from the store
    /// for an app's first batch of the transaction), and written. `sequences` then holds each
    /// app's next sequence; the caller ends the transaction's numbering with one `eventsWritten`
    /// per app, not one per batch.
    package static func writeEvents(
        _ written: inout Written, into store: some FactWriteTransaction, sequences: inout [String: Int64]
    ) throws {
        guard !written.undo, let change = written.unnumbered, let writer = change.batch.eventWriter else { return }
        written.unnumbered = nil
        let app = change.batch.appId
        let first = try sequences[app] ?? store.nextEventSequence()
        written.events = writer.events(for: change, firstSequence: first)
        sequences[app] = first + Int64(written.events.count)
        for event in written.events {
            try store.insertEvent(event)
            for endpoint in event.endpoints {
                try store.insertDelivery(
                    NewDelivery(
                        kind: .event, eventId: event.id, eventType: event.type, endpoint: endpoint, body: nil, createdAt: event.createdAt))
            }
        }
    }

    /// What the merge rules changed of one subscription, put as rows: each copy that won with
    /// its own signed text, the renewal info, new signals, the link.
    private static func putChanges(
        _ after: SubscriptionFacts, over stored: SubscriptionFacts?, from batch: FactBatch, into store: some FactWriteTransaction
    ) throws {
        for record in after.transactions where stored?.transactions.first(where: { $0.transactionId == record.transactionId }) != record {
            guard let jws = batch.transactions.last(where: { $0.record == record })?.jws else { continue }
            try store.putTransaction(record, jws: jws)
        }
        if let renewal = after.renewal, renewal != stored?.renewal, let (record, jws) = batch.renewal, record == renewal {
            try store.putRenewal(record, jws: jws)
        }
        for signal in after.signals where !(stored?.signals.contains(signal) ?? false) {
            try store.insertSignal(environment: after.environment, originalTransactionId: after.originalTransactionId, signal)
        }
        if let token = after.appAccountToken, token != stored?.appAccountToken {
            try store.putLink(environment: after.environment, originalTransactionId: after.originalTransactionId, appAccountToken: token)
        }
    }

    /// A deployment may turn the figures off (`metrics.enabled`); a batch without an event
    /// writer (a test, the rebuild) keeps them.
    private static func keepsMetrics(_ batch: FactBatch) -> Bool { batch.eventWriter?.keepsMetrics ?? true }

    /// The figures follow the facts in the same commit: the subscription's moments are computed
    /// again and what changed is added to the day sums (docs/METRICS.md, "Kept by the writer").
    private static func keepMetrics(of facts: SubscriptionFacts, into store: some FactWriteTransaction) throws {
        try keepMetrics(MetricsSubscription(facts), environment: facts.environment, subscription: facts.originalTransactionId, into: store)
    }

    /// A Play purchase's figures (a subscription's, or a one-time product's revenue), kept under its token.
    private static func keepMetrics(ofPlay purchase: PlayPurchase, into store: some FactWriteTransaction) throws {
        try keepMetrics(
            MetricsSubscription(play: purchase), environment: purchase.environment, subscription: playMetricsKey(purchase.purchaseToken),
            into: store)
    }

    /// Play tokens and Apple's original transaction ids never meet: the prefix keeps it so.
    static func playMetricsKey(_ token: String) -> String { "play:" + token }

    private static func keepMetrics(
        _ subscription: MetricsSubscription, environment: String, subscription key: String, into store: some FactWriteTransaction
    ) throws {
        let change = MetricMomentsChange(
            from: try store.metricMoments(environment: environment, subscription: key), to: subscription.moments,
            store: subscription.store)
        if !change.isEmpty { try store.applyMetricMoments(environment: environment, subscription: key, store: subscription.store, change) }
    }

    /// `entitle metrics rebuild`'s steps: forget the sums, then recompute subscriptions a page at a time.
    private static func rebuildMetrics(of batch: FactBatch, into store: some FactWriteTransaction) throws {
        if batch.clearsMetrics { try store.clearMetrics(environment: batch.environment) }
        for original in batch.metricsRecomputed {
            let facts =
                try store.facts(environment: batch.environment, originalTransactionId: original, storedToken: nil)
                ?? SubscriptionFacts(empty: original, environment: batch.environment)
            try keepMetrics(of: facts, into: store)
        }
        for token in batch.playMetricsRecomputed {
            guard let purchase = try store.playPurchase(token: token), purchase.environment == batch.environment else { continue }
            try keepMetrics(ofPlay: purchase, into: store)
        }
    }

    /// The Apple calls a batch queues (a link's Set App Account Token, a new one-time purchase's
    /// Finish Transaction), the end of one made, the sync's revision.
    private static func storeCalls(of batch: FactBatch, newPurchases: [TransactionRecord], into store: some FactWriteTransaction) throws {
        let environment = batch.environment
        if let requested = batch.requestedLink, batch.queuesTokenCall {
            let call = PendingAppleCall(
                appId: batch.appId, environment: environment, kind: .setAppAccountToken, transactionId: requested.originalTransactionId,
                appAccountToken: requested.appAccountToken)
            try store.putAppleCall(call, dueAt: batch.requestedAt)
        }
        if batch.finishesPurchases {
            for purchase in newPurchases where PendingAppleCall.isFinishedByServer(purchase) {
                let call = PendingAppleCall(
                    appId: batch.appId, environment: environment, kind: .finishTransaction, transactionId: purchase.transactionId)
                try store.putAppleCall(call, dueAt: batch.requestedAt)
            }
        }
        if let call = batch.appleCallOutcome {
            if let retryAt = call.retryAt {
                try store.rescheduleAppleCall(
                    environment: environment, kind: call.kind, transactionId: call.transactionId, retryAt: retryAt)
            } else {
                try store.removeAppleCall(environment: environment, kind: call.kind, transactionId: call.transactionId)
            }
        }
        if let sync = batch.syncRevision {
            try store.putSyncRevision(environment: environment, originalTransactionId: sync.originalTransactionId, revision: sync.revision)
        }
    }

    /// Usage evidence, a customer's override, a refund request and what became of it.
    private static func storeRefundFacts(of batch: FactBatch, into store: some FactWriteTransaction) throws {
        for record in batch.usage { try store.insertUsage(record) }
        if let (token, override) = batch.refundOverride { try store.putRefundOverride(appAccountToken: token, override) }
        if let request = batch.refundRequest { _ = try store.insertRefundRequestIfNew(request) }
        if let request = batch.refundRequestUpdate { try store.putRefundRequest(request) }
        if let outcome = batch.refundOutcome {
            try store.markRefundOutcome(
                transactionId: outcome.transactionId, purchaseToken: outcome.purchaseToken, outcome: outcome.outcome, at: outcome.at)
        }
    }

    /// The transactions the batch stores for the first time.
    private static func newTransactions(_ change: FactChange, over pending: FactChange.Pending) -> [TransactionRecord] {
        change.after.flatMap { after in
            let stored = pending.stored[after.originalTransactionId]?.transactions ?? []
            return after.transactions.filter { record in !stored.contains { $0.transactionId == record.transactionId } }
        }
    }

    /// A purchase Google waits to see acknowledged is queued with it; once stored acknowledged
    /// (or voided, or lapsed) it leaves the queue. A failed attempt waits for its retry.
    private static func queueAcknowledgements(of change: FactChange, into store: some FactWriteTransaction) throws {
        let batch = change.batch
        for after in change.playAfter {
            if after.awaitsAcknowledgement {
                try store.insertAcknowledgementIfNew(
                    PendingAcknowledgement(
                        appId: batch.appId, purchaseToken: after.purchaseToken, kind: after.kind, productId: after.productId, attempts: 0,
                        queuedAt: batch.requestedAt, nextAt: batch.requestedAt))
            } else if change.playBefore[after.purchaseToken]?.awaitsAcknowledgement ?? false {
                try store.removeAcknowledgement(purchaseToken: after.purchaseToken)
            }
        }
        if let outcome = batch.acknowledgementOutcome {
            if let retryAt = outcome.retryAt {
                try store.rescheduleAcknowledgement(purchaseToken: outcome.purchaseToken, retryAt: retryAt)
            } else {
                try store.removeAcknowledgement(purchaseToken: outcome.purchaseToken)
            }
        }
    }

    /// Everything a batch reads and then writes: its subscriptions, its grant (two revocations of
    /// one grant at once: the second sees the first and causes no event), its Play purchases.
    package static func lockKeys(_ batch: FactBatch) -> [String] {
        var keys = (batch.touchedSubscriptions + batch.metricsRecomputed).map { "\(batch.appId)\u{1F}\(batch.environment)\u{1F}\($0)" }
        if let grant = batch.grant { keys.append("\(batch.appId)\u{1F}grant\u{1F}\(grant.id)") }
        if let record = batch.retention { keys.append("\(batch.appId)\u{1F}\(batch.environment)\u{1F}\(record.originalTransactionId)") }
        for token in batch.playPurchases.map(\.purchase.purchaseToken) + batch.playMetricsRecomputed {
            keys.append("\(batch.appId)\u{1F}play\u{1F}\(token)")
        }
        return Array(Set(keys)).sorted()
    }
}
