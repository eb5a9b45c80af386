/// The statuses of docs/APP_STORE.md §3.2.
package enum VerificationStatus: String, Sendable, CaseIterable {
    case invalidJWTFormat = "INVALID_JWT_FORMAT"
    case invalidChainLength = "INVALID_CHAIN_LENGTH"
    case invalidCertificate = "INVALID_CERTIFICATE"
    case invalidChain = "INVALID_CHAIN"
    case verificationFailure = "VERIFICATION_FAILURE"
    case retryableVerificationFailure = "RETRYABLE_VERIFICATION_FAILURE"
    case invalidAppIdentifier = "INVALID_APP_IDENTIFIER"
    case invalidEnvironment = "INVALID_ENVIRONMENT"
}

/// A failed verification: the status and a sentence saying which check failed and why
/// (e.g. "leaf certificate expired at the effective date"), for logs and error messages.
package struct VerificationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package let status: VerificationStatus
    package let reason: String

    package init(_ status: VerificationStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    package var description: String { "\(status.rawValue): \(reason)" }
}

/// The outcome of a verification: a value, never a throw.
package enum VerificationResult<Payload: Sendable>: Sendable {
    case valid(Payload)
    case invalid(VerificationFailure)

    package var payload: Payload? { if case .valid(let payload) = self { payload } else { nil } }
    package var failure: VerificationFailure? { if case .invalid(let failure) = self { failure } else { nil } }

    /// `VALID` or the failure's status name.
    package var statusName: String { failure?.status.rawValue ?? "VALID" }
}
