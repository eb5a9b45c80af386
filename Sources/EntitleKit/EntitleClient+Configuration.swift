public import Foundation

/// How an app reaches its Entitle server (docs/SWIFT_CLIENT.md): the server, the app's client key
/// (public: it ships in the app and reads only its holder's customer), who the customer is, and
/// the response-signing keys the app pins.
extension EntitleClient {
    public struct Configuration: Sendable {
        /// Whether an answer must be signed with a pinned key (the default), or is only checked and
        /// reported (`informational`: while a server is being moved to response signing).
        public enum Verification: Sendable {
            case required
            case informational
        }

        public var serverURL: URL
        public var clientKey: String
        /// The customer: the `appAccountToken` StoreKit purchases carry (see `AppAccountToken`).
        public var appAccountToken: UUID
        /// The public keys answers are signed with (`GET /.well-known/entitle/jwks.json`, pinned).
        public var signingKeys: [ResponseSigningKey]
        public var verification: Verification
        /// How long the last verified answer stands while the server cannot be reached (3 days).
        public var maximumStaleness: TimeInterval
        /// Where the last verified answer is kept across launches (nil: memory only).
        public var cacheDirectory: URL?
        /// How far a signed answer's time may be from the device's clock (5 minutes).
        public var allowedClockSkew: TimeInterval

        public init(
            serverURL: URL, clientKey: String, appAccountToken: UUID, signingKeys: [ResponseSigningKey],
            verification: Verification = .required, maximumStaleness: TimeInterval = 3 * 86_400, cacheDirectory: URL? = nil,
            allowedClockSkew: TimeInterval = 300
        ) {
            self.serverURL = serverURL
            self.clientKey = clientKey
            self.appAccountToken = appAccountToken
            self.signingKeys = signingKeys
            self.verification = verification
            self.maximumStaleness = maximumStaleness
            self.cacheDirectory = cacheDirectory
            self.allowedClockSkew = allowedClockSkew
        }
    }
}

/// The customer's `appAccountToken`, made once and kept in a file the app chooses (its
/// Application Support folder, say), so every purchase of every launch carries the same one.
public enum AppAccountToken {
    public static func stored(in file: URL) throws -> UUID {
        if let text = try? String(contentsOf: file, encoding: .utf8),  // absent or unreadable: a new one is made
            let token = UUID(uuidString: text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return token
        }
        let token = UUID()
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(token.uuidString.lowercased().utf8).write(to: file, options: .atomic)
        return token
    }
}
