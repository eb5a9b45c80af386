import Foundation
package import JSON

/// The Retention Messaging API the test store serves for Entitle's own client
/// (docs/TEST_STORE.md): each app's images, messages, default messages and realtime URL, and
/// Apple's performance test of the realtime route.
extension TestStoreService {
    /// One call of the Retention Messaging API, decoded by the HTTP adapter.
    package enum MessagingCall: Sendable {
        case uploadImage(id: String, size: String?, png: [UInt8])
        case imageList
        case deleteImage(id: String)
        case uploadMessage(id: String, body: JSONObject)
        case messageList
        case deleteMessage(id: String)
        case setDefault(productId: String, locale: String, body: JSONObject)
        case getDefault(productId: String, locale: String)
        case deleteDefault(productId: String, locale: String)
        case setRealtimeURL(body: JSONObject)
        case getRealtimeURL
        case deleteRealtimeURL
    }

    /// Carries out the call on the app's catalog; answers its JSON (nil: an empty 200).
    package func messaging(_ call: MessagingCall, app: AppConfiguration) throws -> JSONObject? {
        var catalog = messagingCatalogs[app.id] ?? AppleMessagingCatalog()
        defer { messagingCatalogs[app.id] = catalog }
        switch call {
        case .uploadImage(let id, let size, let png): try catalog.uploadImage(id, size: size, png: png)
        case .imageList: return catalog.imageList
        case .deleteImage(let id): try catalog.deleteImage(id)
        case .uploadMessage(let id, let body): try catalog.uploadMessage(id, body: body)
        case .messageList: return catalog.messageList
        case .deleteMessage(let id): try catalog.deleteMessage(id)
        case .setDefault(let productId, let locale, let body): try catalog.setDefault(productId: productId, locale: locale, body: body)
        case .getDefault(let productId, let locale): return try catalog.defaultMessage(productId: productId, locale: locale)
        case .deleteDefault(let productId, let locale): try catalog.deleteDefault(productId: productId, locale: locale)
        case .setRealtimeURL(let body): try catalog.setRealtimeURL(body)
        case .getRealtimeURL: return try catalog.realtimeURLAnswer()
        case .deleteRealtimeURL: try catalog.deleteRealtimeURL()
        }
        return nil
    }

    /// Apple's performance test: realtime requests for the subscription, one after another, to
    /// this deployment's realtime route (the configured URL must be https; the test store, on
    /// plain HTTP, calls its own server's route instead), each timed. It passes when enough
    /// answered 200 within the threshold. Answers `{"config", "requestId"}`; the result is read
    /// at once (`performanceTestResult`).
    package func startPerformanceTest(_ body: JSONObject, app: AppConfiguration) async throws -> JSONObject {
        let catalog = messagingCatalogs[app.id] ?? AppleMessagingCatalog()
        guard catalog.realtimeURL != nil else { throw TestStoreAppleAPI.Refusal(404, 4_040_021, "Realtime URL not found.") }
        guard let original = body["originalTransactionId"]?.stringValue, let sold = subscriptions[original], sold.app == app.id else {
            throw TestStoreAppleAPI.Refusal(404, 4_040_005, "Original transaction id not found.")
        }
        let config = AppleMessagingCatalog.performanceTestConfig
        let total = Int(config["totalRequests"]?.integer(in: 1...100) ?? 10)
        let threshold = config["responseTimeThreshold"]?.integer(in: 1...60_000) ?? 700
        var times: [Int64] = []
        var failures: [String: Int64] = [:]
        for _ in 0..<total {
            let request = try realtimeRequest(for: sold.subscription, app: app, locale: "en-US")
            let started = ContinuousClock.now
            let status: Int
            do { status = try await deliver(.signed(.retention, try chain.sign(request))).status } catch {
                failures["NO_RESPONSE", default: 0] += 1
                continue
            }
            let elapsed = started.duration(to: .now)
            let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            if (200..<300).contains(status) {
                times.append(milliseconds)
            } else {
                failures["UNSUCCESSFUL_HTTP_RESPONSE_CODE", default: 0] += 1
            }
        }
        let sorted = times.sorted()
        let percentile = { (share: Int) -> Int64 in sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * share / 100)] }
        let successRate = Int64(times.filter { $0 <= threshold }.count * 100 / total)
        let requestId = newId()
        let result: JSONObject = [
            "config": .object(config), "target": .string(catalog.realtimeURL ?? ""),
            "result": successRate >= (config["successRateThreshold"]?.integer(in: 0...100) ?? 90) ? "PASS" : "FAIL",
            "successRate": .int(successRate), "numPending": 0,
            "responseTimes": .object([
                "average": .int(sorted.isEmpty ? 0 : sorted.reduce(0, +) / Int64(sorted.count)), "p50": .int(percentile(50)),
                "p90": .int(percentile(90)), "p95": .int(percentile(95)), "p99": .int(percentile(99)),
            ]),
            "failures": .object(JSONObject(failures.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.int($0.value)) })),
        ]
        messagingCatalogs[app.id, default: AppleMessagingCatalog()].record(performanceTest: result, requestId: requestId)
        return ["config": .object(config), "requestId": .string(requestId)]
    }

    package func performanceTestResult(_ requestId: String, app: AppConfiguration) throws -> JSONObject {
        try (messagingCatalogs[app.id] ?? AppleMessagingCatalog()).performanceTest(requestId)
    }
}
