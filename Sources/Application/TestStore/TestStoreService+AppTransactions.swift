package import AppStore
import Crypto
import Entitlements
import Foundation
import Instants
package import JSON

extension TestStoreService {
    /// What a test customer's device asks for (`POST /v1/test-store/apple/app-transactions`).
    package struct AppTransactionRequest: Sendable {
        package var app: String
        package var appAccountToken: String
        package var environment: AppStoreEnvironment
        /// The version first downloaded, kept from the customer's first request on.
        package var originalApplicationVersion: String
        /// The version the device runs now.
        package var applicationVersion: String

        package init(_ body: JSONObject, app: String, appAccountToken: String) throws(ServiceError) {
            for key in ["environment", "originalApplicationVersion", "applicationVersion"] {
                guard body[key].map({ $0.stringValue.map { !$0.isEmpty && $0.utf8.count <= 64 } ?? false }) ?? true else {
                    throw .badRequest("\"\(key)\" is a string of 1 to 64 bytes")
                }
            }
            self.app = app
            self.appAccountToken = appAccountToken
            environment = AppStoreEnvironment(rawValue: body["environment"]?.stringValue ?? "Sandbox")
            originalApplicationVersion = body["originalApplicationVersion"]?.stringValue ?? "1.0"
            applicationVersion = body["applicationVersion"]?.stringValue ?? originalApplicationVersion
        }
    }

    /// The signed app transaction StoreKit's `AppTransaction.shared` gives the customer's app: the
    /// same download (its `appTransactionId`, first version and date) each time, freshly signed.
    package func appTransaction(_ request: AppTransactionRequest) throws -> JSONObject {
        let app = try self.app(request.app)
        guard app.environments.contains(request.environment) else {
            throw ServiceError.badRequest("app \(app.id) does not enable \(request.environment.rawValue)")
        }
        let key = request.app + "\u{1F}" + request.environment.rawValue + "\u{1F}" + request.appAccountToken
        let now = clock.milliseconds
        let download =
            downloads[key]
            ?? SimulatedAppDownload(
                bundleId: app.bundleId, appAppleId: app.appAppleId, environment: request.environment.rawValue,
                appTransactionId: String(7_000_000_000_000_000 + now % 1_000_000_000_000 + Int64(downloads.count)),
                originalApplicationVersion: request.originalApplicationVersion, originalPurchaseDate: now)
        downloads[key] = download
        let payload = download.payload(
            applicationVersion: request.applicationVersion, deviceVerification: Base64.encode(SecureRandom.bytes(48)),
            nonce: SecureRandom.uuid().uuidString.lowercased(), signedAt: now)
        return [
            "signedAppTransaction": .string(try chain.sign(payload)), "appTransactionId": .string(download.appTransactionId),
        ]
    }
}
