import Instants
package import JSON

/// One-time purchases in the test store's App Store: bought (`ONE_TIME_CHARGE`), refunded
/// (`REFUND`), or asked to be (`CONSUMPTION_REQUEST`, then Apple's decision).
extension AppleStoreSimulation {
    package static func buyOnce(
        bundleId: String, environment: String, productId: String, kind: SimulatedApplePurchase.Kind, quantity: Int, price: Int64,
        currency: String, appAccountToken: String?, transactionId: String, now: Int64
    ) -> (SimulatedApplePurchase, Step) {
        let purchase = SimulatedApplePurchase(
            bundleId: bundleId, environment: environment, transactionId: transactionId, productId: productId, kind: kind,
            quantity: quantity, price: price, currency: currency, appAccountToken: appAccountToken, purchaseDate: now,
            revocationDate: nil)
        return (purchase, step(purchase, "ONE_TIME_CHARGE", at: now))
    }

    /// Apple refunds the purchase: `REFUND`, its transaction revoked.
    package static func refund(_ purchase: inout SimulatedApplePurchase, now: Int64) throws(Refusal) -> Step {
        guard purchase.revocationDate == nil else { throw Refusal("the transaction is refunded already") }
        purchase.revocationDate = now
        return step(purchase, "REFUND", at: now)
    }

    /// `CONSUMPTION_REQUEST` with the customer's reason, then Apple's decision a second later.
    package static func requestRefund(
        _ purchase: inout SimulatedApplePurchase, reason: String, granted: Bool, now: Int64
    ) throws(Refusal) -> [Step] {
        try checkRefundRequest(revoked: purchase.revocationDate != nil, reason: reason)
        var request = step(purchase, "CONSUMPTION_REQUEST", at: now)
        request.consumptionRequestReason = reason
        let decided = now + 1000
        guard granted else { return [request, step(purchase, "REFUND_DECLINED", at: decided)] }
        return [request, try refund(&purchase, now: decided)]
    }

    private static func step(_ purchase: SimulatedApplePurchase, _ type: String, at: Int64) -> Step {
        Step(
            at: at, originalTransactionId: purchase.transactionId, notificationType: type, subtype: nil,
            transaction: transaction(purchase, signedAt: at), renewalInfo: nil, status: nil)
    }

    /// The purchase's transaction (JWSTransactionDecodedPayload's fields).
    package static func transaction(_ purchase: SimulatedApplePurchase, signedAt: Int64) -> JSONObject {
        var payload: JSONObject = [
            "transactionId": .string(purchase.transactionId), "originalTransactionId": .string(purchase.transactionId),
            "bundleId": .string(purchase.bundleId), "productId": .string(purchase.productId),
            "purchaseDate": .int(purchase.purchaseDate), "originalPurchaseDate": .int(purchase.purchaseDate),
            "quantity": .int(Int64(purchase.quantity)), "type": .string(purchase.kind.rawValue), "inAppOwnershipType": "PURCHASED",
            "signedDate": .int(signedAt), "environment": .string(purchase.environment), "transactionReason": "PURCHASE",
            "storefront": "USA", "storefrontId": "143441", "price": .int(purchase.price), "currency": .string(purchase.currency),
        ]
        if let token = purchase.appAccountToken { payload["appAccountToken"] = .string(token) }
        if let revoked = purchase.revocationDate {
            payload["revocationDate"] = .int(revoked)
            payload["revocationReason"] = 0
        }
        return payload
    }
}
