package import Entitlements
import Instants
package import JSON

/// The body of `POST /v1/subscribers/{appAccountToken}/usage`, read and checked: one item, or
/// `{"usage": [item, …]}`; each names its purchase, its numbers and instants are in range, its
/// reason known. Pure (the id source is a parameter), so the fuzz target runs it as the server does.
package enum UsageRequest {
    /// The most records one call takes, and events one record carries (Google takes 1,000).
    static let maximumRecords = 100
    static let maximumEvents = 1000

    package static func records(
        _ body: JSONObject, token: String, at recordedAt: Int64, by key: String, newId: () -> String
    ) throws(ServiceError) -> [UsageRecord] {
        let items: [JSONObject]
        if let list = body["usage"] {
            let array = list.arrayValue ?? []
            items = array.compactMap(\.objectValue)
            guard list.arrayValue != nil, items.count == array.count else { throw .badRequest("\"usage\" must be an array of objects") }
        } else {
            items = [body]
        }
        guard !items.isEmpty, items.count <= maximumRecords else {
            throw .badRequest("send one usage item, or \"usage\" with 1 to \(maximumRecords) of them")
        }
        var records: [UsageRecord] = []
        for (index, item) in items.enumerated() {
            let path = items.count == 1 ? "" : "usage[\(index)]."
            records.append(try record(item, path: path, token: token, at: recordedAt, by: key, id: newId()))
        }
        return records
    }

    private static func record(
        _ item: JSONObject, path: String, token: String, at: Int64, by key: String, id: String
    ) throws(ServiceError) -> UsageRecord {
        let transactionId = item["transactionId"]?.stringValue
        let purchaseToken = item["purchaseToken"]?.stringValue
        guard (transactionId != nil) != (purchaseToken != nil) else {
            throw .badRequest("\(path)transactionId or \(path)purchaseToken: name the purchase, one of them")
        }
        var consumed: Double?
        if let value = item["consumedPercent"] {
            guard let number = value.number(in: 0...100) else { throw .badRequest("\(path)consumedPercent must be a number from 0 to 100") }
            consumed = number
        }
        var delivered: Bool?
        if let value = item["delivered"] {
            guard let flag = value.boolValue else { throw .badRequest("\(path)delivered must be true or false") }
            delivered = flag
        }
        let reason = item["reason"]?.stringValue
        if let reason, !UsageRecord.undeliveredReasons.contains(reason) {
            throw .badRequest("\(path)reason must be QUALITY_ISSUE, WRONG_ITEM, SERVER_OUTAGE or OTHER")
        }
        if reason != nil && delivered != false { throw .badRequest("\(path)reason is for \"delivered\": false") }
        let events = item["events"]?.arrayValue ?? []
        guard events.count <= maximumEvents else { throw .badRequest("\(path)events: at most \(maximumEvents)") }
        var parsed: [UsageRecord.Event] = []
        for (index, event) in events.enumerated() {
            // Instants go through the one checked conversion: an `at` of Int64.min once stopped the process.
            guard let text = event["description"]?.stringValue, !text.isEmpty, text.count <= 5000,
                let instant = event["at"].flatMap(Milliseconds.instant)
            else {
                throw .badRequest(
                    "\(path)events[\(index)] needs \"at\" (ISO 8601 or epoch milliseconds, years 0 to 9999) and a \"description\" of 1 to 5000 characters"
                )
            }
            parsed.append(UsageRecord.Event(at: instant, description: text))
        }
        return UsageRecord(
            id: id, appAccountToken: token, transactionId: transactionId, purchaseToken: purchaseToken, consumedPercent: consumed,
            delivered: delivered, undeliveredReason: reason, events: parsed, recordedAt: at, recordedBy: key)
    }
}
