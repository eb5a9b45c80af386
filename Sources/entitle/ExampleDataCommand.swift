import Application
import Crypto
import Foundation
import Instants
import JSON

/// `entitle example-data`: signed data for the README's tour, made on the spot with the example's
/// own chain (`Keys.example/example-chain`), which the example configuration trusts and nothing
/// else does. Three customers: one in a free trial (a transaction and its renewal info, as StoreKit
/// hands them to the app), one whose subscription renewed and one who was refunded (notifications,
/// as Apple posts them). Dates are relative to now, so the data is current whenever it is made.
enum ExampleDataCommand {
    static let usage = "entitle example-data --config PATH [--app ID] [--chain DIR] [--json]"

    /// The customers of the tour, as the README names them.
    static let trialToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    static let renewedToken = "3f0c5e2a-8d1b-4c7e-9a6f-2b4d8e1c7a90"
    static let refundedToken = "9b2e4f6a-1c3d-4e5f-8a7b-6c5d4e3f2a1b"

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["config", "app", "chain"], flagOptions: ["json"])
        let configuration = try loadConfiguration(arguments)
        let app =
            try arguments["app"].map { id in
                guard let app = configuration.apps.first(where: { $0.id == id }) else { throw UsageError("no app \"\(id)\"") }
                return app
            } ?? configuration.apps[0]
        let folder = (configuration.path as NSString).deletingLastPathComponent
        let chainFolder = ConfigurationLoader.resolve(arguments["chain"] ?? "example-chain", in: folder)
        let signer = try ExampleSigner(folder: chainFolder)
        guard app.verification.rootCertificates.contains(signer.root) else {
            throw UsageError(
                "app \(app.id) does not trust \(chainFolder)/root.pem: its verification.rootCertificates must name it "
                    + "(with allowPrivateRoots), as Keys.example/entitle.json does; real apps never should")
        }
        let values = try data(for: app.bundleId, signer: signer, now: Milliseconds.now)
        if arguments.flags.contains("json") {
            var object: JSONObject = [:]
            for value in values { object[value.name] = .string(value.value) }
            Output.line(JSONValue.object(object).serializedString)
        } else {
            Output.line("# Example signed data for app \(app.id), signed by \(chainFolder) (trusted by this example only).")
            Output.line("# Load it into your shell with: eval \"$(entitle example-data --config …)\"")
            for value in values {
                Output.line("# \(value.about)")
                Output.line("\(value.name)=\(value.value)")
            }
        }
        return 0
    }

    private struct Value {
        let name: String
        let about: String
        let value: String
    }

    private static func data(for bundleId: String, signer: ExampleSigner, now: Int64) throws -> [Value] {
        let day: Int64 = 86_400_000
        func transaction(
            _ id: String, original: String, product: String, token: String, purchased: Int64, originallyPurchased: Int64,
            expires: Int64, reason: String
        ) -> JSONObject {
            [
                "transactionId": .string(id), "originalTransactionId": .string(original), "webOrderLineItemId": .string(id + "0"),
                "bundleId": .string(bundleId), "productId": .string(product), "subscriptionGroupIdentifier": "21345678",
                "purchaseDate": .int(purchased), "originalPurchaseDate": .int(originallyPurchased), "expiresDate": .int(expires),
                "quantity": 1, "type": "Auto-Renewable Subscription", "appAccountToken": .string(token),
                "inAppOwnershipType": "PURCHASED", "signedDate": .int(now), "environment": "Sandbox",
                "transactionReason": .string(reason), "storefront": "USA", "storefrontId": "143441", "currency": "USD",
            ]
        }
        func renewal(_ original: String, product: String, renews: Bool, renewalDate: Int64) -> JSONObject {
            [
                "originalTransactionId": .string(original), "autoRenewProductId": .string(product), "productId": .string(product),
                "autoRenewStatus": .int(renews ? 1 : 0), "signedDate": .int(now), "environment": "Sandbox",
                "recentSubscriptionStartDate": .int(renewalDate - 30 * day), "renewalDate": .int(renewalDate),
            ]
        }
        func notification(_ type: String, transaction: String, renewal: String?, status: Int64) -> JSONObject {
            var data: JSONObject = [
                "bundleId": .string(bundleId), "environment": "Sandbox", "signedTransactionInfo": .string(transaction),
                "status": .int(status),
            ]
            if let renewal { data["signedRenewalInfo"] = .string(renewal) }
            return [
                "notificationType": .string(type), "notificationUUID": .string(UUID().uuidString.lowercased()), "version": "2.0",
                "signedDate": .int(now), "data": .object(data),
            ]
        }

        var trial = transaction(
            "2000000000000101", original: "2000000000000101", product: "pro.monthly", token: trialToken,
            purchased: now - 2 * day, originallyPurchased: now - 2 * day, expires: now + 5 * day, reason: "PURCHASE")
        trial["offerType"] = 1
        trial["offerDiscountType"] = "FREE_TRIAL"
        trial["price"] = 0
        let trialRenewal = renewal("2000000000000101", product: "pro.monthly", renews: true, renewalDate: now + 5 * day)

        var renewed = transaction(
            "2000000000000202", original: "2000000000000201", product: "pro.monthly", token: renewedToken,
            purchased: now - 3_600_000, originallyPurchased: now - 31 * day, expires: now + 30 * day - 3_600_000, reason: "RENEWAL")
        renewed["price"] = 9990
        let renewedJWS = try signer.sign(renewed)
        let renewedRenewal = try signer.sign(
            renewal("2000000000000201", product: "pro.monthly", renews: true, renewalDate: now + 30 * day - 3_600_000))

        var refunded = transaction(
            "2000000000000301", original: "2000000000000301", product: "pro.yearly", token: refundedToken,
            purchased: now - 10 * day, originallyPurchased: now - 10 * day, expires: now + 355 * day, reason: "PURCHASE")
        refunded["price"] = 79990
        refunded["revocationDate"] = .int(now - 3_600_000)
        refunded["revocationReason"] = 0
        let refundedJWS = try signer.sign(refunded)

        return [
            Value(name: "TOKEN", about: "the customer in a free trial (the app's appAccountToken)", value: trialToken),
            Value(name: "RENEWED_TOKEN", about: "the customer whose subscription renewed an hour ago", value: renewedToken),
            Value(name: "REFUNDED_TOKEN", about: "the customer Apple refunded an hour ago", value: refundedToken),
            Value(
                name: "JWS", about: "their free trial of pro.monthly, as StoreKit gives it (Transaction.jwsRepresentation)",
                value: try signer.sign(trial)),
            Value(name: "RENEWAL_JWS", about: "its renewal info (will renew)", value: try signer.sign(trialRenewal)),
            Value(
                name: "NOTIFICATION_JWS", about: "DID_RENEW for RENEWED_TOKEN, as Apple posts it (signedPayload)",
                value: try signer.sign(notification("DID_RENEW", transaction: renewedJWS, renewal: renewedRenewal, status: 1))),
            Value(
                name: "REFUND_NOTIFICATION_JWS", about: "REFUND of pro.yearly for REFUNDED_TOKEN",
                value: try signer.sign(notification("REFUND", transaction: refundedJWS, renewal: nil, status: 5))),
        ]
    }
}

/// Signs like Apple: ES256 with the leaf's key, `x5c` = leaf, intermediate, root.
private struct ExampleSigner {
    let root: Certificate
    private let header: JSONObject
    private let key: P256.Signing.PrivateKey

    init(folder: String) throws {
        func certificate(_ name: String) throws -> Certificate {
            do { return try Certificate.load(contentsOf: "\(folder)/\(name)")[0] } catch {
                throw UsageError("\(folder)/\(name): not a readable certificate (see Keys.example/example-chain/make.sh)")
            }
        }
        let chain = [try certificate("leaf.pem"), try certificate("intermediate.pem"), try certificate("root.pem")]
        root = chain[2]
        header = ["alg": "ES256", "x5c": .array(chain.map { .string(Base64.encode($0.derRepresentation)) })]
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: "\(folder)/leaf.key", encoding: .utf8))
        } catch {
            throw UsageError("\(folder)/leaf.key: not a readable P-256 key (\(error))")
        }
    }

    func sign(_ payload: JSONObject) throws -> String { try JWSSigner.sign(header: header, payload: payload, with: key) }
}
