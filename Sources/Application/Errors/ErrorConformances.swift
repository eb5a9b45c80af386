import AppStore
import AppStoreAPI
import Entitlements
import GooglePlay
package import JSON

/// A verdict that refuses the data: 422 `VERIFICATION_FAILED` (the App Store stops redelivering a
/// notification), or 503 `RETRYABLE_VERIFICATION_FAILURE` when it may succeed later (no root
/// configured yet, OCSP unreachable).
extension VerificationFailure: HTTPStatusError {
    package var httpStatus: Int { status == .retryableVerificationFailure ? 503 : 422 }
    package var code: String { status == .retryableVerificationFailure ? "RETRYABLE_VERIFICATION_FAILURE" : "VERIFICATION_FAILED" }
    package var message: String { reason }
    package var details: JSONObject { ["status": .string(status.rawValue)] }
}

/// Verified data that cannot become facts.
extension FactsRefusal: HTTPStatusError {
    package var httpStatus: Int {
        if case .nestedItemInvalid(let failure) = self { return failure.status == .retryableVerificationFailure ? 503 : 422 }
        return 422
    }
    package var code: String {
        if case .nestedItemInvalid(let failure) = self { return failure.code }
        return "VERIFICATION_FAILED"
    }
    package var message: String {
        switch self {
        case .incomplete(let reason): reason
        case .nestedItemInvalid(let failure): failure.reason
        case .mismatchedRenewalInfo: "the renewal info belongs to another subscription"
        }
    }
    package var details: JSONObject {
        if case .nestedItemInvalid(let failure) = self { return failure.details }
        return ["status": .string(VerificationStatus.invalidJWTFormat.rawValue)]
    }
}

/// Apple's trouble as our answer: retryable → 503 with `Retry-After`; a final 404 or 409 (Apple
/// does not know, or already has, the message, image, transaction … the caller named) → 404
/// `NOT_FOUND` or 409 `CONFLICT`, since nothing failed upstream; otherwise 502 — each with Apple's
/// details.
extension AppStoreAPIError: HTTPStatusError {
    package var httpStatus: Int { answer.status }
    package var code: String { answer.code }
    /// The one decision of status and code.
    private var answer: (status: Int, code: String) {
        if isRetryable { return (503, "APP_STORE_UNAVAILABLE") }
        guard case .api(let status, _, _, _, _) = self else { return (502, "APP_STORE_API_ERROR") }
        switch status {
        case 404: return (404, "NOT_FOUND")
        case 409: return (409, "CONFLICT")
        default: return (502, "APP_STORE_API_ERROR")
        }
    }
    package var message: String { description }
    package var details: JSONObject {
        var details: JSONObject = [:]
        if case .api(let status, let code, _, _, let environment) = self {
            details["appStoreStatus"] = .int(Int64(status))
            if let code { details["appStoreErrorCode"] = .int(code.rawValue) }
            details["environment"] = .string(environment)
        }
        return details
    }
}

/// Google's trouble as our answer: retryable → 503 (+ `Retry-After`; a Pub/Sub push is then
/// redelivered), an unknown purchase → 404, the rest 502 with Google's words.
extension GooglePlayAPIError: HTTPStatusError {
    package var httpStatus: Int {
        switch self {
        case .transport, .unavailable: 503
        case .notFound: 404
        case .auth, .api, .decoding: 502
        }
    }
    package var code: String {
        switch self {
        case .transport, .unavailable: "GOOGLE_PLAY_UNAVAILABLE"
        case .notFound: "PURCHASE_NOT_FOUND"
        case .auth: "GOOGLE_PLAY_AUTH_FAILED"
        case .api, .decoding: "GOOGLE_PLAY_API_ERROR"
        }
    }
    package var message: String { description }
}

/// A Pub/Sub push whose token does not prove it is Google's: 401, nothing stored.
extension PubSubPushVerifier.Refusal: HTTPStatusError {
    package var httpStatus: Int { 401 }
    package var code: String { "UNAUTHORIZED" }
    package var message: String { "the push is not authenticated: \(reason)" }
}
