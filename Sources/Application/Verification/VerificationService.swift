package import AppStore
package import Crypto
package import Foundation
package import JSON
import Synchronization

/// The outcome of verifying one signed item for an app: the kind, the environment whose
/// verifier decided, and either the decoded payload or the failure.
package struct VerificationOutcome: Sendable {
    package let kind: SignedPayloadKind
    package let environment: AppStoreEnvironment?
    package let result: VerificationResult<JSONObject>
    /// For a valid notification: each nested item's verdict, by member name
    /// (`signedTransactionInfo` …), and the decoded payloads of those that verified.
    package var nested: [(kind: SignedPayloadKind, member: String, answerMember: String, result: VerificationResult<JSONObject>)] = []

    /// `{"kind", "status", "environment", "payload"|"reason", …nested}` as `entitle verify`
    /// prints it and `POST /v1/verify` answers a valid item.
    package var summary: JSONObject {
        var object: JSONObject = ["kind": .string(kind.rawValue), "status": .string(result.statusName)]
        if let environment { object["environment"] = .string(environment.rawValue) }
        if let payload = result.payload { object["payload"] = .object(payload) }
        if let failure = result.failure { object["reason"] = .string(failure.reason) }
        if !nested.isEmpty {
            var verdicts = JSONObject()
            for item in nested {
                if let payload = item.result.payload { object[item.answerMember] = .object(payload) }
                var verdict: JSONObject = ["status": .string(item.result.statusName)]
                if let failure = item.result.failure { verdict["reason"] = .string(failure.reason) }
                verdicts[item.member] = .object(verdict)
            }
            object["nestedVerdicts"] = .object(verdicts)
        }
        return object
    }
}

/// One verifier per enabled environment of an app (P-06). The environment a payload claims picks
/// the verifier, which then checks everything, including that claim. Roots can be replaced while
/// serving (`replaceRoots`, on SIGHUP).
package final class VerificationService: Sendable {
    package let app: AppConfiguration
    private let revocationChecker: (any RevocationChecker)?
    private let clock: @Sendable () -> Date
    private let verifiers: Mutex<[AppStoreEnvironment: SignedDataVerifier]>

    package enum SetupError: Error, CustomStringConvertible {
        case verifier(environment: String, SignedDataVerifier.ConfigurationError)
        package var description: String {
            switch self {
            case .verifier(let environment, let error): "\(environment) verifier: \(error)"
            }
        }
    }

    /// Signed environments get a verifier only when roots are configured; without them
    /// verification of that environment answers that no root is configured.
    package init(
        app: AppConfiguration, revocationChecker: (any RevocationChecker)? = nil,
        clock: @escaping @Sendable () -> Date
    ) throws {
        self.app = app
        self.revocationChecker = revocationChecker
        self.clock = clock
        verifiers = Mutex(
            try Self.makeVerifiers(
                app, roots: app.verification.rootCertificates,
                revocationChecker: revocationChecker, clock: clock))
    }

    private static func makeVerifiers(
        _ app: AppConfiguration, roots: [Certificate], revocationChecker: (any RevocationChecker)?,
        clock: @escaping @Sendable () -> Date
    ) throws -> [AppStoreEnvironment: SignedDataVerifier] {
        var verifiers: [AppStoreEnvironment: SignedDataVerifier] = [:]
        let cache = VerifiedChainCache()
        for environment in app.environments where !environment.isSigned || !roots.isEmpty {
            let configuration = SignedDataVerifier.Configuration(
                rootCertificates: environment.isSigned ? roots : [], bundleId: app.bundleId,
                appAppleId: app.appAppleId, environment: environment,
                onlineChecks: environment.isSigned && app.verification.onlineChecks)
            do {
                verifiers[environment] = try SignedDataVerifier(
                    configuration, revocationChecker: revocationChecker,
                    chainCache: cache, clock: clock)
            } catch let error as SignedDataVerifier.ConfigurationError {
                throw SetupError.verifier(environment: environment.rawValue, error)
            }
        }
        return verifiers
    }

    /// Trusts `roots` from now on (the verified-chain cache starts empty).
    package func replaceRoots(_ roots: [Certificate]) throws {
        let fresh = try Self.makeVerifiers(app, roots: roots, revocationChecker: revocationChecker, clock: clock)
        verifiers.withLock { $0 = fresh }
    }

    /// The roots trusted now (after any `replaceRoots`).
    package var trustedRoots: [Certificate] {
        verifiers.withLock { verifiers in
            verifiers.values.first { $0.configuration.environment.isSigned }?.configuration.rootCertificates ?? []
        }
    }

    /// Signed environments (Production, Sandbox) that have no trusted root: their data answers 503.
    package var environmentsMissingRoots: [AppStoreEnvironment] {
        let present = verifiers.withLock { Set($0.keys) }
        return app.environments.filter { $0.isSigned && !present.contains($0) }
    }

    /// Whether verification blocks on the network (OCSP).
    package var waitsOnNetwork: Bool { app.verification.onlineChecks }

    /// Runs work that verifies where it belongs: here (CPU only) or, when verification waits on
    /// OCSP, on the blocking pool; `overloaded` runs instead when the pool's queue is full.
    func schedule(_ work: @escaping @Sendable () -> Void, on pool: BlockingPool, overloaded: () -> Void) {
        if waitsOnNetwork { pool.submit(work, overloaded: overloaded) } else { work() }
    }

    /// The verifier for the environment `parsed` claims (or `environment`), or why there is none.
    package func verifier(
        for parsed: SignedPayload, kind: SignedPayloadKind,
        environment: AppStoreEnvironment? = nil
    ) -> Result<SignedDataVerifier, VerificationFailure> {
        guard let chosen = environment ?? parsed.claimedEnvironment(as: kind) else {
            return .failure(VerificationFailure(.invalidJWTFormat, "the payload names no environment"))
        }
        guard app.environments.contains(chosen) else {
            return .failure(VerificationFailure(.invalidEnvironment, "environment \(chosen.rawValue) is not enabled for app \(app.id)"))
        }
        guard let verifier = verifiers.withLock({ $0[chosen] }) else {
            // A deployment problem, not bad data: retryable, so the App Store redelivers once fixed.
            return .failure(
                VerificationFailure(
                    .retryableVerificationFailure,
                    "no trusted root certificate is configured (run entitle fetch-apple-roots)"))
        }
        return .success(verifier)
    }

    // MARK: - Typed verification (ingestion)

    /// A verified notification with its nested verdicts, and the environment that decided.
    package func verifiedNotification(
        _ parsed: SignedPayload,
        environment: AppStoreEnvironment? = nil
    ) -> VerificationResult<(VerifiedNotification, AppStoreEnvironment)> {
        typed(parsed, .notification, environment) { $0.verifyNotificationAndContents(parsed) }
    }

    package func verifiedTransaction(
        _ parsed: SignedPayload,
        environment: AppStoreEnvironment? = nil
    ) -> VerificationResult<(JWSTransactionDecodedPayload, AppStoreEnvironment)> {
        typed(parsed, .transaction, environment) { $0.verifyTransaction(parsed) }
    }

    package func verifiedRenewalInfo(
        _ parsed: SignedPayload,
        environment: AppStoreEnvironment? = nil
    ) -> VerificationResult<(JWSRenewalInfoDecodedPayload, AppStoreEnvironment)> {
        typed(parsed, .renewalInfo, environment) { $0.verifyRenewalInfo(parsed) }
    }

    package func verifiedAppTransaction(
        _ parsed: SignedPayload,
        environment: AppStoreEnvironment? = nil
    ) -> VerificationResult<(AppTransaction, AppStoreEnvironment)> {
        typed(parsed, .appTransaction, environment) { $0.verifyAppTransaction(parsed) }
    }

    /// A Retention Messaging realtime request, with the environment that decided.
    package func verifiedRealtimeRequest(
        _ parsed: SignedPayload
    ) -> VerificationResult<(DecodedRealtimeRequestBody, AppStoreEnvironment)> {
        typed(parsed, .realtimeRequest, nil) { $0.verifyRealtimeRequest(parsed) }
    }

    private func typed<Model>(
        _ parsed: SignedPayload, _ kind: SignedPayloadKind, _ environment: AppStoreEnvironment?,
        _ verify: (SignedDataVerifier) -> VerificationResult<Model>
    ) -> VerificationResult<(Model, AppStoreEnvironment)> {
        switch verifier(for: parsed, kind: kind, environment: environment) {
        case .failure(let failure): return .invalid(failure)
        case .success(let verifier):
            switch verify(verifier) {
            case .valid(let model): return .valid((model, verifier.configuration.environment))
            case .invalid(let failure): return .invalid(failure)
            }
        }
    }

    // MARK: - Any kind (POST /v1/verify, entitle verify)

    /// Verifies `jws` as `kind` with the verifier of `environment`, or of the environment the
    /// payload claims when nil. `effectiveDate` overrides the app's policy (re-verification, CLI).
    package func verify(
        _ jws: String, kind: SignedPayloadKind, environment: AppStoreEnvironment? = nil,
        effectiveDate: Date? = nil
    ) -> VerificationOutcome {
        let parsed: SignedPayload
        do { parsed = try SignedPayload(jws) } catch {
            return VerificationOutcome(kind: kind, environment: environment, result: .invalid(error))
        }
        let verifier: SignedDataVerifier
        switch self.verifier(for: parsed, kind: kind, environment: environment) {
        case .success(let chosen): verifier = chosen
        case .failure(let failure):
            return VerificationOutcome(
                kind: kind, environment: environment ?? parsed.claimedEnvironment(as: kind),
                result: .invalid(failure))
        }
        let environment = verifier.configuration.environment
        func known<Model: AppStoreModel>(_ result: VerificationResult<Model>) -> VerificationResult<JSONObject> {
            switch result {
            case .valid(let payload): .valid(payload.knownJSON)
            case .invalid(let failure): .invalid(failure)
            }
        }
        let result: VerificationResult<JSONObject>
        switch kind {
        case .notification:
            switch verifier.verifyNotificationAndContents(parsed, effectiveDate: effectiveDate) {
            case .invalid(let failure):
                return VerificationOutcome(kind: kind, environment: environment, result: .invalid(failure))
            case .valid(let verified):
                var outcome = VerificationOutcome(kind: kind, environment: environment, result: .valid(verified.notification.knownJSON))
                if let result = verified.transactionResult {
                    outcome.nested.append((.transaction, "signedTransactionInfo", "transactionInfo", known(result)))
                }
                if let result = verified.renewalInfoResult {
                    outcome.nested.append((.renewalInfo, "signedRenewalInfo", "renewalInfo", known(result)))
                }
                if let result = verified.appTransactionResult {
                    outcome.nested.append((.appTransaction, "signedAppTransactionInfo", "appTransactionInfo", known(result)))
                }
                return outcome
            }
        case .transaction: result = known(verifier.verifyTransaction(parsed, effectiveDate: effectiveDate))
        case .renewalInfo: result = known(verifier.verifyRenewalInfo(parsed, effectiveDate: effectiveDate))
        case .appTransaction: result = known(verifier.verifyAppTransaction(parsed, effectiveDate: effectiveDate))
        case .realtimeRequest: result = known(verifier.verifyRealtimeRequest(parsed, effectiveDate: effectiveDate))
        }
        return VerificationOutcome(kind: kind, environment: environment, result: result)
    }
}
