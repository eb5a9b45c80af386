/// Reads a store's facts inside the transaction that writes a batch (the store's own connection),
/// so what a batch changed is seen by the same transaction that commits it.
package protocol FactReading {
    /// What is stored of one subscription, even renewal info or signals without a transaction
    /// (nil: nothing). `storedToken`: the subscription's link when the caller has read it
    /// already (`.some(nil)`: it has none), so it is not read again; nil: read it.
    func facts(environment: String, originalTransactionId: String, storedToken: String??) throws -> SubscriptionFacts?
    /// The subscriptions linked to the token that have a transaction (what a subscriber shows).
    func facts(environment: String, appAccountToken: String) throws -> [SubscriptionFacts]
    func token(environment: String, originalTransactionId: String) throws -> String?
    func linkTransfers(environment: String, appAccountToken: String) throws -> [LinkTransfer]
    func grants(environment: String, appAccountToken: String) throws -> [PromotionalGrant]
    func grant(id: String) throws -> PromotionalGrant?
    func playPurchases(appAccountToken: String) throws -> [PlayPurchase]
    func playPurchase(token: String) throws -> PlayPurchase?
    /// The customer's app downloads, one per environment at most (`AppDownload`).
    func appDownloads(appAccountToken: String) throws -> [AppDownload]
    /// The experiments the customer is enrolled in, in enrollment order.
    func experimentAssignments(appAccountToken: String) throws -> [ExperimentAssignment]
    /// A subscription's retention answers, oldest first.
    func retentionRecords(environment: String, originalTransactionId: String) throws -> [RetentionRecord]
    /// Everything a subscriber view of `appAccountToken` shows in `environments`.
    func subscriber(environments: [String], appAccountToken: String) throws -> SubscriberFacts
}

extension FactReading {
    /// The subscriber, read part by part (readers whose reads are local and cheap).
    package func subscriber(environments: [String], appAccountToken: String) throws -> SubscriberFacts {
        try SubscriberFacts.assembled(
            appAccountToken, environments: environments, facts: { try facts(environment: $0, appAccountToken: appAccountToken) },
            transfers: { try linkTransfers(environment: $0, appAccountToken: appAccountToken) },
            grants: { try grants(environment: $0, appAccountToken: appAccountToken) },
            playPurchases: { try playPurchases(appAccountToken: appAccountToken) },
            downloads: { try appDownloads(appAccountToken: appAccountToken) },
            assignments: { try experimentAssignments(appAccountToken: appAccountToken) })
    }
}

/// A customer's facts across the environments a subscriber view spans.
package struct SubscriberFacts: Sendable {
    package var appAccountToken: String?
    package var environments: [(environment: String, facts: [SubscriptionFacts])]
    package var transfers: [(environment: String, transfer: LinkTransfer)]
    /// Promotional grants of every environment the view spans.
    package var grants: [PromotionalGrant]
    /// Google Play purchases of the customer.
    package var playPurchases: [PlayPurchase]
    /// The customer's app downloads (every environment; the view shows those it spans).
    package var downloads: [AppDownload]
    /// The experiments the customer is enrolled in (the view and every event of theirs show them).
    package var assignments: [ExperimentAssignment]

    package init(
        appAccountToken: String?, environments: [(environment: String, facts: [SubscriptionFacts])],
        transfers: [(environment: String, transfer: LinkTransfer)] = [], grants: [PromotionalGrant] = [],
        playPurchases: [PlayPurchase] = [], downloads: [AppDownload] = [], assignments: [ExperimentAssignment] = []
    ) {
        self.appAccountToken = appAccountToken
        self.environments = environments
        self.transfers = transfers
        self.grants = grants
        self.playPurchases = playPurchases
        self.downloads = downloads
        self.assignments = assignments
    }
}

extension SubscriberFacts {
    /// A subscriber read one part at a time: per environment its subscriptions, moves and grants,
    /// then its Play purchases.
    package static func assembled(
        _ token: String, environments: [String], facts: (String) throws -> [SubscriptionFacts],
        transfers: (String) throws -> [LinkTransfer], grants: (String) throws -> [PromotionalGrant],
        playPurchases: () throws -> [PlayPurchase], downloads: () throws -> [AppDownload],
        assignments: () throws -> [ExperimentAssignment]
    ) rethrows -> SubscriberFacts {
        var spans: [(String, [SubscriptionFacts])] = []
        var moves: [(String, LinkTransfer)] = []
        var given: [PromotionalGrant] = []
        for environment in environments {
            spans.append((environment, try facts(environment)))
            moves += try transfers(environment).map { (environment, $0) }
            given += try grants(environment)
        }
        return SubscriberFacts(
            appAccountToken: token, environments: spans, transfers: moves, grants: given, playPurchases: try playPurchases(),
            downloads: try downloads(), assignments: try assignments())
    }
}

/// What one stored batch changed: every subscription it touched as stored before and after it,
/// and the whole subscriber of each after it (for the `subscriber` of its events).
///
/// Built from one read made before the write (`read`) and the batch merged in memory by the merge
/// rules (`applying`): what `FactWriter` stores and the events it derives both come from it, so
/// neither costs a second read of the stored facts.
package struct FactChange: Sendable {
    package var batch: FactBatch
    /// Touched subscriptions as stored before the batch (absent: new).
    package var before: [String: SubscriptionFacts]
    /// Touched subscriptions after the batch, in the order the batch names them.
    package var after: [SubscriptionFacts]
    /// The subscriber each touched subscription belongs to after the batch, by original transaction id.
    package var subscribers: [String: SubscriberFacts]
    /// For a batch carrying a promotional grant: that grant as stored before (nil: new), and its
    /// customer after the batch.
    package var grantBefore: PromotionalGrant?
    package var grantAfter: PromotionalGrant?
    package var grantSubscriber: SubscriberFacts?
    /// For a batch carrying Google Play purchases: each as stored before (absent: new) and after,
    /// and its customer after the batch, by purchase token.
    package var playBefore: [String: PlayPurchase] = [:]
    package var playAfter: [PlayPurchase] = []
    package var playSubscribers: [String: SubscriberFacts] = [:]
    /// Retention answers of the touched subscriptions not yet attributed, and how long after an
    /// answer a save counts (nil: the app answers no retention requests).
    package var openRetention: [String: [RetentionRecord]] = [:]
    package var retentionWindow: Int64?
    /// The retention answers this change saved: found once, recorded by the writer and told by the
    /// event rules.
    package var retentionSaves: [RetentionAttribution.Save] = []
    /// For a batch naming a customer without a subscription of theirs (rescinded consent, a
    /// refund review answered): that customer, after the batch.
    package var customerSubscriber: SubscriberFacts?
    /// The customer's enrollment the batch stored (nil: none, or they were enrolled already).
    package var newEnrollment: ExperimentAssignment?

    /// The stored state a batch is about to change, read through the writing transaction.
    package struct Pending: Sendable {
        /// Every touched subscription as stored, link included, even one with renewal info or
        /// signals but no transaction yet (absent: nothing stored). The merge rules apply the batch
        /// to these.
        var stored: [String: SubscriptionFacts] = [:]
        /// Per touched subscription, the token whose subscriber it will show in.
        var tokens: [String: String] = [:]
        var subscribers: [String: SubscriberFacts] = [:]
        var grantBefore: PromotionalGrant?
        var playBefore: [String: PlayPurchase] = [:]
        var openRetention: [String: [RetentionRecord]] = [:]
        var retentionWindow: Int64?
    }

    /// Reads what the batch changes. `environments` are those a subscriber view spans (the app's
    /// enabled ones), for the subscribers its events show; nil reads only the touched facts.
    package static func read(
        _ batch: FactBatch, environments: [String]?, retentionWindow: Int64? = nil, from reader: any FactReading
    ) throws -> Pending {
        var pending = Pending()
        if let retentionWindow, !batch.transactions.isEmpty || batch.renewal != nil {
            pending.retentionWindow = retentionWindow
            for original in batch.touchedSubscriptions {
                // Only answers that have not saved the subscription (yet) can be saved by this change.
                let open = try reader.retentionRecords(environment: batch.environment, originalTransactionId: original)
                    .filter { $0.savedAt == nil }
                if !open.isEmpty { pending.openRetention[original] = open }
            }
        }
        let environment = batch.environment
        let spanned = environments.map { $0.contains(environment) ? $0 : $0 + [environment] }
        var storedTokens: [String: String?] = [:]
        if let spanned {
            for original in batch.touchedSubscriptions {
                guard let token = try token(of: original, in: batch, reader: reader, stored: &storedTokens) else { continue }
                pending.tokens[original] = token
                guard pending.subscribers[token] == nil else { continue }
                let subscriber = try reader.subscriber(environments: spanned, appAccountToken: token)
                for facts in subscriber.environments.first(where: { $0.environment == environment })?.facts ?? [] {
                    pending.stored[facts.originalTransactionId] = facts
                }
                pending.subscribers[token] = subscriber
            }
        }
        for (purchase, _) in batch.playPurchases {
            let stored = try reader.playPurchase(token: purchase.purchaseToken)
            if let stored { pending.playBefore[purchase.purchaseToken] = stored }
            if let spanned, let token = purchase.appAccountToken ?? stored?.appAccountToken, pending.subscribers[token] == nil {
                pending.subscribers[token] = try reader.subscriber(environments: spanned, appAccountToken: token)
            }
        }
        if let spanned, let token = batch.namedCustomer, pending.subscribers[token] == nil {
            pending.subscribers[token] = try reader.subscriber(environments: spanned, appAccountToken: token)
        }
        if let grant = batch.grant {
            pending.grantBefore = try reader.grant(id: grant.id)
            if let spanned, pending.subscribers[grant.appAccountToken] == nil {
                pending.subscribers[grant.appAccountToken] = try reader.subscriber(
                    environments: spanned, appAccountToken: grant.appAccountToken)
            }
        }
        for original in batch.touchedSubscriptions where pending.stored[original] == nil {
            if let facts = try reader.facts(environment: environment, originalTransactionId: original, storedToken: storedTokens[original])
            {
                pending.stored[original] = facts
            }
        }
        return pending
    }

    /// The token a touched subscription will be shown under: the one it moves to, else the one
    /// it is linked to, else the one the batch links it to.
    private static func token(
        of original: String, in batch: FactBatch, reader: any FactReading, stored: inout [String: String?]
    ) throws -> String? {
        let requested = batch.requestedLink?.originalTransactionId == original ? batch.requestedLink?.appAccountToken : nil
        if batch.transfersLink, let requested { return requested }
        let link = try reader.token(environment: batch.environment, originalTransactionId: original)
        stored[original] = .some(link)
        if let link { return link }
        return batch.transactions.last { $0.record.originalTransactionId == original && $0.record.appAccountToken != nil }?
            .record.appAccountToken ?? requested
    }

    /// The change once the batch is applied to what `read` found.
    package static func applying(_ batch: FactBatch, to pending: Pending) -> FactChange {
        var after: [SubscriptionFacts] = []
        var subscribers: [String: SubscriberFacts] = [:]
        var merged: [String: SubscriptionFacts] = [:]
        for original in batch.touchedSubscriptions {
            let facts = (pending.stored[original] ?? SubscriptionFacts(empty: original, environment: batch.environment)).applying(batch)
            merged[original] = facts
            after.append(facts)
        }
        for facts in after {
            guard let token = pending.tokens[facts.originalTransactionId], var subscriber = pending.subscribers[token],
                facts.appAccountToken == token
            else {
                subscribers[facts.originalTransactionId] = SubscriberFacts(
                    appAccountToken: facts.appAccountToken, environments: [(batch.environment, [facts])])
                continue
            }
            subscriber.environments = subscriber.environments.map { span in
                guard span.environment == batch.environment else { return span }
                var list = span.facts.filter { merged[$0.originalTransactionId] == nil }
                list += after.filter { pending.tokens[$0.originalTransactionId] == token && $0.appAccountToken == token }
                return (span.environment, list.sorted { $0.originalTransactionId < $1.originalTransactionId })
            }
            subscribers[facts.originalTransactionId] = subscriber
        }
        // Events compare with subscriptions as their views showed them: one without a
        // transaction was not one yet.
        var change = FactChange(
            batch: batch, before: pending.stored.filter { !$0.value.transactions.isEmpty }, after: after, subscribers: subscribers)
        if let grant = batch.grant {
            change.grantBefore = pending.grantBefore
            change.grantAfter = pending.grantBefore.map { grant.replacing($0) } ?? grant
            if var subscriber = pending.subscribers[grant.appAccountToken] {
                subscriber.grants.removeAll { $0.id == grant.id }
                subscriber.grants.append(change.grantAfter!)
                change.grantSubscriber = subscriber
            }
        }
        if let token = batch.namedCustomer { change.customerSubscriber = pending.subscribers[token] }
        change.openRetention = pending.openRetention
        change.retentionWindow = pending.retentionWindow
        change.retentionSaves = RetentionAttribution.saves(change)
        for (purchase, _) in batch.playPurchases {
            let before = pending.playBefore[purchase.purchaseToken]
            let after = purchase.replacing(before)
            change.playBefore[purchase.purchaseToken] = before
            change.playAfter.append(after)
            guard let token = after.appAccountToken, var subscriber = pending.subscribers[token] else { continue }
            subscriber.playPurchases.removeAll { $0.purchaseToken == after.purchaseToken }
            subscriber.playPurchases.append(after)
            change.playSubscribers[after.purchaseToken] = subscriber
        }
        return change
    }
}

extension FactBatch {
    /// Every subscription the batch writes facts for, once each, in the order it names them.
    /// The customer a batch is about when it touches none of their subscriptions.
    var namedCustomer: String? {
        consentRescinded?.appAccountToken ?? refundRequestUpdate?.appAccountToken ?? refundRequest?.appAccountToken
            ?? retention?.appAccountToken ?? enrollment?.appAccountToken
    }

    package var touchedSubscriptions: [String] {
        var seen = Set<String>()
        var ordered: [String] = []
        func add(_ original: String) { if seen.insert(original).inserted { ordered.append(original) } }
        for (record, _) in transactions { add(record.originalTransactionId) }
        if let renewal { add(renewal.record.originalTransactionId) }
        for (original, _) in signals { add(original) }
        if let link = requestedLink { add(link.originalTransactionId) }
        return ordered
    }
}

extension SubscriptionFacts {
    init(empty original: String, environment: String) {
        self.init(
            originalTransactionId: original, environment: environment, appAccountToken: nil, transactions: [], renewal: nil,
            signals: [])
    }

    /// These facts with a batch applied: the merge rules of every store (`FactWriter` writes what
    /// they change). A copy replaces a stored one only with a newer `signedDate`; a stored copy's
    /// signed token links the subscription; a requested link fills an empty one, or moves it when
    /// the batch transfers; a signal already stored is not added again.
    func applying(_ batch: FactBatch) -> SubscriptionFacts {
        var facts = self
        for (record, _) in batch.transactions where record.originalTransactionId == originalTransactionId {
            if let index = facts.transactions.firstIndex(where: { $0.transactionId == record.transactionId }) {
                guard record.newer(than: facts.transactions[index]) else { continue }
                facts.transactions[index] = record
            } else {
                facts.transactions.append(record)
            }
            if let token = record.appAccountToken { facts.appAccountToken = token }
        }
        facts.transactions.sort { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        if let (record, _) = batch.renewal, record.originalTransactionId == originalTransactionId,
            facts.renewal.map({ record.signedDate > $0.signedDate }) ?? true
        {
            facts.renewal = record
        }
        // A signal stored once is not stored again (a sync repeating a notification).
        for (original, signal) in batch.signals where original == originalTransactionId && !facts.signals.contains(signal) {
            facts.signals.append(signal)
        }
        facts.signals.sort { $0.at < $1.at }
        if let link = batch.requestedLink, link.originalTransactionId == originalTransactionId,
            facts.appAccountToken == nil || batch.transfersLink
        {
            facts.appAccountToken = link.appAccountToken
        }
        return facts
    }
}
