import AppStore
import Foundation

extension VerificationService {
    /// The verifier for the environment `jws` claims (or `environment`), or why there is none.
    func verifier(for jws: String, kind: SignedPayloadKind,
                  environment: String? = nil) -> Result<(String, SignedDataVerifier), VerificationFailure> {
        guard let name = environment ?? SignedPayloadInspection.claimedEnvironment(jws, kind: kind) else {
            return .failure(VerificationFailure(.invalidJWTFormat,
                                                SignedPayloadInspection.formatProblem(jws) ?? "the payload names no environment"))
        }
        guard app.environments.contains(name) else {
            return .failure(VerificationFailure(.invalidEnvironment, "environment \(name) is not enabled for app \(app.id)"))
        }
        guard let verifier = verifiers[name] else {
            // A deployment problem, not bad data: retryable, so the App Store redelivers once fixed.
            return .failure(VerificationFailure(.retryableVerificationFailure,
                                                "no trusted root certificate is configured (run entitle fetch-apple-roots)"))
        }
        return .success((name, verifier))
    }

    /// A verified notification and its verified nested items, with the environment that decided.
    /// `environment`, when the caller already read the claim, saves decoding the payload again.
    public func verifiedNotification(_ jws: String,
                                     environment: String? = nil) -> (environment: String?, result: VerificationResult<VerifiedNotification>) {
        switch verifier(for: jws, kind: .notification, environment: environment) {
        case .failure(let failure): return (nil, .invalid(failure))
        case .success(let (name, verifier)): return (name, verifier.verifyNotificationAndContents(jws))
        }
    }

    public func verifiedTransaction(_ jws: String,
                                    environment: String? = nil) -> (environment: String?, result: VerificationResult<JWSTransactionDecodedPayload>) {
        switch verifier(for: jws, kind: .transaction, environment: environment) {
        case .failure(let failure): return (nil, .invalid(failure))
        case .success(let (name, verifier)): return (name, verifier.verifyTransaction(jws))
        }
    }

    public func verifiedRenewalInfo(_ jws: String,
                                    environment: String? = nil) -> (environment: String?, result: VerificationResult<JWSRenewalInfoDecodedPayload>) {
        switch verifier(for: jws, kind: .renewalInfo, environment: environment) {
        case .failure(let failure): return (nil, .invalid(failure))
        case .success(let (name, verifier)): return (name, verifier.verifyRenewalInfo(jws))
        }
    }
}
