import AppStore
import Crypto
import Entitlements
import Foundation
import GooglePlay
import HTTPClient
import Instants
import JSON
import TestSupport
import XCTest

@testable import Application

/// One app's use cases wired as a deployment wires them, without HTTP: a real SQLite store, the
/// server's clock moved by the test, data signed by a minted chain the app trusts, and a fake of
/// the App Store Server API port.
final class UseCaseFixture: @unchecked Sendable {
    let chain: TestChain
    let clock: MovableClock
    let apple = RecordingAppStore()
    let store: any FactStore
    let application: EntitleApplication
    let services: AppServices
    let support: Caller
    let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    static let day: Int64 = 86_400_000

    /// Signing dates fall inside the minted chain's validity, which starts when it was minted.
    var base: Int64 { TestChain.milliseconds(chain.mintedAt) }

    /// With `google`, the app sells on Google Play too (pro.monthly is Play's `pro`/`monthly`),
    /// through `google` as the Developer API port; `googleFiles` gives the service account and
    /// push keys the configuration names. `webhooks` sends the app's events to a receiver that
    /// trusts `deliveryCAFile`.
    init(
        google: RecordingGooglePlay? = nil, googleFiles: GooglePlayStandIn? = nil, webhooks: WebhookReceiver? = nil
    ) throws {
        chain = try TestChain()
        clock = MovableClock(at: chain.mintedAt.addingTimeInterval(1))
        let folder = try makeTemporaryDirectory("entitle-use-cases")
        try writeFile(folder.appendingPathComponent("key.p8"), try P256.Signing.PrivateKey().pemRepresentation)
        let configuration = try ConfigurationLoader.load(
            text: Array(
                """
                {"storage": {"sqlite": "unused.sqlite3"},\(Self.delivery(webhooks))
                 "apps": [{"id": "app", "bundleId": "com.example.app", "environments": \(googleFiles == nil ? #"["Sandbox"]"# : #"["Production", "Sandbox"]"#), "appAppleId": 1234,
                   "signingKey": {"keyId": "KEY1", "issuerId": "57246542-96fe-1a63-e053-0824d011072a", "privateKeyFile": "key.p8"},
                   "apiKeys": [{"key": "admin_key_0123456789", "role": "admin", "name": "Dana (support)"}],\(Self.webhooks(webhooks))
                   "verification": {"rootCertificates": ["\(chain.folder.appendingPathComponent("root.pem").path)"],
                                    "allowPrivateRoots": true},
                   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]\(googleFiles == nil ? "" : #", "googlePlay": {"productId": "pro", "basePlanId": "monthly"}"#)}},\(Self.googlePlay(googleFiles))
                   "offers": {"comeback": {"productId": "pro.monthly", "offerIdentifier": "comeback", "eligibility": "lapsed"}},
                   "refunds": {"customerConsent": true, "rules": [{"name": "legal", "when": {"reason": "LEGAL"}, "prefer": "DECLINE"}]},
                   "retention": {"defaultMessage": "msg-stay",
                                 "rules": [{"name": "paying", "when": {"inTrial": false}, "answer": {"message": "msg-paying"}}]}}]}
                """.utf8), path: folder.appendingPathComponent("entitle.json").path, environment: [:])
        store = try makeTemporaryStore()
        let apple = self.apple
        application = try EntitleApplication(
            configuration: configuration, store: store, clock: clock, machineClock: SystemClock(),
            newId: { UUID().uuidString.lowercased() },
            outboundClients: OutboundClients(
                appStore: { _, _ in [.sandbox: apple] },
                googlePlay: { settings, runTransfer in
                    google.map { GooglePlayService.Connection(http: HTTPClient(configuration: .init()), api: $0) }
                        ?? GooglePlayService.Connection.live(settings, runTransfer: runTransfer)
                }))
        services = try XCTUnwrap(application.apps["app"])
        support = Caller(app: services.app, role: .admin, keyName: "Dana (support)")
    }

    private static func delivery(_ receiver: WebhookReceiver?) -> String {
        receiver.map { #" "delivery": {"caFile": "\#($0.caFile)", "firstRetrySeconds": 1},"# } ?? ""
    }

    private static func webhooks(_ receiver: WebhookReceiver?) -> String {
        receiver.map { #" "webhooks": [{"url": "\#($0.url("/hooks"))", "secret": "\#($0.secret)"}],"# } ?? ""
    }

    private static func googlePlay(_ files: GooglePlayStandIn?) -> String {
        guard let files else { return "" }
        return """
             "googlePlay": {"packageName": "com.example.android", "serviceAccountKeyFile": "\(files.serviceAccountFile.path)",
               "pubsub": {"audience": "https://entitle.example.com/v1/notifications/google",
                          "serviceAccountEmail": "pubsub-push@example-project.iam.gserviceaccount.com"},
               "jwks": "\(files.jwksFile.path)"},
            """
    }

    /// A monthly subscription bought at `base`, as Apple signs it (a free trial: the helper's
    /// transaction is the first period of a new customer).
    func transaction(_ id: String = "1000", expires days: Int64 = 30) throws -> String {
        try chain.sign([
            "transactionId": .string(id), "originalTransactionId": "1000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "subscriptionGroupIdentifier": "G1", "type": "Auto-Renewable Subscription", "purchaseDate": .int(base),
            "originalPurchaseDate": .int(base), "expiresDate": .int(base + days * Self.day), "signedDate": .int(base),
            "environment": "Sandbox", "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token), "price": 9990,
            "currency": "USD", "transactionReason": "PURCHASE",
        ])
    }

    func renewal() throws -> String {
        try chain.sign([
            "originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly", "autoRenewStatus": 1,
            "environment": "Sandbox", "signedDate": .int(base), "renewalDate": .int(base + 30 * Self.day),
        ])
    }

    func notification(_ uuid: String, type: String, subtype: String? = nil) throws -> String {
        var payload: JSONObject = [
            "notificationType": .string(type), "notificationUUID": .string(uuid), "version": "2.0", "signedDate": .int(base),
            "data": .object([
                "bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(try transaction()),
                "signedRenewalInfo": .string(try renewal()), "status": 1,
            ]),
        ]
        if let subtype { payload["subtype"] = .string(subtype) }
        return try chain.sign(payload)
    }

    /// What a use case answers through its completion, waited for.
    func answer<T: Sendable>(_ call: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) throws -> T {
        let result = LockedList<Result<T, any Error>>()
        let done = DispatchSemaphore(value: 0)
        call { answer in
            result.append(answer)
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success, let answered = result.all.first else {
            throw NoAnswer()
        }
        return try answered.get()
    }

    struct NoAnswer: Error, CustomStringConvertible {
        var description: String { "the use case did not answer within 10 s" }
    }

    func subscriber() throws -> JSONValue? {
        try services.subscribers.subscriber(appAccountToken: token, environment: nil, at: clock.now()).map(JSONValue.object)
    }
}
