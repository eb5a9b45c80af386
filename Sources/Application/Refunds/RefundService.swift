import AppStore
import Entitlements
package import Foundation
import Instants
package import JSON

/// Refund reviews' support side: the app's usage evidence (`POST …/usage`), support's per-customer
/// override (`PUT`/`DELETE …/refund-override`), and the requests with what was answered.
package struct RefundService: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let eventWriter: AppEventWriter

    /// The most records one call takes, and events one record carries (Google takes 1,000).
    static let maximumRecords = 100
    static let maximumEvents = 1000

    /// Records `items` (each one purchase's evidence) for the customer; answers them as stored.
    package func recordUsage(
        appAccountToken: String, items: [JSONObject], by caller: Caller, now: Date,
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        do {
            let token = try AppAccountToken.validated(appAccountToken)
            guard !items.isEmpty, items.count <= Self.maximumRecords else {
                throw ServiceError.badRequest("send one usage item, or \"usage\" with 1 to \(Self.maximumRecords) of them")
            }
            let recordedAt = Milliseconds.since1970(now)
            let records = try items.enumerated().map { index, item in
                try Self.record(item, path: items.count == 1 ? "" : "usage[\(index)].", token: token, at: recordedAt, by: caller.keyName)
            }
            var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
            batch.usage = records
            batch.source = "usage"
            batch.requestedAt = recordedAt
            store.record(batch, outbox: nil) { result in
                completion(result.map { _ in ["usage": .array(records.map { .object($0.json) })] })
            }
        } catch {
            completion(.failure(error))
        }
    }

    /// One item, checked: it names its purchase, its numbers are in range, its reason known.
    static func record(_ item: JSONObject, path: String, token: String, at: Int64, by key: String) throws -> UsageRecord {
        let transactionId = item["transactionId"]?.stringValue
        let purchaseToken = item["purchaseToken"]?.stringValue
        guard (transactionId != nil) != (purchaseToken != nil) else {
            throw ServiceError.badRequest("\(path)transactionId or \(path)purchaseToken: name the purchase, one of them")
        }
        var consumed: Double?
        if let value = item["consumedPercent"] {
            guard let number = value.number(in: 0...100) else {
                throw ServiceError.badRequest("\(path)consumedPercent must be a number from 0 to 100")
            }
            consumed = number
        }
        var delivered: Bool?
        if let value = item["delivered"] {
            guard let flag = value.boolValue else { throw ServiceError.badRequest("\(path)delivered must be true or false") }
            delivered = flag
        }
        let reason = item["reason"]?.stringValue
        if let reason, !UsageRecord.undeliveredReasons.contains(reason) {
            throw ServiceError.badRequest("\(path)reason must be QUALITY_ISSUE, WRONG_ITEM, SERVER_OUTAGE or OTHER")
        }
        if reason != nil && delivered != false { throw ServiceError.badRequest("\(path)reason is for \"delivered\": false") }
        let events = item["events"]?.arrayValue ?? []
        guard events.count <= maximumEvents else { throw ServiceError.badRequest("\(path)events: at most \(maximumEvents)") }
        let parsed = try events.enumerated().map { index, event throws(ServiceError) -> UsageRecord.Event in
            guard let text = event["description"]?.stringValue, !text.isEmpty, text.count <= 5000,
                let instant = event["at"].flatMap(Milliseconds.instant)
            else {
                throw ServiceError.badRequest(
                    "\(path)events[\(index)] needs \"at\" (ISO 8601 or epoch milliseconds) and a \"description\" of 1 to 5000 characters")
            }
            return UsageRecord.Event(at: instant, description: text)
        }
        return UsageRecord(
            id: UUID().uuidString.lowercased(), appAccountToken: token, transactionId: transactionId, purchaseToken: purchaseToken,
            consumedPercent: consumed, delivered: delivered, undeliveredReason: reason, events: parsed, recordedAt: at, recordedBy: key)
    }

    /// Sets (or with nil `override`, removes) the customer's override; answers it.
    package func setOverride(
        appAccountToken: String, override: String?, reason: String?, by caller: Caller, now: Date,
        completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void
    ) {
        do {
            let token = try AppAccountToken.validated(appAccountToken)
            if let override, !RefundOverride.choices.contains(override) {
                throw ServiceError.badRequest("override must be ALWAYS_GRANT, ALWAYS_DECLINE or NO_PREFERENCE")
            }
            if let reason, reason.count > 500 { throw ServiceError.badRequest("reason must be at most 500 characters") }
            let setAt = Milliseconds.since1970(now)
            let stored = override.map {
                RefundOverride(
                    appAccountToken: token, override: $0, reason: reason?.isEmpty == true ? nil : reason, setBy: caller.keyName,
                    setAt: setAt)
            }
            var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
            batch.refundOverride = (token, stored)
            batch.source = "support"
            batch.requestedAt = setAt
            store.record(batch, outbox: nil) { result in
                completion(result.map { _ in stored.map { ["refundOverride": .object($0.json)] } ?? ["refundOverride": .null] })
            }
        } catch {
            completion(.failure(error))
        }
    }

    package func override(appAccountToken: String, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        pool.run(
            {
                let token = try AppAccountToken.validated(appAccountToken)
                let stored = try store.refundOverride(appId: app.id, appAccountToken: token)
                return ["refundOverride": stored.map { .object($0.json) } ?? .null]
            }, completion: completion)
    }

    /// `GET /v1/refund-requests`: newest first, each with what was answered, by what, and the
    /// store's decision.
    package func requests(limit: Int, now: Date, completion: @escaping @Sendable (Result<JSONObject, any Error>) -> Void) {
        pool.run(
            {
                let nowMs = Milliseconds.since1970(now)
                let items: [JSONValue] = try store.refundRequests(appId: app.id, limit: limit).map { request in
                    var item = request.json
                    if request.status == .pending { item["secondsLeft"] = .int(max(0, (request.deadline - nowMs) / 1000)) }
                    return .object(item)
                }
                return ["refundRequests": .array(items)]
            }, completion: completion)
    }
}
