import AppStore
import Crypto
import Foundation
import JSON

/// The outcome of verifying one signed item for an app: the kind, the environment whose
/// verifier decided, and either the decoded payload or the failure.
public struct VerificationOutcome: Sendable {
    public let kind: SignedPayloadKind
    public let environment: String?
    public let result: VerificationResult<JSONObject>
    /// For a notification, its verified nested items: `transactionInfo`, `renewalInfo`, `appTransactionInfo`.
    public var contents: JSONObject = [:]

    init(kind: SignedPayloadKind, environment: String?, result: VerificationResult<JSONObject>, contents: JSONObject = [:]) {
        self.kind = kind
        self.environment = environment
        self.result = result
        self.contents = contents
    }

    /// `{"kind", "status", "environment", "payload"}` as `entitle verify` prints it.
    public var summary: JSONObject {
        var object: JSONObject = ["kind": .string(kind.rawValue), "status": .string(result.statusName)]
        if let environment { object["environment"] = .string(environment) }
        if let payload = result.payload { object["payload"] = .object(payload) }
        for member in contents.members { object[member.key] = member.value }
        if let failure = result.failure { object["reason"] = .string(failure.reason) }
        return object
    }
}

/// One verifier per enabled environment of an app (P-06). The environment a payload claims picks
/// the verifier, which then checks everything, including that claim.
public final class VerificationService: Sendable {
    public let app: AppConfiguration
    public let verifiers: [String: SignedDataVerifier]

    public enum SetupError: Error, CustomStringConvertible {
        case verifier(environment: String, SignedDataVerifier.ConfigurationError)
        public var description: String {
            switch self {
            case .verifier(let environment, let error): "\(environment) verifier: \(error)"
            }
        }
    }

    /// Environments that need roots get a verifier only when roots are configured; without them
    /// verification of that environment answers that no root is configured.
    public init(app: AppConfiguration, revocationChecker: (any RevocationChecker)? = nil,
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.app = app
        var verifiers: [String: SignedDataVerifier] = [:]
        let cache = VerifiedChainCache()
        for name in app.environments {
            let environment = AppStoreEnvironment(rawValue: name)
            let unsigned = environment == .xcode || environment == .localTesting
            guard unsigned || !app.verification.rootCertificates.isEmpty else { continue }
            let configuration = SignedDataVerifier.Configuration(
                rootCertificates: unsigned ? [] : app.verification.rootCertificates, bundleId: app.bundleId,
                appAppleId: app.appAppleId, environment: environment,
                onlineChecks: !unsigned && app.verification.onlineChecks)
            do {
                verifiers[name] = try SignedDataVerifier(configuration, revocationChecker: revocationChecker,
                                                         chainCache: cache, clock: clock)
            } catch let error as SignedDataVerifier.ConfigurationError {
                throw SetupError.verifier(environment: name, error)
            }
        }
        self.verifiers = verifiers
    }

    /// True when some environment that needs Apple's roots has none.
    public var isMissingRoots: Bool {
        app.environments.contains { ($0 == "Production" || $0 == "Sandbox") && verifiers[$0] == nil }
    }

    /// Verifies `jws` as `kind` with the verifier of `environment`, or of the environment the
    /// payload claims when nil. `effectiveDate` overrides the app's policy (re-verification, CLI).
    public func verify(_ jws: String, kind: SignedPayloadKind, environment: String? = nil,
                       effectiveDate: Date? = nil) -> VerificationOutcome {
        let (name, verifier): (String, SignedDataVerifier)
        switch self.verifier(for: jws, kind: kind, environment: environment) {
        case .success(let chosen): (name, verifier) = chosen
        case .failure(let failure):
            let claimed = environment ?? SignedPayloadInspection.claimedEnvironment(jws, kind: kind)
            return VerificationOutcome(kind: kind, environment: claimed, result: .invalid(failure))
        }
        if kind == .notification {
            return Self.verifyNotification(verifier, jws, environment: name, effectiveDate: effectiveDate)
        }
        return VerificationOutcome(kind: kind, environment: name,
                                   result: Self.run(verifier, jws, kind: kind, effectiveDate: effectiveDate))
    }

    /// A notification and the signed items inside it, each verified (P-11).
    private static func verifyNotification(_ verifier: SignedDataVerifier, _ jws: String, environment: String,
                                           effectiveDate: Date?) -> VerificationOutcome {
        switch verifier.verifyNotificationAndContents(jws, effectiveDate: effectiveDate) {
        case .invalid(let failure):
            return VerificationOutcome(kind: .notification, environment: environment, result: .invalid(failure))
        case .valid(let verified):
            var contents = JSONObject()
            if let transaction = verified.transaction { contents["transactionInfo"] = .object(transaction.knownJSON) }
            if let renewal = verified.renewalInfo { contents["renewalInfo"] = .object(renewal.knownJSON) }
            if let app = verified.appTransaction { contents["appTransactionInfo"] = .object(app.knownJSON) }
            return VerificationOutcome(kind: .notification, environment: environment,
                                       result: .valid(verified.notification.knownJSON), contents: contents)
        }
    }

    private static func run(_ verifier: SignedDataVerifier, _ jws: String, kind: SignedPayloadKind,
                            effectiveDate: Date?) -> VerificationResult<JSONObject> {
        func known<Model: AppStoreModel>(_ result: VerificationResult<Model>) -> VerificationResult<JSONObject> {
            switch result {
            case .valid(let payload): .valid(payload.knownJSON)
            case .invalid(let failure): .invalid(failure)
            }
        }
        switch kind {
        case .transaction: return known(verifier.verifyTransaction(jws, effectiveDate: effectiveDate))
        case .renewalInfo: return known(verifier.verifyRenewalInfo(jws, effectiveDate: effectiveDate))
        case .notification: return known(verifier.verifyNotification(jws, effectiveDate: effectiveDate))
        case .appTransaction: return known(verifier.verifyAppTransaction(jws, effectiveDate: effectiveDate))
        case .realtimeRequest: return known(verifier.verifyRealtimeRequest(jws, effectiveDate: effectiveDate))
        }
    }
}
