import Crypto

/// Who is calling: the app the API key belongs to and the key's role.
public struct Caller: Sendable {
    public let app: AppConfiguration
    public let role: APIKeyRole

    /// Server keys are secret; client keys ship inside apps and read only what their holder may see.
    public func requireServerKey(_ what: String) throws(ServiceError) {
        guard role == .server else { throw .forbidden("\(what) needs a server key") }
    }
}

/// Resolves `Authorization: Bearer <key>` to a caller.
///
/// Keys are held as SHA-256 digests. The presented key is hashed once and compared with every
/// configured digest without stopping early, so the time taken does not depend on which key (or
/// how much of one) matched.
public struct APIKeyAuthenticator: Sendable {
    private let entries: [(digest: [UInt8], app: AppConfiguration, role: APIKeyRole)]

    public init(apps: [AppConfiguration]) {
        entries = apps.flatMap { app in app.apiKeys.map { (digest: $0.sha256, app: app, role: $0.role) } }
    }

    /// `authorization` is the header's value, nil when absent.
    public func authenticate(authorization header: String?) throws(ServiceError) -> Caller {
        guard let header else {
            throw Self.unauthorized("an API key is required (Authorization: Bearer <key>)")
        }
        let bytes = Array(header.utf8)
        // "Bearer " (scheme case-insensitive, RFC 9110 §11.1), then the key.
        let scheme = Array("bearer".utf8)
        guard bytes.count > 7, bytes[6] == 0x20, (0..<6).allSatisfy({ bytes[$0] | 0x20 == scheme[$0] }) else {
            throw Self.unauthorized("the Authorization header must be Bearer <key>")
        }
        let digest = SHA256.hash(bytes[7...])
        var found: Int?
        for (index, entry) in entries.enumerated() where Self.constantTimeEqual(entry.digest, digest) {
            if found == nil { found = index }
        }
        guard let found else { throw Self.unauthorized("unknown API key") }
        return Caller(app: entries[found].app, role: entries[found].role)
    }

    private static func unauthorized(_ message: String) -> ServiceError {
        ServiceError(status: 401, code: "UNAUTHORIZED", message: message)
    }

    /// Compares every byte whatever the first difference; lengths are public (always 32 here).
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<lhs.count { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
