import Crypto
import JSON

/// Reading what a signed payload *claims* before it is verified: only to choose which verifier
/// (environment) or which operation (kind, for the CLI) to use. Nothing read here is trusted.
public enum SignedPayloadInspection {
    /// The payload object, without decoding the header or checking anything.
    public static func unverifiedPayload(_ jws: String) -> JSONObject? {
        guard let segments = try? JWSSegments(trimmingASCIIWhitespace(jws)) else { return nil }
        return try? segments.decodePayload().1
    }

    /// Why the input is not a readable JWS payload, or nil when it is.
    public static func formatProblem(_ jws: String) -> String? {
        do {
            _ = try JWSSegments(trimmingASCIIWhitespace(jws)).decodePayload()
            return nil
        } catch {
            return error.description
        }
    }

    /// The environment the payload claims (for notifications, from its identity source; for app
    /// transactions, `receiptType`).
    public static func claimedEnvironment(_ jws: String, kind: SignedPayloadKind) -> String? {
        guard let payload = unverifiedPayload(jws) else { return nil }
        switch kind {
        case .notification: return (try? ResponseBodyV2DecodedPayload(decoding: payload))?.identity.environment
        case .appTransaction: return payload["receiptType"]?.stringValue
        case .transaction, .renewalInfo, .realtimeRequest: return payload["environment"]?.stringValue
        }
    }

    /// The kind the payload looks like (the CLI's convenience; the HTTP API never guesses, P-08).
    public static func likelyKind(_ jws: String) -> SignedPayloadKind? {
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
