public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// An app's connection to its Entitle server (docs/SWIFT_CLIENT.md). Every answer it acts on is
/// checked against the pinned response-signing keys; the last verified answer is kept (in memory,
/// and on disk when `cacheDirectory` is set) and stands while the server cannot be reached, for at
/// most `maximumStaleness`. Purchases: `EntitleClient+Purchases`.
public actor EntitleClient {
    let configuration: Configuration
    private let session: URLSession
    private let check: SignedAnswerCheck
    private var last: (body: Data, signedAt: Date)?
    /// Transactions bought while Entitle could not be reached, until it has stored them.
    var pending: PendingTransactions
    /// Who listens to `customerUpdates()`, and the last customer they heard.
    private var observers: [UUID: AsyncStream<CustomerState>.Continuation] = [:]
    private var lastAnnounced: Customer?

    public init(configuration: Configuration, session: URLSession = .shared) {
        self.configuration = configuration
        self.session = session
        check = SignedAnswerCheck(
            keys: configuration.signingKeys, allowedClockSkew: configuration.allowedClockSkew, verifier: PlatformSignatureVerifier())
        last = Self.readCache(configuration)
        pending = PendingTransactions(directory: configuration.cacheDirectory, appAccountToken: configuration.appAccountToken)
    }

    /// The customer now: Entitle's signed answer, or — when Entitle cannot be reached — the last
    /// verified one, if it is recent enough. An answer that fails the signature checks throws
    /// `UntrustedAnswer` (in `required` mode) and never replaces the cached one.
    public func customer(now: Date = Date()) async throws -> CustomerState {
        let path = "/v1/subscribers/\(configuration.appAccountToken.uuidString.lowercased())"
        let answer: Answer
        do { answer = try await send("GET", path, kept: last?.body, now: now) } catch let unreachable as EntitleUnreachable {
            guard let last, now.timeIntervalSince(last.signedAt) <= configuration.maximumStaleness else { throw unreachable }
            return CustomerState(customer: try Self.decodeCustomer(last.body), source: .cache(signedAt: last.signedAt), verified: true)
        }
        if answer.status == 404 {
            // A customer Entitle does not know yet has no entitlements (the answer said so, signed).
            let state = CustomerState(
                customer: Customer(appAccountToken: nil, entitlements: [:]), source: .server, verified: answer.verified)
            if answer.verified { announce(state) }
            return state
        }
        guard answer.status == 200 else { throw Self.error(answer) }
        return try keep(answer)
    }

    /// Posts a transaction (and its renewal info) to Entitle: the customer once Entitle has
    /// verified and stored it. `EntitleUnreachable` when it cannot be reached or answers 5xx.
    func post(_ transaction: StoreTransaction) async throws -> CustomerState {
        var body = ["signedTransaction": transaction.jwsRepresentation]
        body["signedRenewalInfo"] = transaction.signedRenewalInfo
        let answer = try await send("POST", "/v1/transactions", body: try JSONEncoder().encode(body))
        guard answer.status == 200 else { throw Self.error(answer) }
        return try keep(answer)
    }

    /// Posts the app's signed `AppTransaction` for the customer: the customer once Entitle has
    /// verified and stored the download.
    func post(appTransaction: String) async throws -> CustomerState {
        let body = ["signedAppTransaction": appTransaction, "appAccountToken": configuration.appAccountToken.uuidString.lowercased()]
        let answer = try await send("POST", "/v1/app-transactions", body: try JSONEncoder().encode(body))
        guard answer.status == 200 else { throw Self.error(answer) }
        return try keep(answer)
    }

    /// The customer of the last verified answer (nil: none, or one that no longer decodes).
    var lastCustomer: Customer? { last.flatMap { try? Self.decodeCustomer($0.body) } }  // one that no longer decodes: none

    /// A 200 answer's verified body, for the calls whose answer is not the customer.
    func call(
        _ method: String, _ path: String, query: [(String, String)] = [], _ body: (some Encodable)? = [String: String]?.none
    )
        async throws -> Data
    {
        let answer = try await send(method, path, query: query, body: try body.map { try JSONEncoder().encode($0) })
        guard answer.status == 200 else { throw Self.error(answer) }
        return answer.body
    }

    /// Every byte but the unreserved ones (RFC 3986) percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(Character(UnicodeScalar(byte)))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }

    /// The customer an answer carries (`{"subscriber"}`), kept as the last verified one and
    /// announced when it changed.
    private func keep(_ answer: Answer) throws -> CustomerState {
        let customer = try Self.decodeCustomer(answer.body)
        let state = CustomerState(customer: customer, source: .server, verified: answer.verified)
        if answer.verified {
            last = (answer.body, answer.signedAt)
            writeCache(answer.body, signedAt: answer.signedAt)
            announce(state)
        }
        return state
    }

    // MARK: - Changes

    /// The customer each time the client learns a different one — from `customer()`, a purchase,
    /// a restore or the listener's posts — starting with the last verified one when there is one.
    /// Only verified answers are announced. The sequence ends when the caller stops iterating.
    public func customerUpdates() -> AsyncStream<CustomerState> {
        let (stream, continuation) = AsyncStream.makeStream(of: CustomerState.self, bufferingPolicy: .bufferingNewest(8))
        let id = UUID()
        observers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.stopObserving(id) } }
        if let last, let customer = try? Self.decodeCustomer(last.body) {  // a cache that no longer decodes announces nothing
            continuation.yield(CustomerState(customer: customer, source: .cache(signedAt: last.signedAt), verified: true))
        }
        return stream
    }

    private func stopObserving(_ id: UUID) { observers[id] = nil }

    private func announce(_ state: CustomerState) {
        guard state.customer != lastAnnounced else { return }
        lastAnnounced = state.customer
        for observer in observers.values { observer.yield(state) }
    }

    // MARK: - HTTP

    /// An answer that passed the signature checks (or, in `informational` mode, one that did not:
    /// `verified` false).
    struct Answer {
        var status: Int
        var body: Data
        var verified: Bool
        var signedAt: Date
        /// The server's `X-Request-Id`: what an error quotes to whoever runs the server.
        var requestId: String?
    }

    /// One request with a fresh nonce, its answer checked. A transport failure or a 5xx answer
    /// (unsigned, from whatever stood in the way) is `EntitleUnreachable`. With `kept` (the body
    /// of the last verified answer) the request is conditional: Entitle answers 304 when it is
    /// still current, signed over that body, and the answer is the kept body.
    private func send(
        _ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil, kept: Data? = nil,
        now: Date = Date()
    ) async throws -> Answer {
        // 16 bytes of the system's cryptographic generator (random(in:)'s default).
        let nonce = Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }))
        // The target as sent is what the answer's signature names: the query encoded here, once.
        let target =
            query.isEmpty ? path : path + "?" + query.map { "\(Self.percentEncoded($0))=\(Self.percentEncoded($1))" }.joined(separator: "&")
        guard let url = URL(string: configuration.serverURL.absoluteString.trimmingSuffix("/") + target) else {
            throw EntitleUnreachable(underlying: "not a URL: \(target)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(configuration.clientKey)", forHTTPHeaderField: "Authorization")
        request.setValue(nonce, forHTTPHeaderField: "Entitle-Nonce")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }
        if let kept { request.setValue("\"\(Base64URL.encode(SHA256Digest.of(kept)))\"", forHTTPHeaderField: "If-None-Match") }
        request.timeoutInterval = 15
        // The client keeps its own verified copy: a cache of URLSession's would answer a 304 with a
        // body nobody signed for this request.
        request.cachePolicy = .reloadIgnoringLocalCacheData
        var data: Data
        let http: HTTPURLResponse
        do {
            let (received, response) = try await session.data(for: request)
            guard let response = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            (data, http) = (received, response)
        } catch {
            throw EntitleUnreachable(underlying: "\(error)")
        }
        if http.statusCode >= 500 { throw EntitleUnreachable(underlying: "HTTP \(http.statusCode)") }
        var status = http.statusCode
        let requestId = http.value(forHTTPHeaderField: "X-Request-Id")
        if status == 304, let kept {
            // Not modified: the signature covers the body kept, which is the answer.
            (status, data) = (200, kept)
        }
        do {
            let signedAt = try check.check(
                signature: http.value(forHTTPHeaderField: "Entitle-Signature"), nonce: nonce, method: method, path: target, body: data,
                now: now)
            return Answer(status: status, body: data, verified: true, signedAt: signedAt, requestId: requestId)
        } catch {
            guard configuration.verification == .informational else { throw error }
            return Answer(status: status, body: data, verified: false, signedAt: now, requestId: requestId)
        }
    }

    /// An error answer as `EntitleError`: Entitle's code and message, the status, the request id.
    private static func error(_ answer: Answer) -> EntitleError {
        struct ErrorBody: Decodable {
            struct Body: Decodable {
                var code: String
                var message: String
                var requestId: String?
            }
            var error: Body
        }
        // An error body that is not Entitle's (a proxy's page) still yields its status.
        let decoded = try? JSONDecoder().decode(ErrorBody.self, from: answer.body)
        return EntitleError(
            status: answer.status, code: decoded?.error.code ?? "HTTP_\(answer.status)", message: decoded?.error.message ?? "",
            requestId: answer.requestId ?? decoded?.error.requestId)
    }

    private static func decodeCustomer(_ body: Data) throws -> Customer {
        struct Answer: Decodable {
            struct Subscriber: Decodable {
                var appAccountToken: String?
                var entitlements: [String: Entitlement]?
                var appTransaction: AppDownload?
            }
            var subscriber: Subscriber
        }
        let answer = try JSONDecoder().decode(Answer.self, from: body)
        return Customer(
            appAccountToken: answer.subscriber.appAccountToken, entitlements: answer.subscriber.entitlements ?? [:],
            appDownload: answer.subscriber.appTransaction)
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

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
