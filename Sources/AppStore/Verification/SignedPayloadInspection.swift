import Crypto
package import JSON

/// Reading what a signed payload *claims* before it is verified, for the CLI: which operation
/// (kind) to use. Nothing read here is trusted; routing uses `SignedPayload`.
package enum SignedPayloadInspection {
    /// The payload object, without checking anything (what `SignedPayload` reads).
    package static func unverifiedPayload(_ jws: String) -> JSONObject? { (try? SignedPayload(jws))?.payload }

    /// The kind the payload looks like (the CLI's convenience; the HTTP API never guesses, P-08).
    package static func likelyKind(_ jws: String) -> SignedPayloadKind? {
        guard let payload = unverifiedPayload(jws) else { return nil }
        if payload["notificationType"] != nil { return .notification }
        if payload["receiptType"] != nil { return .appTransaction }
        if payload["userLocale"] != nil && payload["requestIdentifier"] != nil { return .realtimeRequest }
        if payload["transactionId"] == nil && (payload["autoRenewStatus"] != nil || payload["autoRenewProductId"] != nil) {
            return .renewalInfo
        }
        return .transaction
    }
}
