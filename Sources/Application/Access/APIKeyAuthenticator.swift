import Crypto

/// Who is calling: the app the API key belongs to, the key's role, and the name its actions are
/// recorded under.
package struct Caller: Sendable {
    package let app: AppConfiguration
    package let role: APIKeyRole
    /// `apiKeys[].name`, else the key's role and place in the configuration (`admin key 2`).
    package let keyName: String

    package init(app: AppConfiguration, role: APIKeyRole, keyName: String) {
        self.app = app
        self.role = role
        self.keyName = keyName
    }

    /// Server (and admin) keys are secret; client keys ship inside apps and read only what their
    /// holder may see.
    package func requireServerKey(_ what: String) throws(ServiceError) {
        guard role.isServer else { throw .forbidden("\(what) needs a server key") }
    }

    /// Support's work: grants, a customer's history, search, the overview, the console.
    package func requireAdminKey(_ what: String) throws(ServiceError) {
        guard role == .admin else { throw .forbidden("\(what) needs an admin key") }
    }
}

/// Resolves `Authorization: Bearer <key>` to a caller.
///
/// Keys are held as SHA-256 digests. The presented key is hashed once and compared with every
/// configured digest without stopping early, so the time taken does not depend on which key (or
/// how much of one) matched.
package struct APIKeyAuthenticator: Sendable {
    private let entries: [(digest: [UInt8], caller: Caller)]

    package init(apps: [AppConfiguration]) {
        entries = apps.flatMap { app in
            app.apiKeys.enumerated().map { index, key in
                (key.sha256, Caller(app: app, role: key.role, keyName: key.name ?? "\(key.role.rawValue) key \(index + 1)"))
            }
        }
    }

    /// `authorization` is the header's value, nil when absent.
    package func authenticate(authorization header: String?) throws(ServiceError) -> Caller {
        try identify(authorization: header).caller
    }

    /// The same, with the key's place among the configured ones (the rate limit's bucket).
    package func identify(authorization header: String?) throws(ServiceError) -> (caller: Caller, index: Int) {
        guard let header else {
            throw Self.unauthorized("an API key is required (Authorization: Bearer <key>)")
        }
        let bytes = Array(header.utf8)
        // "Bearer " (scheme case-insensitive, RFC 9110 §11.1), then the key.
        let scheme = Array("bearer".utf8)
        guard bytes.count > 7, bytes[6] == 0x20, (0..<6).allSatisfy({ bytes[$0] | 0x20 == scheme[$0] }) else {
            throw Self.unauthorized("the Authorization header must be Bearer <key>")
        }
        return try identify(key: bytes[7...])
    }

    package func authenticate(key: some Collection<UInt8>) throws(ServiceError) -> Caller {
        try identify(key: key).caller
    }

    /// The caller a key (its bytes) belongs to, and the key's place among the configured ones
    /// (console sessions name the key by it).
    func identify(key: some Collection<UInt8>) throws(ServiceError) -> (caller: Caller, index: Int) {
        let digest = SHA256.hash(Array(key))
        var found: Int?
        for (index, entry) in entries.enumerated() where Self.constantTimeEqual(entry.digest, digest) {
            if found == nil { found = index }
        }
        guard let found else { throw Self.unauthorized("unknown API key") }
        return (entries[found].caller, found)
    }

    /// The configured key at `index`: its digest and caller.
    func entry(at index: Int) -> (digest: [UInt8], caller: Caller)? {
        entries.indices.contains(index) ? (entries[index].digest, entries[index].caller) : nil
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
