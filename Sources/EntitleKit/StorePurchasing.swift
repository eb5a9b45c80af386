public import Foundation

/// What the App Store does for the client, and nothing more — buy, finish, list — so every
/// decision stays in `EntitleClient` (docs/SWIFT_CLIENT.md). On Apple platforms `StoreKitPurchaser`
/// calls StoreKit 2; `TestStorePurchaser` calls a test deployment's test store, so the client's
/// purchase path runs, and is tested, on Linux too.
public protocol StorePurchasing: Sendable {
    /// Buys `productId` for the customer `appAccountToken` (always set on the purchase), with the
    /// signed promotional offer when one is given.
    func purchase(productId: String, appAccountToken: UUID, offer: SignedPromotionalOffer?) async throws -> StorePurchaseOutcome
    /// Tells the store the app has delivered the transaction (`Transaction.finish()`).
    func finish(_ transaction: StoreTransaction) async
    /// Transactions the store delivered that the app has not finished (`Transaction.unfinished`).
    func unfinishedTransactions() async -> [StoreTransaction]
    /// The customer's transactions after syncing with the store (`AppStore.sync()`, then
    /// `Transaction.currentEntitlements`).
    func restore() async throws -> [StoreTransaction]
    /// Transactions as they arrive outside a purchase (`Transaction.updates`): renewals, an Ask to
    /// Buy approval, a purchase on another device, a refund.
    func transactionUpdates() -> AsyncStream<StoreTransaction>
    /// The app's signed app transaction (`AppTransaction.shared`'s `jwsRepresentation`), nil where
    /// the store has none (before iOS 16). `appAccountToken` names the customer to a test store,
    /// which tells its devices apart by it; StoreKit knows its Apple Account without it.
    func appTransaction(appAccountToken: UUID) async throws -> String?
}

/// A transaction as the store gives it: its signed form is what Entitle verifies.
public struct StoreTransaction: Sendable, Equatable, Codable {
    public var transactionId: String
    public var productId: String
    /// `Transaction.jwsRepresentation`.
    public var jwsRepresentation: String
    /// A subscription's signed renewal info, when the store gives it (`Product.SubscriptionInfo.Status`).
    public var signedRenewalInfo: String?

    public init(transactionId: String, productId: String, jwsRepresentation: String, signedRenewalInfo: String? = nil) {
        self.transactionId = transactionId
        self.productId = productId
        self.jwsRepresentation = jwsRepresentation
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// A promotional offer Entitle signed, as the store takes it.
public enum SignedPromotionalOffer: Sendable, Equatable {
    /// `Product.PurchaseOption.promotionalOffer(_:compactJWS:)` (the app's key has an issuer ID).
    case jws(offerIdentifier: String, compactJWS: String)
    /// `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`.
    case v1(offerIdentifier: String, keyIdentifier: String, nonce: UUID, signature: Data, timestamp: Int)
}

/// What a purchase came to at the store.
public enum StorePurchaseOutcome: Sendable, Equatable {
    case purchased(StoreTransaction)
    /// Waiting for approval (Ask to Buy, a payment that needs action): the transaction will come
    /// through `transactionUpdates()`.
    case pending
    case userCancelled
    /// StoreKit could not verify the transaction (`VerificationResult.unverified`): nothing to deliver.
    case unverified(reason: String)
}

/// The store refused the purchase (StoreKit's `Product.PurchaseError`, or the test store's
/// `OFFER_REFUSED` with the same name): `reason` is its case, such as `invalidOfferSignature`.
public struct StorePurchaseError: Error, Sendable, Equatable {
    public var reason: String
    public var message: String

    public init(reason: String, message: String) {
        self.reason = reason
        self.message = message
    }
}
