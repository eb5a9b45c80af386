public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// An app's connection to its Entitle server (docs/SWIFT_CLIENT.md). Every answer it acts on is
/// checked against the pinned response-signing keys; the last verified answer is kept (in memory,
/// and on disk when `cacheDirectory` is set) and stands while the server cannot be reached, for at
/// most `maximumStaleness`.
public actor EntitleClient {
    private let configuration: Configuration
    private let session: URLSession
    private let check: SignedAnswerCheck
    private var last: (body: Data, signedAt: Date)?

    public init(configuration: Configuration, session: URLSession = .shared) {
        self.configuration = configuration
        self.session = session
        check = SignedAnswerCheck(
            keys: configuration.signingKeys, allowedClockSkew: configuration.allowedClockSkew, verifier: PlatformSignatureVerifier())
        last = Self.readCache(configuration)
    }

    /// The customer now: Entitle's signed answer, or — when Entitle cannot be reached — the last
    /// verified one, if it is recent enough. An answer that fails the signature checks throws
    /// `UntrustedAnswer` (in `required` mode) and never replaces the cached one.
    public func customer(now: Date = Date()) async throws -> CustomerState {
        let path = "/v1/subscribers/\(configuration.appAccountToken.uuidString.lowercased())"
        let answer: (status: Int, body: Data, signature: String?, nonce: String)
        do { answer = try await get(path) } catch {
            guard let last, now.timeIntervalSince(last.signedAt) <= configuration.maximumStaleness else {
                throw EntitleUnreachable(underlying: "\(error)")
            }
            return CustomerState(customer: try Self.decodeCustomer(last.body), source: .cache(signedAt: last.signedAt), verified: true)
        }
        var verified = true
        var signedAt = now
        do {
            signedAt = try check.check(
                signature: answer.signature, nonce: answer.nonce, method: "GET", path: path, body: answer.body, now: now)
        } catch {
            guard configuration.verification == .informational else { throw error }
            verified = false
        }
        if answer.status == 404 {
            // A customer Entitle does not know yet has no entitlements (the answer said so, signed).
            return CustomerState(customer: Customer(appAccountToken: nil, entitlements: [:]), source: .server, verified: verified)
        }
        guard answer.status == 200 else { throw Self.error(answer.status, answer.body) }
        let customer = try Self.decodeCustomer(answer.body)
        if verified {
            last = (answer.body, signedAt)
            writeCache(answer.body, signedAt: signedAt)
        }
        return CustomerState(customer: customer, source: .server, verified: verified)
    }

    // MARK: - HTTP

    /// One request with a fresh nonce; the status, body and signature.
    private func get(_ path: String) async throws -> (status: Int, body: Data, signature: String?, nonce: String) {
        // 16 bytes of the system's cryptographic generator (random(in:)'s default).
        let nonce = Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }))
        var request = URLRequest(url: configuration.serverURL.appendingPathComponent(path))
        request.setValue("Bearer \(configuration.clientKey)", forHTTPHeaderField: "Authorization")
        request.setValue(nonce, forHTTPHeaderField: "Entitle-Nonce")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.timeoutInterval = 15
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (http.statusCode, data, http.value(forHTTPHeaderField: "Entitle-Signature"), nonce)
    }

    private static func error(_ status: Int, _ body: Data) -> EntitleError {
        struct Answer: Decodable {
            struct Body: Decodable {
                var code: String
                var message: String
                var requestId: String?
            }
            var error: Body
        }
        // An error body that is not Entitle's (a proxy's page) still yields its status.
        let decoded = try? JSONDecoder().decode(Answer.self, from: body)
        return EntitleError(
            status: status, code: decoded?.error.code ?? "HTTP_\(status)", message: decoded?.error.message ?? "",
            requestId: decoded?.error.requestId)
    }

    private static func decodeCustomer(_ body: Data) throws -> Customer {
        struct Answer: Decodable {
            struct Subscriber: Decodable {
                var appAccountToken: String?
                var entitlements: [String: Entitlement]?
            }
            var subscriber: Subscriber
        }
        let answer = try JSONDecoder().decode(Answer.self, from: body)
        return Customer(appAccountToken: answer.subscriber.appAccountToken, entitlements: answer.subscriber.entitlements ?? [:])
    }

    // MARK: - The cache

    private struct CacheFile: Codable {
        var body: Data
        var signedAt: Date
    }

    private static func cacheFile(_ configuration: Configuration) -> URL? {
        configuration.cacheDirectory?.appendingPathComponent("customer-\(configuration.appAccountToken.uuidString.lowercased()).json")
    }

    private static func readCache(_ configuration: Configuration) -> (body: Data, signedAt: Date)? {
        // A missing or unreadable cache is no cache: the next answer writes it again.
        guard let file = cacheFile(configuration), let data = try? Data(contentsOf: file),
            let cached = try? JSONDecoder().decode(CacheFile.self, from: data)
        else { return nil }
        return (cached.body, cached.signedAt)
    }

    private func writeCache(_ body: Data, signedAt: Date) {
        guard let file = Self.cacheFile(configuration) else { return }
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try JSONEncoder().encode(CacheFile(body: body, signedAt: signedAt)).write(to: file, options: .atomic)
        } catch {
            // The answer stands in memory; only a restart without network loses it.
        }
    }
}
