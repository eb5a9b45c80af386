#if canImport(StoreKit)
public import Foundation
public import StoreKit

/// `StorePurchasing` with StoreKit 2, and nothing but StoreKit's calls (docs/SWIFT_CLIENT.md lists
/// them): every decision — which offer, when to finish, what to post — is `EntitleClient`'s.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public struct StoreKitPurchaser: StorePurchasing {
    public init() {}

    public func purchase(productId: String, appAccountToken: UUID, offer: SignedPromotionalOffer?) async throws -> StorePurchaseOutcome {
        guard let product = try await Product.products(for: [productId]).first else {
            throw StorePurchaseError(reason: "productUnavailable", message: "the App Store has no product \(productId)")
        }
        var options: Set<Product.PurchaseOption> = [.appAccountToken(appAccountToken)]
        switch offer {
        case .jws(let offerIdentifier, let compactJWS)?:
            options.insert(.promotionalOffer(offerIdentifier, compactJWS: compactJWS))
        case .v1(let offerIdentifier, let keyIdentifier, let nonce, let signature, let timestamp)?:
            options.insert(
                .promotionalOffer(offerID: offerIdentifier, keyID: keyIdentifier, nonce: nonce, signature: signature, timestamp: timestamp))
        case nil:
            break
        }
        let result: Product.PurchaseResult
        do { result = try await product.purchase(options: options) } catch let error as Product.PurchaseError {
            throw StorePurchaseError(reason: "\(error)", message: error.localizedDescription)
        }
        switch result {
        case .success(let verification):
            guard case .verified(let transaction) = verification else {
                return .unverified(reason: Self.reason(verification))
            }
            return .purchased(await Self.storeTransaction(transaction, jws: verification.jwsRepresentation))
        case .pending:
            return .pending
        case .userCancelled:
            return .userCancelled
        @unknown default:
            return .unverified(reason: "an outcome this version of EntitleKit does not know")
        }
    }

    public func finish(_ transaction: StoreTransaction) async {
        for await case .verified(let unfinished) in Transaction.unfinished where String(unfinished.id) == transaction.transactionId {
            await unfinished.finish()
        }
    }

    public func unfinishedTransactions() async -> [StoreTransaction] {
        var found: [StoreTransaction] = []
        for await verification in Transaction.unfinished {
            guard case .verified(let transaction) = verification else { continue }
            found.append(await Self.storeTransaction(transaction, jws: verification.jwsRepresentation))
        }
        return found
    }

    public func restore() async throws -> [StoreTransaction] {
        try await AppStore.sync()
        var found: [StoreTransaction] = []
        for await verification in Transaction.currentEntitlements {
            guard case .verified(let transaction) = verification else { continue }
            found.append(await Self.storeTransaction(transaction, jws: verification.jwsRepresentation))
        }
        return found
    }

    public func transactionUpdates() -> AsyncStream<StoreTransaction> {
        AsyncStream { continuation in
            let listener = Task {
                for await verification in Transaction.updates {
                    guard case .verified(let transaction) = verification else { continue }
                    continuation.yield(await Self.storeTransaction(transaction, jws: verification.jwsRepresentation))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in listener.cancel() }
        }
    }

    public func appTransaction(appAccountToken: UUID) async throws -> String? {
        guard #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *) else { return nil }
        return try await AppTransaction.shared.jwsRepresentation
    }

    /// The transaction as EntitleKit posts it: its JWS, and a subscription's signed renewal info
    /// (from its group's statuses, when StoreKit has them).
    private static func storeTransaction(_ transaction: Transaction, jws: String) async -> StoreTransaction {
        var renewalInfo: String?
        // Statuses StoreKit cannot give: the transaction is posted without its renewal info.
        if let groupID = transaction.subscriptionGroupID, let statuses = try? await Product.SubscriptionInfo.status(for: groupID) {
            renewalInfo =
                statuses.first { status in
                    if case .verified(let current) = status.transaction { return current.originalID == transaction.originalID }
                    return false
                }?.renewalInfo.jwsRepresentation
        }
        return StoreTransaction(
            transactionId: String(transaction.id), productId: transaction.productID, jwsRepresentation: jws, signedRenewalInfo: renewalInfo)
    }

    private static func reason(_ verification: VerificationResult<Transaction>) -> String {
        if case .unverified(_, let error) = verification { return "\(error)" }
        return "verified"
    }
}
#endif
