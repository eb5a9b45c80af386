import AppStore
import Crypto
import Entitlements
import Foundation

/// The whole configuration, validated once at start-up (see `ConfigurationLoader`).
public struct EntitleConfiguration: Sendable {
    public var server: ServerSettings
    public var storage: StorageSettings
    public var delivery = DeliverySettings()
    public var console = ConsoleSettings()
    public var rateLimits = RateLimitSettings()
    public var apps: [AppConfiguration]
    /// The configuration file, for messages and for resolving relative paths.
    public var path: String

    public func app(id: String) -> AppConfiguration? { apps.first { $0.id == id } }
}

public struct ServerSettings: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// Event-loop threads; 0 means one per core.
    public var eventLoops = 0
    public var maxBodyBytes = 1 << 20
    public var maxConnections = 10_000
    /// How long graceful shutdown waits for in-flight requests.
    public var shutdownGraceSeconds = 10.0
    public var headerTimeoutSeconds = 10.0
    public var idleTimeoutSeconds = 60.0
    /// Threads of the pool that runs the database's blocking work (reads, local work): never an
    /// event loop. 0 means twice the number of cores, at least 4.
    public var blockingThreads = 0
    /// Threads of the pool that calls out (the App Store Server API, Google, OCSP), so a slow
    /// upstream never holds a thread the database's work needs. 0: twice the cores, at least 4.
    public var outboundThreads = 0

    public init() {}
}

public struct StorageSettings: Sendable {
    /// The SQLite database file (resolved against the configuration's folder; default
    /// `entitle.sqlite3` beside the configuration).
    public var sqlitePath: String
    /// A shared PostgreSQL database instead of the SQLite file (several instances).
    public var postgresql: PostgreSQLSettings?
}

public struct PostgreSQLSettings: Sendable {
    /// The libpq connection URL, with the password from `passwordFile` added when one is named.
    public var url: String
    /// Connections (and concurrent write transactions) of this process.
    public var poolSize = 8

    public init(url: String, poolSize: Int = 8) {
        self.url = url
        self.poolSize = poolSize
    }

    /// The URL as logs and check-config show it: the password replaced by `***`.
    public var redactedURL: String {
        guard var components = URLComponents(string: url) else { return "postgresql://(unparsable URL)" }
        if components.password != nil { components.password = "***" }
        components.queryItems = components.queryItems?.map {
            $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0
        }
        return components.string ?? "postgresql://…"
    }
}

/// One App Store app: its identity, its In-App Purchase key, API keys, products and offers.
public struct AppConfiguration: Sendable {
    public var id: String
    public var bundleId: String
    public var appAppleId: Int64?
    /// Enabled environments, in the configuration's order.
    public var environments: [AppStoreEnvironment]
    public var signingKey: SigningKeyConfiguration
    public var apiKeys: [APIKeyConfiguration]
    public var products: [String: CatalogProduct]
    public var offers: [String: OfferConfiguration]
    public var billingRetryGrantsAccess: Bool
    /// Whether Sandbox purchases (App Review, TestFlight, testers) grant entitlements.
    public var sandboxAccess: SandboxAccess = .all
    /// What a client post that names another token for an already linked subscription does.
    public var transferPolicy: TransferPolicy = .refuse
    public var verification: VerificationSettings
    public var serverAPI: ServerAPISettings
    /// Where the app's events are delivered, signed.
    public var webhooks: [WebhookEndpoint] = []
    /// Where each stored notification is passed on byte for byte, per environment.
    public var forwardNotifications: [AppStoreEnvironment: String] = [:]
    /// The app's Google Play side, when it sells there too.
    public var googlePlay: GooglePlaySettings?
    /// How refund reviews are answered (`refunds`).
    public var refunds = RefundPolicy()
    /// The first retry of an answer a store could not take, doubling (`refunds.retrySeconds`).
    public var refundRetrySeconds = 60.0
    /// The answers to Apple's realtime retention requests (`retention`); nil: none.
    public var retention: RetentionPolicy?

    /// The environment answers are about when a request names none: Production when enabled.
    public var defaultEnvironment: AppStoreEnvironment { viewRules.defaultEnvironment }

    /// What the app's subscriber answers (and the `subscriber` of its events) are made by.
    public var viewRules: SubscriberViewRules {
        SubscriberViewRules(
            environments: environments, products: products, billingRetryGrantsAccess: billingRetryGrantsAccess,
            sandboxAccess: sandboxAccess)
    }

    /// `environment` when this app enables it; a request naming another is a 400.
    public func enabled(_ environment: AppStoreEnvironment) throws(ServiceError) -> AppStoreEnvironment {
        guard environments.contains(environment) else {
            throw .badRequest("environment must be one of \(environments.map(\.rawValue).joined(separator: ", "))")
        }
        return environment
    }

    /// Xcode or LocalTesting beside Production: unsigned data is accepted on a production server.
    public var enablesUnsignedBesideProduction: Bool {
        environments.contains(.production) && environments.contains { !$0.isSigned }
    }
}

/// Where the App Store Server API is (Apple's hosts unless overridden, e.g. by a local stand-in).
public struct ServerAPISettings: Sendable {
    public var productionURL: String?
    public var sandboxURL: String?
    /// A private CA to trust (local stand-ins); Apple's hosts use the system's.
    public var caFile: String?
    /// Tell Apple (Set App Account Token) when a client links an untokened subscription.
    public var setAppAccountToken = false
    /// Finish Transaction for each new one-time purchase a client posts or Apple notifies, for
    /// apps that deliver content from the server instead of calling StoreKit's `finish()`.
    public var finishTransactions = false
    /// The first retry of a failed call to Apple (Set App Account Token, Finish Transaction),
    /// doubling up to an hour.
    public var tokenRetrySeconds = 60.0
}

/// How the app's signed data is verified (APPSTORE.md §3).
public struct VerificationSettings: Sendable {
    /// Effective date = now plus OCSP, instead of each payload's signing date.
    public var onlineChecks = false
    /// The trust anchors, loaded and checked at start-up.
    public var rootCertificates: [Certificate] = []
    /// Where they came from (for check-config and readyz).
    public var rootFiles: [String] = []
    /// Accept roots that are not Apple's (private test chains).
    public var allowPrivateRoots = false
}

public struct SigningKeyConfiguration: Sendable {
    public var keyId: String
    /// The App Store Connect issuer ID; without it only the v1 signature is produced.
    public var issuerId: String?
    public var privateKeyFile: String
    public var privateKey: P256.Signing.PrivateKey
}

public enum APIKeyRole: String, Sendable, CaseIterable {
    /// Safe to ship inside an app.
    case client
    /// Secret: the developer's own servers.
    case server
    /// Secret: everything a server key may do, plus support's work (grants, history, search,
    /// overview, the console).
    case admin

    /// Whether the role may do what a server key may.
    public var isServer: Bool { self != .client }
}

public struct APIKeyConfiguration: Sendable {
    /// SHA-256 of the key. Plain keys are hashed at load time so that every comparison is the
    /// same constant-time comparison of two 32-byte digests, whichever form the file used.
    public var sha256: [UInt8]
    public var role: APIKeyRole
    /// Who holds it (`apiKeys[].name`): support's actions are recorded under it.
    public var name: String?
}

public enum TransferPolicy: String, Sendable {
    /// 409 `CONFLICT`, nothing changes.
    case refuse
    /// The subscription moves to the token that posted it; the move is recorded and shown on both.
    case transfer
}

public struct OfferConfiguration: Sendable {
    public var productId: String
    /// The offer identifier configured in App Store Connect.
    public var offerIdentifier: String
    public var eligibility: OfferEligibility.PromotionalRule
    /// The same offer on Google Play (its base plan and offer id), when the app sells there.
    public var googlePlay: GooglePlayOffer?
}
