import Crypto
import Entitlements
import Foundation
import Server
import Storage

/// `entitle sign-offer`: prints exactly what `POST /v1/promotional-offers/sign` answers.
enum SignOfferCommand {
    static let usage = """
        entitle sign-offer --config PATH --app ID --product P --offer O \
        [--app-account-token U] [--transaction-id T] [--nonce UUID] [--timestamp MS]
        """

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["config", "app", "product", "offer", "app-account-token",
                                                          "transaction-id", "nonce", "timestamp"])
        let configuration = try loadConfiguration(arguments)
        let appId = try arguments.required("app")
        guard let app = configuration.app(id: appId) else { throw UsageError("no app \"\(appId)\" in the configuration") }
        var nonce = SecureRandom.uuid()
        if let text = arguments["nonce"] {
            guard let parsed = UUID(uuidString: text) else { throw UsageError("--nonce must be a UUID") }
            nonce = parsed
        }
        var timestamp = Date()
        if let text = arguments["timestamp"] {
            guard let milliseconds = Int64(text), milliseconds >= 0 else {
                throw UsageError("--timestamp must be epoch milliseconds")
            }
            timestamp = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        let request = PromotionalOfferRequest(productId: try arguments.required("product"),
                                              offerId: try arguments.required("offer"),
                                              appAccountToken: arguments["app-account-token"],
                                              transactionId: arguments["transaction-id"])
        let service = OfferService(app: app)
        do {
            // The catalog rule needs stored history: read it from the database when there is one.
            var history: [SubscriptionState] = []
            if service.needsHistory(offerId: request.offerId), FileManager.default.fileExists(atPath: configuration.storage.sqlitePath) {
                let store = try SQLiteFactStore(path: configuration.storage.sqlitePath)
                let verification = try VerificationService(app: app)
                history = try SubscriberService(app: app, store: store, verification: verification)
                    .subscriptions(appAccountToken: request.appAccountToken, transactionId: request.transactionId, now: timestamp)
            }
            Output.json(.object(try service.signPromotionalOffer(request, subscriptions: history, nonce: nonce, timestamp: timestamp)))
            return 0
        } catch let error as ServiceError {
            Output.json(error.body)
            Output.error("entitle: \(error.message)")
            return 1
        }
    }
}
