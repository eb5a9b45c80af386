import Crypto
package import Entitlements
import Foundation
package import Instants
package import JSON

/// The App Store Server API the test store serves for Entitle's own client (docs/TEST_STORE.md):
/// what Apple would answer from what the store sold and sent, signed now with the store's chain.
/// These never wait for a request in progress (`exclusively`): Entitle may call them while it
/// handles a notification the store is delivering.
extension TestStoreService {
    private typealias Refusal = TestStoreAppleAPI.Refusal

    /// A page of Get Transaction History v2 and of Get Notification History.
    static let pageSize = 20

    // MARK: - Transactions

    /// A transaction the store signed, as it stands: a subscription's (any of its periods') or a
    /// one-time purchase's.
    private enum Found {
        case subscription(SimulatedAppleSubscription)
        case purchase(SimulatedApplePurchase)

        var transactionId: String {
            switch self {
            case .subscription(let subscription): subscription.transactionId
            case .purchase(let purchase): purchase.transactionId
            }
        }

        var isRevoked: Bool {
            switch self {
            case .subscription(let subscription): subscription.revocationDate != nil
            case .purchase(let purchase): purchase.revocationDate != nil
            }
        }

        var appAccountToken: String? {
            switch self {
            case .subscription(let subscription): subscription.appAccountToken
            case .purchase(let purchase): purchase.appAccountToken
            }
        }
    }

    private func find(_ transactionId: String, app: AppConfiguration) -> Found? {
        if let purchase = oneTimePurchases[transactionId], purchase.app == app.id { return .purchase(purchase.purchase) }
        if let original = originalOfTransaction[transactionId], subscriptions[original]?.app == app.id,
            let logged = transactionLog[original]?.last(where: { $0.subscription.transactionId == transactionId })
        {
            return .subscription(logged.subscription)
        }
        return nil
    }

    private func signed(_ found: Found, now: Int64) throws -> String {
        switch found {
        case .subscription(let subscription): try chain.sign(AppleStoreSimulation.transaction(subscription, signedAt: now))
        case .purchase(let purchase): try chain.sign(AppleStoreSimulation.transaction(purchase, signedAt: now))
        }
    }

    /// Get Transaction Info: `{"signedTransactionInfo"}`.
    package func transactionInfo(_ transactionId: String, app: AppConfiguration) throws -> JSONObject {
        guard let found = find(transactionId, app: app) else { throw Refusal.transactionNotFound() }
        return ["signedTransactionInfo": .string(try signed(found, now: clock.milliseconds))]
    }

    /// Get Transaction History v2: every transaction of the customer in the app (of the one
    /// subscription or purchase, for a customer without an appAccountToken), in the order they
    /// last changed, after `revision`, 20 a page.
    package func transactionHistory(_ transactionId: String, revision: String?, app: AppConfiguration) throws -> JSONObject {
        try historyPage(transactionId, revision: revision, app: app) { _ in true }
    }

    /// Get Refund History v2: the same, of the refunded (revoked) transactions only.
    package func refundHistory(_ transactionId: String, revision: String?, app: AppConfiguration) throws -> JSONObject {
        try historyPage(transactionId, revision: revision, app: app) { $0.isRevoked }
    }

    /// Look Up Order ID: the transactions of the order (`orderId` in a purchase's answer, as on
    /// Apple's receipt e-mail); `status` 0 when it is valid, 1 when there is no such order.
    package func orderLookup(_ orderId: String, app: AppConfiguration) throws -> JSONObject {
        guard let transactionId = Self.transactionId(ofOrder: orderId), let found = find(transactionId, app: app),
            found.transactionId == transactionId
        else { return ["status": 1] }
        return ["status": 0, "signedTransactions": .array([.string(try signed(found, now: clock.milliseconds))])]
    }

    /// The order ID of a transaction (Apple's are ten characters, `MK5TTTVWJH`): its id in base 36.
    package static func orderId(of transactionId: String) -> String {
        guard let number = UInt64(transactionId) else { return transactionId }
        return "M" + String(number, radix: 36).uppercased()
    }

    private static func transactionId(ofOrder orderId: String) -> String? {
        guard orderId.first == "M", let number = UInt64(orderId.dropFirst(), radix: 36) else { return nil }
        return String(number)
    }

    /// A page of the customer's transactions that `include` takes, after `revision`.
    private func historyPage(
        _ transactionId: String, revision: String?, app: AppConfiguration, include: (Found) -> Bool
    ) throws -> JSONObject {
        guard let found = find(transactionId, app: app) else { throw Refusal.transactionNotFound() }
        var since = 0
        if let revision {
            guard let number = Int(revision), number >= 0 else { throw Refusal.badRequest(4_000_005, "Invalid request revision.") }
            since = number
        }
        let now = clock.milliseconds
        let page = customerTransactions(of: found, app: app).filter { $0.revision > since && include($0.found) }
            .sorted { $0.revision < $1.revision }
        let shown = page.prefix(Self.pageSize)
        var answer = apiHeader(app)
        answer["signedTransactions"] = .array(try shown.map { .string(try signed($0.found, now: now)) })
        answer["revision"] = .string(String(shown.last?.revision ?? since))
        answer["hasMore"] = .bool(page.count > shown.count)
        return answer
    }

    /// Every transaction of the customer `found` belongs to (its appAccountToken's; without one,
    /// its own subscription's or purchase's), with when each last changed.
    private func customerTransactions(of found: Found, app: AppConfiguration) -> [(revision: Int, found: Found)] {
        let token = found.appAccountToken
        var entries: [(revision: Int, found: Found)] = []
        for (original, entry) in subscriptions where entry.app == app.id {
            let mine: Bool
            if let token {
                mine = entry.subscription.appAccountToken == token
            } else if case .subscription(let subscription) = found {
                mine = original == subscription.originalTransactionId
            } else {
                mine = false
            }
            guard mine else { continue }
            for logged in transactionLog[original] ?? [] { entries.append((logged.revision, .subscription(logged.subscription))) }
        }
        for (id, entry) in oneTimePurchases where entry.app == app.id {
            let mine: Bool
            if let token {
                mine = entry.purchase.appAccountToken == token
            } else if case .purchase(let purchase) = found {
                mine = purchase.transactionId == id
            } else {
                mine = false
            }
            if mine { entries.append((purchaseRevisions[id] ?? 0, .purchase(entry.purchase))) }
        }
        return entries
    }

    /// Get All Subscription Statuses: the customer's subscriptions by group, each with its
    /// status, last transaction and renewal info; `status` narrows to those statuses.
    package func subscriptionStatuses(_ transactionId: String, status: [Int64], app: AppConfiguration) throws -> JSONObject {
        guard let found = find(transactionId, app: app) else { throw Refusal.transactionNotFound() }
        guard case .subscription(let subscription) = found else {
            throw Refusal.badRequest(4_000_047, "Invalid request. The transaction is not an auto-renewable subscription's.")
        }
        let now = clock.milliseconds
        let mine = subscriptions.values.filter { entry in
            entry.app == app.id
                && (subscription.appAccountToken.map { entry.subscription.appAccountToken == $0 }
                    ?? (entry.subscription.originalTransactionId == subscription.originalTransactionId))
        }
        .map(\.subscription)
        .filter { status.isEmpty || status.contains($0.status.rawValue) }
        .sorted { $0.originalTransactionId < $1.originalTransactionId }
        var groups: [String: [JSONValue]] = [:]
        for each in mine {
            groups[each.subscriptionGroup, default: []].append(
                .object([
                    "status": .int(each.status.rawValue), "originalTransactionId": .string(each.originalTransactionId),
                    "signedTransactionInfo": .string(try chain.sign(AppleStoreSimulation.transaction(each, signedAt: now))),
                    "signedRenewalInfo": .string(try chain.sign(AppleStoreSimulation.renewalInfo(each, signedAt: now))),
                ]))
        }
        var answer = apiHeader(app)
        answer["data"] = .array(
            groups.keys.sorted().map {
                .object(["subscriptionGroupIdentifier": .string($0), "lastTransactions": .array(groups[$0] ?? [])])
            })
        return answer
    }

    /// Set App Account Token: the subscription's (or one-time purchase's) transactions from now
    /// on carry `appAccountToken`.
    package func setAppAccountToken(_ originalTransactionId: String, body: JSONObject, app: AppConfiguration) throws {
        guard let token = body["appAccountToken"]?.stringValue, let uuid = UUID(uuidString: token) else {
            throw Refusal.badRequest(4_000_183, "Invalid request. The app account token field must be a valid UUID.")
        }
        if var subscription = subscriptions[originalTransactionId]?.subscription, subscriptions[originalTransactionId]?.app == app.id {
            subscription.appAccountToken = uuid.lowercasedString
            relink(subscription, app: app.id)
            return
        }
        if var purchase = oneTimePurchases[originalTransactionId]?.purchase, oneTimePurchases[originalTransactionId]?.app == app.id {
            purchase.appAccountToken = uuid.lowercasedString
            relink(purchase, app: app.id)
            return
        }
        guard find(originalTransactionId, app: app) == nil else {
            throw Refusal.badRequest(4_000_187, "Invalid request. The transaction id is not an original transaction id.")
        }
        throw Refusal(404, 4_040_005, "Original transaction id not found.")
    }

    /// Send Consumption Information v2: the body checked as Apple checks it; 202 (Entitle's
    /// refund request is then `SENT`, or `FAILED` with Apple's error).
    package func sendConsumption(_ transactionId: String, body: JSONObject, app: AppConfiguration) throws {
        guard let found = find(transactionId, app: app) else { throw Refusal.transactionNotFound() }
        if case .subscription = found {
            try TestStoreAppleAPI.checkConsumption(body, autoRenewable: true)
        } else {
            try TestStoreAppleAPI.checkConsumption(body, autoRenewable: false)
        }
    }

    // MARK: - Notifications

    /// Get Notification History: the app's notifications signed from `startDate` to `endDate`
    /// (at most 180 days back), narrowed by `notificationType` (and `notificationSubtype`) or
    /// `transactionId`, and `onlyFailures`; 20 a page, `paginationToken` for the next.
    package func notificationHistory(_ body: JSONObject, paginationToken: String?, app: AppConfiguration) throws -> JSONObject {
        guard let start = body["startDate"]?.integer(in: Milliseconds.range) else {
            throw Refusal.badRequest(4_000_015, "Invalid request. The start date is not a timestamp value represented in milliseconds.")
        }
        guard let end = body["endDate"]?.integer(in: Milliseconds.range) else {
            throw Refusal.badRequest(4_000_016, "Invalid request. The end date is not a timestamp value represented in milliseconds.")
        }
        guard start <= end else { throw Refusal.badRequest(4_000_013, "Invalid request. The start date is later than the end date.") }
        guard start >= clock.milliseconds - 180 * 86_400_000 else {
            throw Refusal.badRequest(4_000_012, "Invalid request. The start date is earlier than the allowed start date.")
        }
        let type = body["notificationType"]?.stringValue
        let subtype = body["notificationSubtype"]?.stringValue
        let transactionId = body["transactionId"]?.stringValue
        guard type == nil || transactionId == nil else {
            throw Refusal.badRequest(4_000_019, "Invalid request. Only one filter is allowed: a notification type or a transaction id.")
        }
        let onlyFailures = body["onlyFailures"]?.boolValue ?? false
        let matching = notificationLog.filter { sent in
            sent.app == app.id && sent.signedDate >= start && sent.signedDate < end
                && (type.map { $0 == sent.notificationType } ?? true) && (subtype.map { $0 == sent.subtype } ?? true)
                && (transactionId.map { sent.transactionIds.contains($0) } ?? true) && (!onlyFailures || sent.attemptResult != "SUCCESS")
        }
        var offset = 0
        if let paginationToken {
            guard let number = Int(paginationToken), (0...matching.count).contains(number) else {
                throw Refusal.badRequest(4_000_014, "Invalid request. The pagination token is invalid.")
            }
            offset = number
        }
        let page = matching.dropFirst(offset).prefix(Self.pageSize)
        var answer: JSONObject = [
            "notificationHistory": .array(
                page.map { sent in
                    .object([
                        "signedPayload": .string(sent.signedPayload),
                        "sendAttempts": .array([
                            .object(["attemptDate": .int(sent.signedDate), "sendAttemptResult": .string(sent.attemptResult)])
                        ]),
                    ])
                }),
            "hasMore": .bool(offset + page.count < matching.count),
        ]
        if offset + page.count < matching.count { answer["paginationToken"] = .string(String(offset + page.count)) }
        return answer
    }

    private func apiHeader(_ app: AppConfiguration) -> JSONObject {
        var header: JSONObject = ["bundleId": .string(app.bundleId), "environment": "Sandbox"]
        if let appAppleId = app.appAppleId { header["appAppleId"] = .int(appAppleId) }
        return header
    }
}
