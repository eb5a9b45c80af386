package import Crypto
package import Foundation
import Instants
import JSON
import Synchronization

/// The kinds of App Store signed data, each with its own verify operation (P-08).
package enum SignedPayloadKind: String, Sendable, CaseIterable {
    case transaction
    case renewalInfo = "renewal-info"
    case notification
    case appTransaction = "app-transaction"
    case realtimeRequest = "realtime-request"
}

/// Verifies and decodes App Store signed data exactly as docs/APP_STORE.md §3 orders the checks. One
/// verifier is bound to one app and one environment (P-06).
package final class SignedDataVerifier: Sendable {
    package struct Configuration: Sendable {
        package var rootCertificates: [Certificate]
        package var bundleId: String
        /// Required when `environment` is Production.
        package var appAppleId: Int64?
        package var environment: AppStoreEnvironment
        /// Effective date = now and OCSP; otherwise the payload's signing date and no network.
        package var onlineChecks: Bool

        package init(
            rootCertificates: [Certificate], bundleId: String, appAppleId: Int64?,
            environment: AppStoreEnvironment, onlineChecks: Bool
        ) {
            self.rootCertificates = rootCertificates
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.environment = environment
            self.onlineChecks = onlineChecks
        }
    }

    package enum ConfigurationError: Error, Equatable, CustomStringConvertible {
        case noRootCertificates
        case productionNeedsAppAppleId
        case onlineChecksNeedRevocationChecker
        case unknownEnvironment(String)

        package var description: String {
            switch self {
            case .noRootCertificates: "a verifier needs at least one root certificate"
            case .productionNeedsAppAppleId: "a Production verifier needs the app's appAppleId"
            case .onlineChecksNeedRevocationChecker: "online checks need a revocation (OCSP) checker"
            case .unknownEnvironment(let name): "unknown environment \(name)"
            }
        }
    }

    package let configuration: Configuration
    private let chainVerifier: CertificateChainVerifier?
    private let revocationChecker: (any RevocationChecker)?
    private let clock: @Sendable () -> Date
    package let chainCache: VerifiedChainCache
    private let validations = Atomic<Int>(0)

    /// Full chain validations performed (cache misses); tests and metrics read it.
    package var chainValidationCount: Int { validations.load(ordering: .relaxed) }

    package init(
        _ configuration: Configuration, revocationChecker: (any RevocationChecker)? = nil,
        chainCache: VerifiedChainCache = VerifiedChainCache(),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        guard AppStoreEnvironment.knownValues.contains(configuration.environment.rawValue) else {
            throw ConfigurationError.unknownEnvironment(configuration.environment.rawValue)
        }
        if configuration.environment == .production && configuration.appAppleId == nil {
            throw ConfigurationError.productionNeedsAppAppleId
        }
        if configuration.onlineChecks && revocationChecker == nil { throw ConfigurationError.onlineChecksNeedRevocationChecker }
        if configuration.environment.isSigned && configuration.rootCertificates.isEmpty { throw ConfigurationError.noRootCertificates }
        self.configuration = configuration
        chainVerifier =
            configuration.rootCertificates.isEmpty
            ? nil
            : try CertificateChainVerifier(trustedRoots: configuration.rootCertificates)
        self.revocationChecker = revocationChecker
        self.chainCache = chainCache
        self.clock = clock
    }

    // MARK: - One operation per kind

    package func verifyTransaction(_ jws: String, effectiveDate: Date? = nil) -> VerificationResult<JWSTransactionDecodedPayload> {
        parsing(jws) { verifyTransaction($0, effectiveDate: effectiveDate) }
    }

    package func verifyTransaction(_ parsed: SignedPayload, effectiveDate: Date? = nil) -> VerificationResult<JWSTransactionDecodedPayload>
    {
        verify(parsed, effectiveDate: effectiveDate, signedDateKey: "signedDate") { (payload: JWSTransactionDecodedPayload) in
            (payload.bundleId, nil, payload.string("environment"), checksBundle: true, checksAppAppleId: false)
        }
    }

    package func verifyRenewalInfo(_ jws: String, effectiveDate: Date? = nil) -> VerificationResult<JWSRenewalInfoDecodedPayload> {
        parsing(jws) { verifyRenewalInfo($0, effectiveDate: effectiveDate) }
    }

    package func verifyRenewalInfo(_ parsed: SignedPayload, effectiveDate: Date? = nil) -> VerificationResult<JWSRenewalInfoDecodedPayload>
    {
        verify(parsed, effectiveDate: effectiveDate, signedDateKey: "signedDate") { (payload: JWSRenewalInfoDecodedPayload) in
            (nil, nil, payload.string("environment"), checksBundle: false, checksAppAppleId: false)
        }
    }

    package func verifyNotification(_ jws: String, effectiveDate: Date? = nil) -> VerificationResult<ResponseBodyV2DecodedPayload> {
        parsing(jws) { verifyNotification($0, effectiveDate: effectiveDate) }
    }

    package func verifyNotification(
        _ parsed: SignedPayload,
        effectiveDate: Date? = nil
    ) -> VerificationResult<ResponseBodyV2DecodedPayload> {
        verify(parsed, effectiveDate: effectiveDate, signedDateKey: "signedDate") { (payload: ResponseBodyV2DecodedPayload) in
            let identity = payload.identity
            return (identity.bundleId, identity.appAppleId, identity.environment, checksBundle: true, checksAppAppleId: true)
        }
    }

    package func verifyAppTransaction(_ jws: String, effectiveDate: Date? = nil) -> VerificationResult<AppTransaction> {
        parsing(jws) { verifyAppTransaction($0, effectiveDate: effectiveDate) }
    }

    package func verifyAppTransaction(_ parsed: SignedPayload, effectiveDate: Date? = nil) -> VerificationResult<AppTransaction> {
        verify(parsed, effectiveDate: effectiveDate, signedDateKey: "receiptCreationDate") { (payload: AppTransaction) in
            (payload.bundleId, payload.appAppleId, payload.string("receiptType"), checksBundle: true, checksAppAppleId: true)
        }
    }

    package func verifyRealtimeRequest(_ jws: String, effectiveDate: Date? = nil) -> VerificationResult<DecodedRealtimeRequestBody> {
        parsing(jws) { verifyRealtimeRequest($0, effectiveDate: effectiveDate) }
    }

    package func verifyRealtimeRequest(
        _ parsed: SignedPayload,
        effectiveDate: Date? = nil
    ) -> VerificationResult<DecodedRealtimeRequestBody> {
        verify(parsed, effectiveDate: effectiveDate, signedDateKey: "signedDate") { (payload: DecodedRealtimeRequestBody) in
            (nil, payload.appAppleId, payload.string("environment"), checksBundle: false, checksAppAppleId: true)
        }
    }

    // MARK: - The checks, in order

    private typealias Identity = (
        bundleId: String?, appAppleId: Int64?, environment: String?,
        checksBundle: Bool, checksAppAppleId: Bool
    )

    /// Steps 1–2: format (`SignedPayload` reads the segments and the payload, or says why not).
    private func parsing<Model>(_ jws: String, _ verify: (SignedPayload) -> VerificationResult<Model>) -> VerificationResult<Model> {
        do { return verify(try SignedPayload(jws)) } catch { return .invalid(error) }
    }

    private func verify<Model: AppStoreModel>(
        _ parsed: SignedPayload, effectiveDate override: Date?, signedDateKey: String,
        identity: (Model) -> Identity
    ) -> VerificationResult<Model> {
        // Step 3: the payload decodes as the model.
        let payload: Model
        do { payload = try Model(decoding: parsed.payload) } catch {
            return .invalid(VerificationFailure(.invalidJWTFormat, "payload does not decode as \(Model.schema.name): \(error)"))
        }
        // Step 4: Xcode and LocalTesting data is unsigned by design; only identity checks apply.
        let environment = configuration.environment
        if environment.isSigned {
            let effective =
                override
                ?? (configuration.onlineChecks
                    ? clock()
                    : Milliseconds.truncating(payload.json[signedDateKey]).map {
                        Date(timeIntervalSince1970: Double($0.floorDivided(by: 1000)))
                    }
                        ?? clock())
            if let failure = verifySignature(parsed.segments, effectiveDate: effective) { return .invalid(failure) }
        }
        // Steps 12–13: identity, then environment.
        let claimed = identity(payload)
        if claimed.checksBundle && claimed.bundleId != configuration.bundleId {
            return .invalid(
                VerificationFailure(
                    .invalidAppIdentifier,
                    "bundle ID \(claimed.bundleId ?? "(absent)") is not \(configuration.bundleId)"))
        }
        if claimed.checksAppAppleId && environment == .production && claimed.appAppleId != configuration.appAppleId {
            return .invalid(
                VerificationFailure(
                    .invalidAppIdentifier,
                    "appAppleId \(claimed.appAppleId.map(String.init) ?? "(absent)") is not \(configuration.appAppleId ?? 0)"))
        }
        guard claimed.environment == environment.rawValue else {
            return .invalid(
                VerificationFailure(
                    .invalidEnvironment,
                    "environment \(claimed.environment ?? "(absent)") is not \(environment.rawValue)"))
        }
        return .valid(payload)
    }

    /// Steps 5–11: header, certificates, chain at the effective date, signature.
    ///
    /// Apple signs every payload of a leaf with the same header (alg and x5c), so the validated
    /// chain is cached under the header's exact text: a repeat skips decoding the header and the
    /// certificates and costs one ECDSA verification.
    private func verifySignature(_ segments: JWSSegments, effectiveDate: Date) -> VerificationFailure? {
        let leafKey: P256.Signing.PublicKey
        switch validatedLeafKey(segments, effectiveDate: effectiveDate) {
        case .success(let key): leafKey = key
        case .failure(let failure): return failure
        }
        let signature: [UInt8]
        do { signature = try segments.decodeSignature() } catch {
            return VerificationFailure(.verificationFailure, "the signature is not base64url")
        }
        guard signature.count == ECDSASignature.rawByteCount else {
            return VerificationFailure(.verificationFailure, "signature is \(signature.count) bytes, ES256 needs 64")
        }
        guard CompactJWS.isValidES256Signature(signature, over: segments.signingInput, publicKey: leafKey) else {
            return VerificationFailure(.verificationFailure, "signature does not verify with the leaf certificate's key")
        }
        return nil
    }

    /// The leaf's key once the header is sound and its path to a root is valid at `effectiveDate`.
    private func validatedLeafKey(
        _ segments: JWSSegments,
        effectiveDate: Date
    ) -> Result<P256.Signing.PublicKey, VerificationFailure> {
        let now = clock()
        let cacheKey = segments.headerText
        if let entry = chainCache.lookup(cacheKey, now: now) {
            guard effectiveDate >= entry.validFrom && effectiveDate < entry.validUntil else {
                return .failure(VerificationFailure(.invalidChain, "a certificate of the chain is not valid at \(iso(effectiveDate))"))
            }
            return .success(entry.leafKey)
        }
        let header: JSONObject
        do { header = try segments.decodeHeader() } catch {
            return .failure(VerificationFailure(.invalidJWTFormat, error.description))
        }
        guard header["alg"]?.stringValue == "ES256" else {
            return .failure(VerificationFailure(.invalidJWTFormat, "header alg must be ES256"))
        }
        // RFC 7515 §4.1.11: a recipient must refuse extensions it does not understand, and this
        // verifier understands none (Apple's library refuses the header too).
        guard header["crit"] == nil else {
            return .failure(VerificationFailure(.invalidJWTFormat, "header crit names extensions this verifier does not process"))
        }
        guard let chain = header["x5c"]?.arrayValue, chain.allSatisfy({ $0.stringValue != nil }) else {
            return .failure(VerificationFailure(.invalidJWTFormat, "header x5c must be an array of certificates"))
        }
        guard chain.count == 3 else {
            return .failure(VerificationFailure(.invalidChainLength, "x5c has \(chain.count) certificates, 3 are required"))
        }
        validations.add(1, ordering: .relaxed)
        let leafCertificate: Certificate, intermediateCertificate: Certificate
        do {
            leafCertificate = try Certificate(derEncoded: Base64.decode(chain[0].stringValue!))
            intermediateCertificate = try Certificate(derEncoded: Base64.decode(chain[1].stringValue!))
        } catch {
            return .failure(VerificationFailure(.invalidCertificate, "x5c[0] or x5c[1] is not a base64 DER certificate"))
        }
        guard let chainVerifier else {
            return .failure(VerificationFailure(.invalidChain, "no trusted root is configured"))
        }
        let path: [Certificate]
        switch chainVerifier.verify(leaf: leafCertificate, intermediates: [intermediateCertificate], at: effectiveDate) {
        case .valid(let built): path = built
        case .invalid(let failure): return .failure(VerificationFailure(.invalidChain, Self.explain(failure, at: effectiveDate)))
        }
        guard path.count == 3, path[1] == intermediateCertificate else {
            return .failure(VerificationFailure(.invalidChain, "the path must be leaf, x5c[1], configured root"))
        }
        guard intermediateCertificate.hasExtension(oid: AppleMarkerOID.intermediate) else {
            return .failure(VerificationFailure(.invalidChain, "intermediate lacks Apple's marker \(AppleMarkerOID.intermediate)"))
        }
        guard leafCertificate.hasExtension(oid: AppleMarkerOID.leaf) else {
            return .failure(VerificationFailure(.invalidChain, "leaf lacks Apple's marker \(AppleMarkerOID.leaf)"))
        }
        guard let key = leafCertificate.p256PublicKey else {
            return .failure(VerificationFailure(.verificationFailure, "the leaf's key is not an EC P-256 key"))
        }
        if configuration.onlineChecks, let revocationChecker {
            for (certificate, issuer) in [(leafCertificate, intermediateCertificate), (intermediateCertificate, path[2])] {
                switch revocationChecker.status(of: certificate, issuer: issuer, at: now) {
                case .good: continue
                case .notGood(let reason): return .failure(VerificationFailure(.invalidChain, "OCSP: \(reason)"))
                case .unavailable(let reason): return .failure(VerificationFailure(.retryableVerificationFailure, "OCSP: \(reason)"))
                }
            }
        }
        let validFrom = path.map(\.notBefore).max()!, validUntil = path.map(\.notAfter).min()!
        chainCache.store(
            VerifiedChainCache.Entry(
                leafKey: key, validFrom: validFrom, validUntil: validUntil,
                expires: now.addingTimeInterval(VerifiedChainCache.timeToLive)),
            under: cacheKey, now: now)
        return .success(key)
    }

    private static func explain(_ failure: ChainFailure, at date: Date) -> String {
        let names = ["leaf", "intermediate", "root"]
        switch failure {
        case .expired(let depth):
            return "\(names[min(depth, 2)]) certificate expired before the effective date \(iso(date))"
                + (depth == 0 ? "; the device should refresh its transactions" : "")
        case .notYetValid(let depth): return "\(names[min(depth, 2)]) certificate is not yet valid at \(iso(date))"
        case .noPathToTrustedRoot: return "no path from x5c[0] and x5c[1] to a configured root"
        case .badSignature(let depth): return "the \(names[min(depth, 2)]) certificate's signature does not verify"
        case .other(_, let reason, let depth): return "\(names[min(depth, 2)]) certificate: \(reason)"
        }
    }
}

private func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

/// `input` without surrounding spaces, tabs and line breaks (Foundation's trimming walks UTF-16
/// and costs more than the signature check on a 5 KiB JWS).
func trimmingASCIIWhitespace(_ input: String) -> Substring {
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    let utf8 = input.utf8
    guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else {
        return input[input.endIndex...]
    }
    return input[first...last]
}
