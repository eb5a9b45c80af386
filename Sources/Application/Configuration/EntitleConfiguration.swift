package import AppStore
package import Crypto
package import Entitlements
import Foundation

/// The whole configuration, validated once at start-up (see `ConfigurationLoader`).
package struct EntitleConfiguration: Sendable {
    package var server: ServerSettings
    package var storage: StorageSettings
    package var delivery = DeliverySettings()
    package var console = ConsoleSettings()
    package var rateLimits = RateLimitSettings()
    /// `metrics`: whether the figures are kept, and `exchangeRatesFile` (MRR and ARR converted to
    /// one reporting currency).
    package var metrics = MetricsSettings()
    /// `testStore`: the test store of a test deployment (docs/TEST_STORE.md).
    package var testStore = TestStoreSettings()
    /// `responseSigning`: the key answers are signed with (docs/API.md).
    package var responseSigning = ResponseSigningSettings()
    package var apps: [AppConfiguration]
    /// The configuration file, for messages and for resolving relative paths.
    package var path: String

    package func app(id: String) -> AppConfiguration? { apps.first { $0.id == id } }
}

package struct ServerSettings: Sendable {
    package var host = "127.0.0.1"
    package var port = 8080
    /// Event-loop threads; 0 means one per core.
    package var eventLoops = 0
    package var maxBodyBytes = 1 << 20
    package var maxConnections = 10_000
    /// How long graceful shutdown waits for in-flight requests.
    package var shutdownGraceSeconds = 10.0
    package var headerTimeoutSeconds = 10.0
    package var idleTimeoutSeconds = 60.0
    /// Threads of the pool that runs the database's blocking work (reads, local work): never an
    /// event loop. 0 means twice the number of cores, at least 4.
    package var blockingThreads = 0
    /// Threads of the pool that calls out (the App Store Server API, Google, OCSP), so a slow
    /// upstream never holds a thread the database's work needs. 0: twice the cores, at least 4.
    package var outboundThreads = 0

    package init() {}
}

package struct StorageSettings: Sendable {
    /// The SQLite database file (resolved against the configuration's folder; default
    /// `entitle.sqlite3` beside the configuration).
    package var sqlitePath: String
    /// A shared PostgreSQL database instead of the SQLite file (several instances).
    package var postgresql: PostgreSQLSettings?
}

package struct PostgreSQLSettings: Sendable {
    /// The libpq connection URL, with the password from `passwordFile` added when one is named.
    package var url: String
    /// Connections (and concurrent write transactions) of this process.
    package var poolSize = 8

    package init(url: String, poolSize: Int = 8) {
        self.url = url
        self.poolSize = poolSize
    }

    /// The URL as logs and check-config show it: the password replaced by `***`.
    package var redactedURL: String {
        guard var components = URLComponents(string: url) else { return "postgresql://(unparsable URL)" }
        if components.password != nil { components.password = "***" }
        components.queryItems = components.queryItems?.map {
            $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0
        }
        return components.string ?? "postgresql://…"
    }
}

/// One App Store app: its identity, its In-App Purchase key, API keys, products and offers.
package struct AppConfiguration: Sendable {
    /// Members given under a name they no longer have (still read, and warned about).
    package var renamedMembers: [(old: String, new: String)] = []
    package var id: String
    package var bundleId: String
    package var appAppleId: Int64?
    /// Enabled environments, in the configuration's order.
    package var environments: [AppStoreEnvironment]
    package var signingKey: SigningKeyConfiguration
    package var apiKeys: [APIKeyConfiguration]
    package var products: [String: CatalogProduct]
    package var offers: [String: OfferConfiguration]
    package var billingRetryGrantsAccess: Bool
    /// Whether Sandbox purchases (App Review, TestFlight, testers) grant entitlements.
    package var sandboxAccess: SandboxAccess = .all
    /// What a client post that names another token for an already linked subscription does.
    package var transferPolicy: TransferPolicy = .refuse
    package var verification: VerificationSettings
    package var serverAPI: ServerAPISettings
    /// Where the app's events are delivered, signed.
    package var webhooks: [WebhookEndpoint] = []
    /// Where each stored notification is passed on byte for byte, per environment.
    package var forwardNotifications: [AppStoreEnvironment: String] = [:]
    /// The app's Google Play side, when it sells there too.
    package var googlePlay: GooglePlaySettings?
    /// How refund reviews are answered (`refunds`).
    package var refunds = RefundPolicy()
    /// The first retry of an answer a store could not take, doubling (`refunds.retrySeconds`).
    package var refundRetrySeconds = 60.0
    /// The answers to Apple's realtime retention requests (`retention`); nil: none.
    package var retention: RetentionPolicy?
    /// What the app's paywalls sell (`offerings`), and where it shows them (`placements`).
    package var offerings: [String: Offering] = [:]
    package var placements: [String: Placement] = [:]

    /// The environment answers are about when a request names none: Production when enabled.
    package var defaultEnvironment: AppStoreEnvironment { viewRules.defaultEnvironment }

    /// What the app's subscriber answers (and the `subscriber` of its events) are made by.
    package var viewRules: SubscriberViewRules {
        SubscriberViewRules(
            environments: environments, products: products, billingRetryGrantsAccess: billingRetryGrantsAccess,
            sandboxAccess: sandboxAccess)
    }

    /// `environment` when this app enables it; a request naming another is a 400.
    package func enabled(_ environment: AppStoreEnvironment) throws(ServiceError) -> AppStoreEnvironment {
        guard environments.contains(environment) else {
            throw .badRequest("environment must be one of \(environments.map(\.rawValue).joined(separator: ", "))")
        }
        return environment
    }

    /// Xcode or LocalTesting beside Production: unsigned data is accepted on a production server.
    package var enablesUnsignedBesideProduction: Bool {
        environments.contains(.production) && environments.contains { !$0.isSigned }
    }
}

/// Where the App Store Server API is (Apple's hosts unless overridden, e.g. by a local stand-in).
package struct ServerAPISettings: Sendable {
    package var productionURL: String?
    package var sandboxURL: String?
    /// A private CA to trust (local stand-ins); Apple's hosts use the system's.
    package var caFile: String?
    /// Tell Apple (Set App Account Token) when a client links an untokened subscription.
    package var setAppAccountToken = false
    /// Finish Transaction for each new one-time purchase a client posts or Apple notifies, for
    /// apps that deliver content from the server instead of calling StoreKit's `finish()`.
    package var finishTransactions = false
    /// The first retry of a failed call to Apple (Set App Account Token, Finish Transaction),
    /// doubling up to an hour (`callRetrySeconds`; once `tokenRetrySeconds`, when it timed only
    /// Set App Account Token).
    package var callRetrySeconds = 60.0
}

/// How the app's signed data is verified (docs/APP_STORE.md §3).
package struct VerificationSettings: Sendable {
    /// Effective date = now plus OCSP, instead of each payload's signing date.
    package var onlineChecks = false
    /// The trust anchors, loaded and checked at start-up.
    package var rootCertificates: [Certificate] = []
    /// Where they came from (for check-config and readyz).
    package var rootFiles: [String] = []
    /// Accept roots that are not Apple's (private test chains).
    package var allowPrivateRoots = false
}

package struct SigningKeyConfiguration: Sendable {
    package var keyId: String
    /// The App Store Connect issuer ID; without it only the v1 signature is produced.
    package var issuerId: String?
    package var privateKeyFile: String
    package var privateKey: P256.Signing.PrivateKey
}

package enum APIKeyRole: String, Sendable, CaseIterable {
    /// Safe to ship inside an app.
    case client
    /// Secret: the developer's own servers.
    case server
    /// Secret: everything a server key may do, plus support's work (grants, history, search,
    /// overview, the console).
    case admin

    /// Whether the role may do what a server key may.
    package var isServer: Bool { self != .client }
}

package struct APIKeyConfiguration: Sendable {
    /// SHA-256 of the key. Plain keys are hashed at load time so that every comparison is the
    /// same constant-time comparison of two 32-byte digests, whichever form the file used.
    package var sha256: [UInt8]
    package var role: APIKeyRole
    /// Who holds it (`apiKeys[].name`): support's actions are recorded under it.
    package var name: String?
}

package enum TransferPolicy: String, Sendable {
    /// 409 `CONFLICT`, nothing changes.
    case refuse
    /// The subscription moves to the token that posted it; the move is recorded and shown on both.
    case transfer
}

package struct OfferConfiguration: Sendable {
    package var productId: String
    /// The offer identifier configured in App Store Connect.
    package var offerIdentifier: String
    package var eligibility: OfferEligibility.PromotionalRule
    /// The same offer on Google Play (its base plan and offer id), when the app sells there.
    package var googlePlay: GooglePlayOffer?
}
