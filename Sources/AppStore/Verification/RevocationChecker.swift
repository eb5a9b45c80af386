package import Crypto
package import Foundation

/// What a revocation check (OCSP) found for one certificate.
package enum RevocationStatus: Sendable, Equatable {
    case good
    /// Revoked, unknown, or a response that fails its checks: the chain is invalid.
    case notGood(String)
    /// The responder could not be reached or answered garbage at the HTTP level: try again later.
    case unavailable(String)
}

/// Checks whether a certificate has been revoked. Implementations block while they wait for the
/// network, so verifiers with online checks must never be called on an event loop.
package protocol RevocationChecker: Sendable {
    func status(of certificate: Certificate, issuer: Certificate, at now: Date) -> RevocationStatus
}
