public import Foundation

/// The customer as Entitle answers it (`GET /v1/subscribers/{appAccountToken}`), for both stores.
public struct Customer: Sendable, Equatable {
    public var appAccountToken: String?
    public var entitlements: [String: Entitlement]
    /// The customer's download of the app, once the app has posted its `AppTransaction`
    /// (`EntitleClient.postAppTransaction(using:)`).
    public var appDownload: AppDownload?

    public init(appAccountToken: String?, entitlements: [String: Entitlement], appDownload: AppDownload? = nil) {
        self.appAccountToken = appAccountToken
        self.entitlements = entitlements
        self.appDownload = appDownload
    }

    /// An entitlement is granted while its `isActive` holds; offline, also only until its expiry.
    public func isEntitled(to entitlement: String, at now: Date = Date()) -> Bool {
        guard let value = entitlements[entitlement], value.isActive else { return false }
        return value.expiresDate.map { $0 > now } ?? true
    }
}

/// One entitlement: whether it is active, why (`state`), and what grants it.
public struct Entitlement: Sendable, Equatable, Decodable {
    public var isActive: Bool
    /// `ACTIVE`, `GRACE_PERIOD`, `BILLING_RETRY`, `EXPIRED`, `REVOKED`, … (docs/ENTITLEMENTS.md).
    public var state: String
    public var productId: String?
    public var expiresDate: Date?
    public var willRenew: Bool?
    /// `NORMAL`, `TRIAL`, `INTRO`, `PROMOTIONAL`, …
    public var periodType: String?
    /// `app_store`, `play_store` or `promotional`.
    public var store: String?

    enum CodingKeys: String, CodingKey {
        case isActive, state, productId, expiresDateMs, willRenew, periodType, store
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isActive = try container.decode(Bool.self, forKey: .isActive)
        state = try container.decode(String.self, forKey: .state)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        expiresDate = try container.decodeIfPresent(Int64.self, forKey: .expiresDateMs).map {
            Date(timeIntervalSince1970: Double($0) / 1000)
        }
        willRenew = try container.decodeIfPresent(Bool.self, forKey: .willRenew)
        periodType = try container.decodeIfPresent(String.self, forKey: .periodType)
        store = try container.decodeIfPresent(String.self, forKey: .store)
    }
}

/// The app's download as Entitle keeps it (the subscriber answer's `appTransaction`).
public struct AppDownload: Sendable, Equatable, Decodable {
    public var appTransactionId: String
    /// `Production`, `Sandbox`, `Xcode`, …
    public var environment: String
    /// The version first bought or downloaded: what an app that went from paid to free reads to
    /// honour its earlier buyers.
    public var originalApplicationVersion: String?
    public var originalPurchaseDate: Date?

    enum CodingKeys: String, CodingKey {
        case appTransactionId, environment, originalApplicationVersion, originalPurchaseDateMs
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appTransactionId = try container.decode(String.self, forKey: .appTransactionId)
        environment = try container.decode(String.self, forKey: .environment)
        originalApplicationVersion = try container.decodeIfPresent(String.self, forKey: .originalApplicationVersion)
        originalPurchaseDate = try container.decodeIfPresent(Int64.self, forKey: .originalPurchaseDateMs).map {
            Date(timeIntervalSince1970: Double($0) / 1000)
        }
    }
}

/// What `EntitleClient.customer()` answers: the customer, and where the answer came from.
public struct CustomerState: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// Entitle answered now.
        case server
        /// Entitle could not be reached: the last verified answer, signed at `signedAt`.
        case cache(signedAt: Date)
    }

    public var customer: Customer
    public var source: Source
    /// Whether the answer passed the signature checks (false only in `informational` mode).
    public var verified: Bool
}

/// Entitle's answer was an error: its stable code (`NOT_FOUND`, `OFFER_UNAVAILABLE`, …), message,
/// HTTP status and request id (to quote to whoever runs the server).
public struct EntitleError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    public var requestId: String?
}

/// The server could not be reached, and no verified answer recent enough stands in.
public struct EntitleUnreachable: Error, Sendable {
    public var underlying: String
}
