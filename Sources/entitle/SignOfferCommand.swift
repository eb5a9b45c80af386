import AppStore
import Application
import Crypto
import Foundation
import Instants
import JSON
import Server
import Storage

/// `entitle sign-offer`: prints exactly what `POST /v1/promotional-offers/sign` answers.
enum SignOfferCommand {
    static let usage = """
        entitle sign-offer --config PATH --app ID --product P --offer O \
        [--app-account-token U] [--transaction-id T] [--environment E] [--nonce UUID] [--timestamp MS]
        """

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(
            raw,
            valueOptions: [
                "config", "app", "product", "offer", "app-account-token",
                "transaction-id", "environment", "nonce", "timestamp",
            ])
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
            guard let milliseconds = Int64(text).flatMap(Milliseconds.checked), milliseconds >= 0 else {
                throw UsageError("--timestamp must be epoch milliseconds, before the year 10000")
            }
            timestamp = Milliseconds.date(milliseconds)
        }
        let request = PromotionalOfferRequest(
            productId: try arguments.required("product"),
            offerId: try arguments.required("offer"),
            appAccountToken: arguments["app-account-token"],
            transactionId: arguments["transaction-id"],
            environment: arguments["environment"].map(AppStoreEnvironment.init(rawValue:)))
        // The catalog rule may need stored history: the same use case as the endpoint, over the
        // database when there is one.
        let offers: OfferService
        if configuration.storage.postgresql != nil || FileManager.default.fileExists(atPath: configuration.storage.sqlitePath) {
            let application = try EntitleApplication(
                configuration: configuration,
                store: try configuration.storage.openStore(),
                pool: BlockingPool(threads: 1), clock: SystemClock(), machineClock: SystemClock(), newId: IdSource.random)
            offers = try application.services(appId: appId).offers
        } else {
            offers = OfferService(app: app)
        }
        do {
            Output.json(.object(try awaitResult { offers.signPromotionalOffer(request, now: timestamp, nonce: nonce, completion: $0) }))
            return 0
        } catch let error as ServiceError {
            Output.json(error.body)
            Output.error("entitle: \(error.message)")
            return 1
        }
    }
}
