public import Foundation

/// Purchases through the client (docs/SWIFT_CLIENT.md, "Purchases"): an offer is signed by Entitle
/// before anything is bought, and a purchase is never made at the regular price in its place;
/// every transaction is posted to Entitle and finished only once Entitle has stored it; one that
/// cannot be posted is kept on disk and posted later.
extension EntitleClient {
    /// What a purchase came to.
    public enum PurchaseResult: Sendable, Equatable {
        /// Bought, stored by Entitle, finished: the customer now.
        case purchased(StoreTransaction, CustomerState)
        /// Bought, but Entitle could not be reached: kept on disk, not finished, posted by
        /// `postPendingTransactions(using:)` (and by every later purchase, restore or listener).
        case queued(StoreTransaction)
        /// Waiting for approval (Ask to Buy): it arrives through the store's updates.
        case pending
        case userCancelled
    }

    /// Buys `productId`, with the catalog offer `offerId` when given. The offer is signed by
    /// Entitle first; if Entitle refuses (`EntitleError` with `OFFER_UNAVAILABLE`, say) or cannot
    /// be reached, this throws and nothing is bought — never the regular price instead. A
    /// transaction StoreKit could not verify throws `UnverifiedTransaction`.
    public func purchase(
        _ productId: String, offer offerId: String? = nil, using store: any StorePurchasing
    ) async throws
        -> PurchaseResult
    {
        var offer: SignedPromotionalOffer?
        if let offerId { offer = try await signOffer(productId: productId, offerId: offerId) }
        switch try await store.purchase(productId: productId, appAccountToken: configuration.appAccountToken, offer: offer) {
        case .purchased(let transaction): return try await deliver(transaction, using: store)
        case .pending: return .pending
        case .userCancelled: return .userCancelled
        case .unverified(let reason): throw UnverifiedTransaction(reason: reason)
        }
    }

    /// Posts a transaction and finishes it once Entitle has stored it; keeps it on disk when
    /// Entitle cannot be reached (or answers 5xx). Any other refusal throws and leaves it
    /// unfinished, so the store delivers it again.
    public func deliver(_ transaction: StoreTransaction, using store: any StorePurchasing) async throws -> PurchaseResult {
        let state: CustomerState
        do { state = try await post(transaction) } catch is EntitleUnreachable {
            try pending.add(transaction)
            return .queued(transaction)
        }
        await store.finish(transaction)
        try pending.remove(transaction.transactionId)
        return .purchased(transaction, state)
    }

    /// Posts what is kept on disk and what the store holds unfinished; answers how many Entitle
    /// stored. Stops at the first that cannot be posted (Entitle still away), keeping the rest.
    @discardableResult
    public func postPendingTransactions(using store: any StorePurchasing) async throws -> Int {
        var queued = pending.all
        for transaction in await store.unfinishedTransactions()
        where !queued.contains(where: { $0.transactionId == transaction.transactionId }) {
            queued.append(transaction)
        }
        var posted = 0
        for transaction in queued {
            guard case .purchased = try await deliver(transaction, using: store) else { break }
            posted += 1
        }
        return posted
    }

    /// Restores purchases: the store syncs (`AppStore.sync()`), every current transaction is
    /// posted, and the customer is read again.
    public func restore(using store: any StorePurchasing) async throws -> CustomerState {
        try await postPendingTransactions(using: store)
        for transaction in try await store.restore() {
            if case .queued = try await deliver(transaction, using: store) { break }
        }
        return try await customer()
    }

    /// Posts the store's transactions as they come (`Transaction.updates`), after what is pending
    /// from before (`Transaction.unfinished`, the queue on disk) and the app's download
    /// (`postAppTransaction(using:)`, once); runs until the task is cancelled.
    /// Start it at launch. `handle` hears each outcome (an error is reported, not thrown: the
    /// listener goes on).
    public func listen(
        using store: any StorePurchasing, handle: @escaping @Sendable (Result<PurchaseResult, any Error>) -> Void = { _ in }
    ) -> Task<Void, Never> {
        Task {
            do { _ = try await postPendingTransactions(using: store) } catch { handle(.failure(error)) }
            do { try await postAppTransaction(using: store) } catch { handle(.failure(error)) }
            for await transaction in store.transactionUpdates() {
                guard !Task.isCancelled else { break }
                do { handle(.success(try await deliver(transaction, using: store))) } catch { handle(.failure(error)) }
            }
        }
    }

    // MARK: - Offers

    /// Entitle's signature of a catalog offer for this customer, as the store takes it: the JWS
    /// when Entitle gives one, else the v1 signature.
    func signOffer(productId: String, offerId: String) async throws -> SignedPromotionalOffer {
        struct Answer: Decodable {
            var offerIdentifier: String
            var keyIdentifier: String
            var nonce: UUID
            var timestamp: Int
            var signature: String
            var jws: String?
        }
        let body = try await call(
            "POST", "/v1/promotional-offers/sign",
            ["productId": productId, "offerId": offerId, "appAccountToken": configuration.appAccountToken.uuidString.lowercased()])
        let answer = try JSONDecoder().decode(Answer.self, from: body)
        if let jws = answer.jws { return .jws(offerIdentifier: answer.offerIdentifier, compactJWS: jws) }
        guard let signature = Data(base64Encoded: answer.signature) else { throw UntrustedAnswer.malformedSignature }
        return .v1(
            offerIdentifier: answer.offerIdentifier, keyIdentifier: answer.keyIdentifier, nonce: answer.nonce, signature: signature,
            timestamp: answer.timestamp)
    }

    /// Whether the customer may have each product's introductory offer, with the JWS StoreKit
    /// takes as `Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)` when Entitle
    /// gives one.
    public func introductoryEligibility(productIds: [String]) async throws -> [String: IntroductoryEligibility] {
        var found: [String: IntroductoryEligibility] = [:]
        for productId in productIds {
            let body = try await call(
                "POST", "/v1/introductory-offers/eligibility",
                ["productId": productId, "appAccountToken": configuration.appAccountToken.uuidString.lowercased()])
            found[productId] = try JSONDecoder().decode(IntroductoryEligibility.self, from: body)
        }
        return found
    }
}

/// Entitle's decision on an introductory offer for one product.
public struct IntroductoryEligibility: Sendable, Equatable, Decodable {
    public var eligible: Bool
    /// Why not (`ALREADY_SUBSCRIBED_TO_GROUP`, …).
    public var reason: String?
    /// The signed decision for StoreKit (with an issuer ID configured).
    public var jws: String?
}

/// StoreKit could not verify the transaction; nothing was delivered or posted.
public struct UnverifiedTransaction: Error, Sendable, Equatable {
    public var reason: String
}
