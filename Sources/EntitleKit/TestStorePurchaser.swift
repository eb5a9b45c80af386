public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// `StorePurchasing` over a test deployment's test store (docs/TEST_STORE.md): what StoreKit
/// would do, done by the test store's App Store — which checks a promotional offer's signature as
/// the App Store does — so an app's integration tests, and EntitleKit's own, run the client's
/// purchase path on any platform. It calls the test store with the deployment's **admin key**:
/// for tests only, never in a shipped app.
///
/// The device's side is kept here: the transactions bought and not yet finished, those the
/// customer holds (`restore`), and the updates a device would hear (`approveAskToBuy` delivers
/// the approved purchase through `transactionUpdates()`).
public actor TestStorePurchaser: StorePurchasing {
    /// What the next purchase does instead of buying: the customer cancels, or a parent must
    /// approve (Ask to Buy).
    public enum NextPurchase: Sendable, Equatable {
        case buy
        case userCancels
        case askToBuy
        /// Another product of the group the customer subscribes to: the App Store changes the
        /// plan of the last subscription bought (`upgrade`, `downgrade` or `crossgrade`, as the
        /// group's levels of service would decide).
        case changePlan(String)
    }

    private let serverURL: URL
    private let adminKey: String
    private let session: URLSession
    /// Whether the test store sends the App Store's notifications of what is bought (as Apple
    /// does); off, only what the client posts reaches Entitle.
    private let notifiesEntitle: Bool
    /// What the next purchase does (then back to `buy`): set by `setNext`.
    private var next = NextPurchase.buy
    /// An introductory offer the store applies to the next purchase (StoreKit applies one by
    /// itself to an eligible customer; the test store is told): `FREE_TRIAL` with its period.
    private var nextIntroductoryOffer: (discountType: String, period: String)?
    /// Transactions bought, by id, and whether each was finished.
    public private(set) var bought: [StoreTransaction] = []
    public private(set) var finished: Set<String> = []
    /// The original transaction of each subscription bought, the last one last.
    private var originals: [String] = []
    /// Pending Ask to Buy requests, by id: the product each would buy.
    private var askToBuyRequests: [String: String] = [:]
    private let updates: AsyncStream<StoreTransaction>
    private let updatesContinuation: AsyncStream<StoreTransaction>.Continuation

    public init(serverURL: URL, adminKey: String, session: URLSession = .shared, notifiesEntitle: Bool = true) {
        self.serverURL = serverURL
        self.notifiesEntitle = notifiesEntitle
        self.adminKey = adminKey
        self.session = session
        (updates, updatesContinuation) = AsyncStream.makeStream(of: StoreTransaction.self)
    }

    /// What the next purchase does, and the introductory offer the store applies to it.
    public func setNext(_ purchase: NextPurchase, introductoryOffer: (discountType: String, period: String)? = nil) {
        next = purchase
        nextIntroductoryOffer = introductoryOffer
    }

    public func purchase(productId: String, appAccountToken: UUID, offer: SignedPromotionalOffer?) async throws -> StorePurchaseOutcome {
        let what = next
        next = .buy
        guard what != .userCancels else { return .userCancelled }
        var body: [String: Any] = [
            "productId": productId, "appAccountToken": appAccountToken.uuidString.lowercased(), "deliver": notifiesEntitle,
        ]
        switch offer {
        case .jws(let identifier, let jws)?:
            body["offer"] = ["type": "promotional", "id": identifier, "jws": jws]
        case .v1(let identifier, let keyIdentifier, let nonce, let signature, let timestamp)?:
            body["offer"] = [
                "type": "promotional", "id": identifier, "keyIdentifier": keyIdentifier, "nonce": nonce.uuidString.lowercased(),
                "timestamp": timestamp, "signature": signature.base64EncodedString(),
            ]
        case nil:
            if let intro = nextIntroductoryOffer {
                body["offer"] = ["type": "introductory", "discountType": intro.discountType, "period": intro.period]
            }
        }
        nextIntroductoryOffer = nil
        if what == .askToBuy { body["askToBuy"] = true }
        if case .changePlan(let change) = what {
            guard let original = originals.last else {
                throw StorePurchaseError(reason: "noSubscription", message: "no subscription bought to change the plan of")
            }
            let answer = try await post(
                "/v1/test-store/apple/subscriptions/\(original)/\(change)", ["productId": productId, "deliver": notifiesEntitle])
            let transaction = try Self.transaction(answer, productId: productId)
            bought.append(transaction)
            return .purchased(transaction)
        }
        let answer = try await post("/v1/test-store/apple/purchases", body)
        if let request = (answer["askToBuy"] as? [String: Any])?["requestId"] as? String {
            askToBuyRequests[request] = productId
            return .pending
        }
        let transaction = try Self.transaction(answer, productId: productId)
        bought.append(transaction)
        if let original = answer["originalTransactionId"] as? String, answer["signedRenewalInfo"] != nil { originals.append(original) }
        return .purchased(transaction)
    }

    /// A parent approves the pending Ask to Buy request: the test store makes the purchase, and
    /// the device hears of it through `transactionUpdates()`, as from `Transaction.updates`.
    public func approveAskToBuy() async throws {
        guard let (request, productId) = askToBuyRequests.min(by: { $0.key < $1.key }) else {
            throw StorePurchaseError(reason: "noRequest", message: "no Ask to Buy request is pending")
        }
        askToBuyRequests[request] = nil
        let answer = try await post("/v1/test-store/apple/ask-to-buy/\(request)/approve", [:])
        let transaction = try Self.transaction(answer, productId: productId)
        bought.append(transaction)
        updatesContinuation.yield(transaction)
    }

    public func finish(_ transaction: StoreTransaction) async { finished.insert(transaction.transactionId) }

    public func unfinishedTransactions() async -> [StoreTransaction] { bought.filter { !finished.contains($0.transactionId) } }

    /// Every transaction bought through this purchaser (the test store keeps no device of its
    /// own to sync with).
    public func restore() async throws -> [StoreTransaction] { bought }

    public nonisolated func transactionUpdates() -> AsyncStream<StoreTransaction> { updates }

    /// The test store's app transaction for the customer (the same download each time, signed anew).
    public func appTransaction(appAccountToken: UUID) async throws -> String? {
        let answer = try await post("/v1/test-store/apple/app-transactions", ["appAccountToken": appAccountToken.uuidString.lowercased()])
        guard let signed = answer["signedAppTransaction"] as? String else {
            throw StorePurchaseError(reason: "unknown", message: "the test store's answer has no signed app transaction")
        }
        return signed
    }

    // MARK: - HTTP

    private static func transaction(_ answer: [String: Any], productId: String) throws -> StoreTransaction {
        guard let id = answer["transactionId"] as? String, let jws = answer["signedTransaction"] as? String else {
            throw StorePurchaseError(reason: "unknown", message: "the test store's answer has no signed transaction")
        }
        return StoreTransaction(
            transactionId: id, productId: productId, jwsRepresentation: jws, signedRenewalInfo: answer["signedRenewalInfo"] as? String)
    }

    private func post(_ path: String, _ body: [String: Any]) async throws -> [String: Any] {
        var request = URLRequest(url: serverURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("Bearer \(adminKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let answer = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]  // not JSON: reported below by status
        guard status == 200 else {
            let error = answer["error"] as? [String: Any]
            // The App Store's refusal of an offer, by StoreKit's name (`invalidOfferSignature`, …).
            let reason = error?["storeKitError"] as? String ?? error?["code"] as? String ?? "HTTP_\(status)"
            throw StorePurchaseError(reason: reason, message: error?["message"] as? String ?? "")
        }
        return answer
    }
}
