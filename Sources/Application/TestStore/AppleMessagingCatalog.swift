import AppStoreAPI
import Foundation
import JSON

/// What the test store's App Store keeps of one app's Retention Messaging (docs/TEST_STORE.md):
/// images, messages, default messages per product and locale, the realtime URL and performance
/// tests, with the checks and errors of Apple's Retention Messaging API. Apple reviews images
/// and messages; the test store approves them at once.
struct AppleMessagingCatalog: Sendable {
    typealias Refusal = TestStoreAppleAPI.Refusal

    private(set) var images: [(id: String, size: String)] = []
    private(set) var messages: [(id: String, body: JSONObject)] = []
    private var defaults: [String: String] = [:]
    private(set) var realtimeURL: String?
    private var performanceTests: [String: JSONObject] = [:]

    /// Apple's identifiers are UUIDs, compared lower-cased.
    private static func identifier(_ text: String) throws(Refusal) -> String {
        guard let uuid = UUID(uuidString: text) else {
            throw Refusal.badRequest(4_000_000, "Invalid request. The identifier must be a UUID.")
        }
        return uuid.uuidString.lowercased()
    }

    // MARK: - Images

    mutating func uploadImage(_ id: String, size: String?, png: [UInt8]) throws(Refusal) {
        let id = try Self.identifier(id)
        guard let size, ["FULL_SIZE", "BULLET_POINT"].contains(size) else {
            throw Refusal.badRequest(4_000_216, "Invalid request. The image size must be FULL_SIZE or BULLET_POINT.")
        }
        guard png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw Refusal.badRequest(4_000_161, "Invalid request. The image is not a PNG.")
        }
        guard !images.contains(where: { $0.id == id }) else { throw Refusal(409, 4_090_000, "The image identifier already exists.") }
        images.append((id, size))
    }

    var imageList: JSONObject {
        [
            "imageIdentifiers": .array(
                images.map { .object(["imageIdentifier": .string($0.id), "imageState": "APPROVED", "imageSize": .string($0.size)]) })
        ]
    }

    mutating func deleteImage(_ id: String) throws(Refusal) {
        let id = try Self.identifier(id)
        guard images.contains(where: { $0.id == id }) else { throw Refusal(404, 4_040_014, "Image not found.") }
        guard !messages.contains(where: { Self.imageIdentifiers(of: $0.body).contains(id) }) else {
            throw Refusal(403, 4_030_019, "The image is in use by a message.")
        }
        images.removeAll { $0.id == id }
    }

    // MARK: - Messages

    /// A message within Apple's limits (`RetentionMessageLimits`), whose images were uploaded.
    mutating func uploadMessage(_ id: String, body: JSONObject) throws(Refusal) {
        let id = try Self.identifier(id)
        if let problem = RetentionMessageLimits.problems(body).first {
            throw Refusal.badRequest(4_000_000, "Invalid request. \(problem).")
        }
        for image in Self.imageIdentifiers(of: body) where !images.contains(where: { $0.id == image.lowercased() }) {
            throw Refusal(404, 4_040_014, "Image not found.")
        }
        guard !messages.contains(where: { $0.id == id }) else { throw Refusal(409, 4_090_001, "The message identifier already exists.") }
        messages.append((id, body))
    }

    var messageList: JSONObject {
        ["messageIdentifiers": .array(messages.map { .object(["messageIdentifier": .string($0.id), "messageState": "APPROVED"]) })]
    }

    mutating func deleteMessage(_ id: String) throws(Refusal) {
        let id = try Self.identifier(id)
        guard messages.contains(where: { $0.id == id }) else { throw Refusal(404, 4_040_015, "Message not found.") }
        messages.removeAll { $0.id == id }
        defaults = defaults.filter { $0.value != id }
    }

    private static func imageIdentifiers(of message: JSONObject) -> [String] {
        let bullets = message["bulletPoints"]?.arrayValue ?? []
        return ([message["image"]] + bullets.map { $0["image"] }).compactMap { $0?["imageIdentifier"]?.stringValue }
    }

    // MARK: - Default messages

    /// The message shown for a product and locale (`en-US`) when the realtime URL does not answer.
    mutating func setDefault(productId: String, locale: String, body: JSONObject) throws(Refusal) {
        try Self.checkLocale(locale)
        guard let message = body["messageIdentifier"]?.stringValue.flatMap(UUID.init(uuidString:))?.uuidString.lowercased(),
            messages.contains(where: { $0.id == message })
        else { throw Refusal(404, 4_040_015, "Message not found.") }
        defaults["\(productId)\n\(locale)"] = message
    }

    func defaultMessage(productId: String, locale: String) throws(Refusal) -> JSONObject {
        try Self.checkLocale(locale)
        guard let message = defaults["\(productId)\n\(locale)"] else { throw Refusal(404, 4_040_020, "Default message not found.") }
        return ["messageIdentifier": .string(message)]
    }

    mutating func deleteDefault(productId: String, locale: String) throws(Refusal) {
        try Self.checkLocale(locale)
        guard defaults.removeValue(forKey: "\(productId)\n\(locale)") != nil else {
            throw Refusal(404, 4_040_020, "Default message not found.")
        }
    }

    private static func checkLocale(_ locale: String) throws(Refusal) {
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, parts.allSatisfy({ $0.allSatisfy(\.isLetter) }) else {
            throw Refusal.badRequest(4_000_164, "Invalid request. The locale is invalid.")
        }
    }

    // MARK: - The realtime URL and performance tests

    mutating func setRealtimeURL(_ body: JSONObject) throws(Refusal) {
        guard let url = body["realtimeURL"]?.stringValue, url.hasPrefix("https://"), url.count <= 256, URL(string: url)?.host != nil else {
            throw Refusal.badRequest(4_000_215, "Invalid request. The realtime URL must be an https URL of at most 256 characters.")
        }
        realtimeURL = url
    }

    func realtimeURLAnswer() throws(Refusal) -> JSONObject {
        guard let realtimeURL else { throw Refusal(404, 4_040_021, "Realtime URL not found.") }
        return ["realtimeURL": .string(realtimeURL)]
    }

    mutating func deleteRealtimeURL() throws(Refusal) {
        guard realtimeURL != nil else { throw Refusal(404, 4_040_021, "Realtime URL not found.") }
        realtimeURL = nil
    }

    /// How a performance test runs: requests, the response time each must stay under (ms),
    /// and the share that must succeed (percent).
    static let performanceTestConfig: JSONObject = [
        "maxConcurrentRequests": 1, "totalRequests": 10, "totalDuration": 10_000, "responseTimeThreshold": 700,
        "successRateThreshold": 90,
    ]

    mutating func record(performanceTest result: JSONObject, requestId: String) { performanceTests[requestId] = result }

    func performanceTest(_ requestId: String) throws(Refusal) -> JSONObject {
        guard let result = performanceTests[requestId] else { throw Refusal(404, 4_040_018, "Performance test run not found.") }
        return result
    }
}
