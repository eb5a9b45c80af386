import Crypto
import Dispatch
import Foundation
import HTTP
import JSON
import Synchronization

/// The Retention Messaging API as Apple serves it, for what Entitle uses: messages and images kept
/// with a review state (uploaded `PENDING`; `review` decides), limits checked as Apple does,
/// default messages, the realtime URL, and a performance test that really calls the realtime URL
/// with realtime requests signed by the test chain and reports the times as Apple does.
struct Messaging {
    var messages: [String: (state: String, body: JSONObject)] = [:]
    var images: [String: (state: String, size: String, bytes: Int)] = [:]
    var defaults: [String: String] = [:]
    var realtimeURL: String?
    var tests: [String: JSONObject] = [:]
}

extension AppStoreStandIn {
    static func addMessagingRoutes(_ router: inout Router, chain: TestChain, state: State) {
        let base = "/inApps/v1/messaging"
        router.add("PUT", base + "/message/{id}") { context in
            let id = context.pathParameters["id"] ?? ""
            guard let body = (try? JSONParser.parse(context.request.body))?.objectValue else {
                return context.respond(error(400, 4000000, "Invalid request."))
            }
            if (body["header"]?.stringValue?.count ?? 0) > 66 { return context.respond(error(400, 4000101, "Header too long.")) }
            if (body["body"]?.stringValue?.count ?? 0) > 144 { return context.respond(error(400, 4000102, "Body too long.")) }
            let taken = state.messaging.withLock { messaging -> Bool in
                guard messaging.messages[id] == nil else { return false }
                messaging.messages[id] = ("PENDING", body)
                return true
            }
            context.respond(taken ? HTTPResponse(status: 200) : error(409, 4090001, "Message already exists."))
        }
        router.add("GET", base + "/message/list") { context in
            let items = state.messaging.withLock { $0.messages }.sorted { $0.key < $1.key }.map { id, message -> JSONValue in
                .object(["messageIdentifier": .string(id), "messageState": .string(message.state)])
            }
            context.respond(json(["messageIdentifiers": .array(items)]))
        }
        router.add("DELETE", base + "/message/{id}") { context in
            let removed = state.messaging.withLock { $0.messages.removeValue(forKey: context.pathParameters["id"] ?? "") != nil }
            context.respond(removed ? HTTPResponse(status: 200) : error(404, 4040015, "Message not found."))
        }
        router.add("PUT", base + "/image/{id}") { context in
            let size = QueryItems(context.request.query)["imageSize"] ?? ""
            guard ["FULL_SIZE", "BULLET_POINT"].contains(size) else { return context.respond(error(400, 4000000, "Invalid image size.")) }
            guard context.request.header("content-type") == "image/png", context.request.body.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
                return context.respond(error(400, 4000000, "The image must be a PNG."))
            }
            state.messaging.withLock { $0.images[context.pathParameters["id"] ?? ""] = ("PENDING", size, context.request.body.count) }
            context.respond(HTTPResponse(status: 200))
        }
        router.add("GET", base + "/image/list") { context in
            let items = state.messaging.withLock { $0.images }.sorted { $0.key < $1.key }.map { id, image -> JSONValue in
                .object(["imageIdentifier": .string(id), "imageState": .string(image.state)])
            }
            context.respond(json(["imageIdentifiers": .array(items)]))
        }
        router.add("DELETE", base + "/image/{id}") { context in
            let removed = state.messaging.withLock { $0.images.removeValue(forKey: context.pathParameters["id"] ?? "") != nil }
            context.respond(removed ? HTTPResponse(status: 200) : error(404, 4040014, "Image not found."))
        }
        router.add("PUT", base + "/default/{product}/{locale}") { context in
            let key = "\(context.pathParameters["product"] ?? "")/\(context.pathParameters["locale"] ?? "")"
            guard let id = (try? JSONParser.parse(context.request.body))?["messageIdentifier"]?.stringValue else {
                return context.respond(error(400, 4000000, "Invalid request."))
            }
            let known = state.messaging.withLock { messaging -> Bool in
                guard messaging.messages[id] != nil else { return false }
                messaging.defaults[key] = id
                return true
            }
            context.respond(known ? HTTPResponse(status: 200) : error(404, 4040015, "Message not found."))
        }
        router.add("GET", base + "/default/{product}/{locale}") { context in
            let key = "\(context.pathParameters["product"] ?? "")/\(context.pathParameters["locale"] ?? "")"
            guard let id = state.messaging.withLock({ $0.defaults[key] }) else {
                return context.respond(error(404, 4040020, "Default message not found."))
            }
            context.respond(json(["messageIdentifier": .string(id)]))
        }
        router.add("DELETE", base + "/default/{product}/{locale}") { context in
            let key = "\(context.pathParameters["product"] ?? "")/\(context.pathParameters["locale"] ?? "")"
            state.messaging.withLock { _ = $0.defaults.removeValue(forKey: key) }
            context.respond(HTTPResponse(status: 200))
        }
        router.add("PUT", base + "/realtime/url") { context in
            guard let url = (try? JSONParser.parse(context.request.body))?["realtimeURL"]?.stringValue, url.count <= 256 else {
                return context.respond(error(400, 4000215, "Invalid realtime URL."))
            }
            state.messaging.withLock { $0.realtimeURL = url }
            context.respond(HTTPResponse(status: 200))
        }
        router.add("GET", base + "/realtime/url") { context in
            guard let url = state.messaging.withLock({ $0.realtimeURL }) else {
                return context.respond(error(404, 4040021, "Realtime URL not found."))
            }
            context.respond(json(["realtimeURL": .string(url)]))
        }
        router.add("DELETE", base + "/realtime/url") { context in
            state.messaging.withLock { $0.realtimeURL = nil }
            context.respond(HTTPResponse(status: 200))
        }
        router.add("POST", base + "/performanceTest") { context in
            guard let original = (try? JSONParser.parse(context.request.body))?["originalTransactionId"]?.stringValue else {
                return context.respond(error(400, 4000000, "Invalid request."))
            }
            guard let url = state.messaging.withLock({ $0.realtimeURL }) else {
                return context.respond(error(404, 4040021, "Realtime URL not found."))
            }
            let requestId = UUID().uuidString.lowercased()
            state.messaging.withLock { $0.tests[requestId] = ["result": "PENDING"] }
            DispatchQueue.global().async {
                let result = performanceTest(url: url, originalTransactionId: original, chain: chain)
                state.messaging.withLock { $0.tests[requestId] = result }
            }
            context.respond(json(["requestId": .string(requestId), "config": .object(performanceConfig)]))
        }
        router.add("GET", base + "/performanceTest/result/{id}") { context in
            guard let result = state.messaging.withLock({ $0.tests[context.pathParameters["id"] ?? ""] }) else {
                return context.respond(error(404, 4040018, "Performance test run not found."))
            }
            context.respond(json(result))
        }
    }

    static let performanceRequests = 20
    static let responseTimeThreshold: Int64 = 700
    static var performanceConfig: JSONObject {
        [
            "totalRequests": .int(Int64(performanceRequests)), "responseTimeThreshold": .int(responseTimeThreshold),
            "successRateThreshold": 100,
        ]
    }

    /// Calls `url` (http on loopback) with signed realtime requests, one after another, and judges
    /// them as Apple does: each answered 200 within the threshold with exactly one answer member.
    static func performanceTest(url: String, originalTransactionId: String, chain: TestChain) -> JSONObject {
        guard let parsed = URL(string: url), let port = parsed.port else { return ["result": "FAIL", "failures": .object(["badUrl": 1])] }
        var times: [Int64] = []
        var failures: [String: Int64] = [:]
        for _ in 0..<performanceRequests {
            let signed = try? chain.sign([
                "originalTransactionId": .string(originalTransactionId), "appAppleId": 1234, "productId": "pro.monthly",
                "userLocale": "en-US", "requestIdentifier": .string(UUID().uuidString.lowercased()),
                "signedDate": .int(TestChain.milliseconds(Date())), "environment": "Sandbox",
            ])
            let body = JSONValue.object(["signedPayload": .string(signed ?? "")]).serializedString
            let started = Date()
            do {
                let client = try TestHTTPClient(port: port, timeout: 5)
                try client.send(
                    rawRequest("POST", parsed.path, headers: ["Content-Type: application/json", "Connection: close"], body: body))
                let response = try client.readResponse()
                let elapsed = Int64(Date().timeIntervalSince(started) * 1000)
                times.append(elapsed)
                let answer = (try? JSONParser.parse(response.body))?.objectValue
                let members = Set(answer?.members.map(\.key) ?? []).intersection(["message", "alternateProduct", "promotionalOffer"])
                if response.status != 200 {
                    failures["httpStatus\(response.status)", default: 0] += 1
                } else if members.count != 1 {
                    failures["invalidResponse", default: 0] += 1
                } else if elapsed > responseTimeThreshold {
                    failures["timeout", default: 0] += 1
                }
            } catch {
                failures["connection", default: 0] += 1
            }
        }
        let sorted = times.sorted()
        func percentile(_ p: Double) -> JSONValue {
            sorted.isEmpty ? .null : .int(sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)])
        }
        let failed = failures.values.reduce(0, +)
        return [
            "config": .object(performanceConfig), "target": .string(url), "result": .string(failed == 0 ? "PASS" : "FAIL"),
            "successRate": .int(Int64((performanceRequests - Int(failed)) * 100 / performanceRequests)), "numPending": 0,
            "responseTimes": .object(["p50": percentile(0.5), "p90": percentile(0.9), "p95": percentile(0.95), "p99": percentile(0.99)]),
            "failures": .object(JSONObject(failures.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.int($0.value)) })),
        ]
    }
}
