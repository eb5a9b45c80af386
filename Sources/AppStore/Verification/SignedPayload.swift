package import Crypto
package import JSON

/// A compact JWS read once: its segments located and its payload decoded, not yet verified.
///
/// Routing needs what the payload *claims* (bundle ID, environment) before verification can pick
/// the verifier; the verifier needs the same segments and payload. Reading them once and handing
/// this value to both halves the base64 and JSON work on every notification.
package struct SignedPayload: Sendable {
    /// The JWS as received (trimmed), the form that is stored.
    package let text: String
    package let segments: JWSSegments
    package let payload: JSONObject

    /// Apple's JWS are a few KiB (headers with three certificates about 5 KiB); far larger input
    /// is refused before any decoding work.
    package static let maximumBytes = 256 * 1024
    package static let maximumHeaderBytes = 32 * 1024

    /// Fails with `INVALID_JWT_FORMAT` and the reason, as Apple's verifier does for unreadable input.
    package init(_ jws: String) throws(VerificationFailure) {
        let trimmed = trimmingASCIIWhitespace(jws)
        guard trimmed.utf8.count <= Self.maximumBytes else {
            throw VerificationFailure(.invalidJWTFormat, "the JWS exceeds \(Self.maximumBytes) bytes")
        }
        do {
            segments = try JWSSegments(trimmed)
            guard segments.header.count <= Self.maximumHeaderBytes else {
                throw VerificationFailure(.invalidJWTFormat, "the JWS header exceeds \(Self.maximumHeaderBytes) bytes")
            }
            payload = try segments.decodePayload().1
        } catch let error as JWSError {
            throw VerificationFailure(.invalidJWTFormat, error.description)
        } catch {
            throw error as! VerificationFailure  // the two throws above
        }
        text = trimmed.utf8.count == jws.utf8.count ? jws : String(trimmed)
    }

    /// The environment the payload claims for `kind` (notifications: their identity source; app
    /// transactions: `receiptType`). Unverified: only for choosing the verifier.
    package func claimedEnvironment(as kind: SignedPayloadKind) -> AppStoreEnvironment? {
        let name: String? =
            switch kind {
            case .notification: (try? ResponseBodyV2DecodedPayload(decoding: payload))?.identity.environment
            case .appTransaction: payload["receiptType"]?.stringValue
            case .transaction, .renewalInfo, .realtimeRequest: payload["environment"]?.stringValue
            }
        return name.map(AppStoreEnvironment.init(rawValue:))
    }

    /// The bundle ID a notification claims (unverified: only for choosing the app).
    package var claimedNotificationBundleId: String? {
        (try? ResponseBodyV2DecodedPayload(decoding: payload))?.identity.bundleId
    }
}
