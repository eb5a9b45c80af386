package import AppStore
import AppStoreAPI
import Foundation
package import JSON

/// The app's retention messages through Apple's Retention Messaging API: what `entitle retention …`
/// and the admin endpoints `…/v1/retention/…` both call, so both check the same limits before
/// anything is sent. Calls wait on Apple: on the outbound pool.
package struct RetentionMessaging: Sendable {
    package enum Operation: Sendable {
        case listMessages
        case uploadMessage(id: String, message: JSONObject)
        case deleteMessage(id: String)
        case listImages
        case uploadImage(id: String, png: [UInt8], size: String)
        case deleteImage(id: String)
        case getDefault(productId: String, locale: String)
        case setDefault(productId: String, locale: String, messageIdentifier: String)
        case deleteDefault(productId: String, locale: String)
        case getRealtimeURL
        case setRealtimeURL(String)
        case deleteRealtimeURL
        case startPerformanceTest(originalTransactionId: String)
        case performanceTestResult(requestId: String)
    }

    let app: AppConfiguration
    let clients: AppStoreClients

    init(_ context: AppContext, clients: AppStoreClients) {
        app = context.app
        self.clients = clients
    }

    /// 400 for what Apple would refuse; the caller's cancellation aborts Apple's call.
    package func perform(_ operation: Operation, environment: AppStoreEnvironment) async throws -> JSONObject {
        guard let client = clients[environment] else {
            throw ServiceError(
                status: 422, code: "RETENTION_API_NOT_CONFIGURED",
                message: "\(environment.rawValue): the Retention Messaging API needs signingKey.issuerId and the environment enabled")
        }
        switch operation {
        case .listMessages: return try await client.retentionMessages()
        case .uploadMessage(let id, let message):
            let problems = RetentionMessageLimits.problems(message)
            guard problems.isEmpty else {
                throw ServiceError.badRequest("the message would be refused: " + problems.joined(separator: "; "))
            }
            try await client.uploadRetentionMessage(id, message)
            return ["uploaded": .string(id), "state": "PENDING"]
        case .deleteMessage(let id):
            try await client.deleteRetentionMessage(id)
            return ["deleted": .string(id)]
        case .listImages: return try await client.retentionImages()
        case .uploadImage(let id, let png, let size):
            guard png.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { throw ServiceError.badRequest("the image must be a PNG") }
            guard ["FULL_SIZE", "BULLET_POINT"].contains(size) else {
                throw ServiceError.badRequest("imageSize must be FULL_SIZE or BULLET_POINT")
            }
            try await client.uploadRetentionImage(id, png: png, size: size)
            return ["uploaded": .string(id), "imageSize": .string(size), "state": "PENDING"]
        case .deleteImage(let id):
            try await client.deleteRetentionImage(id)
            return ["deleted": .string(id)]
        case .getDefault(let product, let locale): return try await client.defaultRetentionMessage(productId: product, locale: locale)
        case .setDefault(let product, let locale, let message):
            try await client.setDefaultRetentionMessage(productId: product, locale: locale, messageIdentifier: message)
            return ["productId": .string(product), "locale": .string(locale), "messageIdentifier": .string(message)]
        case .deleteDefault(let product, let locale):
            try await client.deleteDefaultRetentionMessage(productId: product, locale: locale)
            return ["deleted": true]
        case .getRealtimeURL: return try await client.realtimeURL()
        case .setRealtimeURL(let url):
            guard url.hasPrefix("https://"), url.count <= 256, URL(string: url) != nil else {
                throw ServiceError.badRequest("the realtime URL must be an https URL of at most 256 characters (Apple calls nothing else)")
            }
            try await client.setRealtimeURL(url)
            return ["realtimeURL": .string(url)]
        case .deleteRealtimeURL:
            try await client.deleteRealtimeURL()
            return ["deleted": true]
        case .startPerformanceTest(let original): return try await client.startRetentionPerformanceTest(originalTransactionId: original)
        case .performanceTestResult(let id): return try await client.retentionPerformanceTestResult(id)
        }
    }
}
