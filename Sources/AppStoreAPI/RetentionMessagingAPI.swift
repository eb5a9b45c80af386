package import JSON

/// The Retention Messaging API: the messages and images Apple shows on the cancellation page, the
/// default message per product and locale, the realtime URL, and Apple's performance test. The
/// same hosts and bearer token as the App Store Server API; answers are Apple's JSON as sent.
extension AppStoreServerAPIClient {
    private static let messaging = ["inApps", "v1", "messaging"]

    package func uploadRetentionImage(_ imageIdentifier: String, png: [UInt8], size: String) async throws(AppStoreAPIError) {
        _ = try await send(
            "PUT", Self.messaging + ["image", imageIdentifier], query: [("imageSize", size)], bytes: png, contentType: "image/png")
    }

    package func retentionImages() async throws(AppStoreAPIError) -> JSONObject {
        try await send("GET", Self.messaging + ["image", "list"]) ?? [:]
    }

    package func deleteRetentionImage(_ imageIdentifier: String) async throws(AppStoreAPIError) {
        _ = try await send("DELETE", Self.messaging + ["image", imageIdentifier])
    }

    /// `body`: Apple's `UploadMessageRequestBody` (check it with `RetentionMessageLimits` first).
    package func uploadRetentionMessage(_ messageIdentifier: String, _ body: JSONObject) async throws(AppStoreAPIError) {
        _ = try await send("PUT", Self.messaging + ["message", messageIdentifier], body: body)
    }

    package func retentionMessages() async throws(AppStoreAPIError) -> JSONObject {
        try await send("GET", Self.messaging + ["message", "list"]) ?? [:]
    }

    package func deleteRetentionMessage(_ messageIdentifier: String) async throws(AppStoreAPIError) {
        _ = try await send("DELETE", Self.messaging + ["message", messageIdentifier])
    }

    package func setDefaultRetentionMessage(productId: String, locale: String, messageIdentifier: String) async throws(AppStoreAPIError) {
        _ = try await send("PUT", Self.messaging + ["default", productId, locale], body: ["messageIdentifier": .string(messageIdentifier)])
    }

    package func defaultRetentionMessage(productId: String, locale: String) async throws(AppStoreAPIError) -> JSONObject {
        try await send("GET", Self.messaging + ["default", productId, locale]) ?? [:]
    }

    package func deleteDefaultRetentionMessage(productId: String, locale: String) async throws(AppStoreAPIError) {
        _ = try await send("DELETE", Self.messaging + ["default", productId, locale])
    }

    package func setRealtimeURL(_ url: String) async throws(AppStoreAPIError) {
        _ = try await send("PUT", Self.messaging + ["realtime", "url"], body: ["realtimeURL": .string(url)])
    }

    package func realtimeURL() async throws(AppStoreAPIError) -> JSONObject {
        try await send("GET", Self.messaging + ["realtime", "url"]) ?? [:]
    }

    package func deleteRealtimeURL() async throws(AppStoreAPIError) { _ = try await send("DELETE", Self.messaging + ["realtime", "url"]) }

    /// Starts Apple's performance test of the realtime URL (Sandbox): `requestId` in the answer.
    package func startRetentionPerformanceTest(originalTransactionId: String) async throws(AppStoreAPIError) -> JSONObject {
        try await send("POST", Self.messaging + ["performanceTest"], body: ["originalTransactionId": .string(originalTransactionId)]) ?? [:]
    }

    /// `result` `PENDING`, `PASS` or `FAIL`, with the response times Apple measured.
    package func retentionPerformanceTestResult(_ requestId: String) async throws(AppStoreAPIError) -> JSONObject {
        try await send("GET", Self.messaging + ["performanceTest", "result", requestId]) ?? [:]
    }
}

/// Apple's limits on a retention message, checked before it is sent (Apple refuses it otherwise):
/// `header` at most 66 characters, `body` at most 144, at most 5 `bulletPoints` of at most 66 with
/// alt text of at most 150, an image's alt text at most 150, `headerPosition` `ABOVE_BODY` or
/// `ABOVE_IMAGE`.
package enum RetentionMessageLimits {
    package static func problems(_ message: JSONObject) -> [String] {
        var problems: [String] = []
        func text(_ value: JSONValue?, _ name: String, required: Bool, limit: Int) {
            guard let value else {
                if required { problems.append("\(name) is required") }
                return
            }
            guard let string = value.stringValue else { return problems.append("\(name) must be text") }
            if string.isEmpty && required { problems.append("\(name) must not be empty") }
            if string.count > limit { problems.append("\(name) is \(string.count) characters; Apple takes at most \(limit)") }
        }
        text(message["header"], "header", required: true, limit: 66)
        text(message["body"], "body", required: true, limit: 144)
        if let image = message["image"] {
            text(image["imageIdentifier"], "image.imageIdentifier", required: true, limit: 1000)
            text(image["altText"], "image.altText", required: true, limit: 150)
        }
        let bullets = message["bulletPoints"]?.arrayValue ?? []
        if bullets.count > 5 { problems.append("\(bullets.count) bullet points; Apple takes at most 5") }
        for (index, bullet) in bullets.enumerated() {
            text(bullet["text"], "bulletPoints[\(index)].text", required: true, limit: 66)
            if let image = bullet["image"] {
                text(image["imageIdentifier"], "bulletPoints[\(index)].image.imageIdentifier", required: true, limit: 1000)
                text(image["altText"], "bulletPoints[\(index)].image.altText", required: true, limit: 150)
            }
        }
        if let position = message["headerPosition"]?.stringValue, !["ABOVE_BODY", "ABOVE_IMAGE"].contains(position) {
            problems.append("headerPosition must be ABOVE_BODY or ABOVE_IMAGE")
        }
        return problems
    }
}
