import AppStore
import Entitlements

/// The customer an offer request names, as far as its caller may name them.
///
/// A client key is shipped inside the app, so anyone has it: if a bare `transactionId` named the
/// customer, the answer (`ALREADY_SUBSCRIBED_TO_GROUP`, an environment, `NOT_ELIGIBLE`) would tell
/// anyone whether a guessed id exists. With a client key a transaction names the customer only
/// when the app proves it holds it (StoreKit's signed transaction, verified here) or when it is
/// already linked to the `appAccountToken` sent with it. A bare id stays a server-key lookup.
struct OfferCustomer {
    var appAccountToken: String?
    var transactionId: String?
    /// Where the purchase will happen: the request's, else the proof's, else as the history says.
    var environment: AppStoreEnvironment

    static func identify(
        appAccountToken: String?, transactionId: String?, signedTransaction: String?, trustedCaller: Bool,
        requestedEnvironment: AppStoreEnvironment?, history: SubscriberQueries, verification: VerificationService
    ) throws -> OfferCustomer {
        let (token, id, proven) = try named(
            appAccountToken: appAccountToken, transactionId: transactionId, signedTransaction: signedTransaction,
            trustedCaller: trustedCaller, history: history, verification: verification)
        let environment = try history.purchaseEnvironment(
            requested: requestedEnvironment ?? proven, appAccountToken: token, transactionId: id)
        return OfferCustomer(appAccountToken: token, transactionId: id, environment: environment)
    }

    /// The token and transaction the caller may name, and the environment a proof was verified in.
    private static func named(
        appAccountToken: String?, transactionId: String?, signedTransaction: String?, trustedCaller: Bool,
        history: SubscriberQueries, verification: VerificationService
    ) throws -> (String?, String?, AppStoreEnvironment?) {
        let token = try AppAccountToken.validated(appAccountToken)
        if let signedTransaction {
            let (payload, environment) = try verified(signedTransaction, verification: verification)
            if let transactionId, transactionId != payload.transactionId, transactionId != payload.originalTransactionId {
                throw ServiceError.badRequest("transactionId is not the signedTransaction's transaction")
            }
            return (token, payload.transactionId, environment)
        }
        guard let transactionId, !trustedCaller else {
            return (token, transactionId, nil)
        }
        guard let token, try history.isLinked(transactionId: transactionId, to: token) else {
            throw ServiceError(
                status: 403, code: "TRANSACTION_NOT_PROVEN",
                message: "with a client key, send StoreKit's signedTransaction for this transactionId, or the appAccountToken "
                    + "it is linked to; looking up a bare transactionId needs a server key")
        }
        return (token, transactionId, nil)
    }

    private static func verified(
        _ jws: String, verification: VerificationService
    ) throws -> (JWSTransactionDecodedPayload, AppStoreEnvironment) {
        let result = verification.verifiedTransaction(try SignedPayload(jws))
        guard case .valid(let verified) = result else { throw result.failure! }
        return verified
    }
}

extension SubscriberQueries {
    /// Whether `transactionId` (a transaction or original transaction id) belongs to a
    /// subscription linked to `appAccountToken`, in any enabled environment.
    func isLinked(transactionId: String, to appAccountToken: String) throws -> Bool {
        try app.environments.contains { environment in
            guard let original = try subscription(of: transactionId, in: environment) else { return false }
            let facts = try store.facts(appId: app.id, environment: environment.rawValue, originalTransactionId: original)
            return facts?.appAccountToken == appAccountToken
        }
    }
}
