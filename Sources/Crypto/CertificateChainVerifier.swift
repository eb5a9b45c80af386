internal import COpenSSL
internal import CShims
package import Foundation

/// Why a chain did not verify.
package enum ChainFailure: Sendable, Equatable, CustomStringConvertible {
    /// A certificate of the chain is past its `notAfter` at the validation time (`depth` 0 = leaf).
    case expired(depth: Int)
    /// A certificate of the chain is before its `notBefore` at the validation time.
    case notYetValid(depth: Int)
    /// No path from the leaf through the given intermediates to a trusted root.
    case noPathToTrustedRoot(depth: Int)
    /// A signature in the chain does not verify with its issuer's key.
    case badSignature(depth: Int)
    /// Any other X.509 policy failure, with OpenSSL's reason.
    case other(code: Int, reason: String, depth: Int)

    package var description: String {
        switch self {
        case .expired(let depth): "certificate at depth \(depth) has expired"
        case .notYetValid(let depth): "certificate at depth \(depth) is not yet valid"
        case .noPathToTrustedRoot(let depth): "no path to a trusted root (depth \(depth))"
        case .badSignature(let depth): "certificate signature failure at depth \(depth)"
        case .other(let code, let reason, let depth): "X.509 error \(code) at depth \(depth): \(reason)"
        }
    }
}

/// The outcome of a chain validation: a value, never a throw.
package enum ChainVerificationResult: Sendable {
    /// The built chain, leaf first and the trusted root last.
    case valid([Certificate])
    case invalid(ChainFailure)
}

/// Trust anchors plus the validation: leaf → given intermediates → one of the roots, at a time
/// the caller chooses. Intermediates are only ever candidates, never anchors.
///
/// Invariant that makes it `Sendable`: the `X509_STORE` is filled once in `init` and only read
/// afterwards; OpenSSL locks its internal caches.
package final class CertificateChainVerifier: @unchecked Sendable {
    private let store: OpaquePointer
    package let roots: [Certificate]

    package init(trustedRoots roots: [Certificate]) throws(CryptoError) {
        guard let store = X509_STORE_new() else {
            throw CryptoError.internalFailure(drainOpenSSLErrors("X509_STORE_new failed"))
        }
        self.store = store
        self.roots = roots
        for root in roots where X509_STORE_add_cert(store, root.raw) != 1 {
            // A duplicate root is harmless; anything else is a real failure.
            let reason = drainOpenSSLErrors("X509_STORE_add_cert failed")
            if !reason.contains("already in hash table") { throw CryptoError.internalFailure(reason) }
        }
    }

    deinit { X509_STORE_free(store) }

    /// Validates `leaf` with `intermediates` against the roots as if the clock read `time`.
    package func verify(leaf: Certificate, intermediates: [Certificate], at time: Date) -> ChainVerificationResult {
        guard let context = X509_STORE_CTX_new(), let untrusted = entitle_x509_stack_new() else {
            return .invalid(.other(code: -1, reason: drainOpenSSLErrors("out of memory"), depth: 0))
        }
        defer {
            entitle_x509_stack_free(untrusted)
            X509_STORE_CTX_free(context)
        }
        for certificate in intermediates { _ = entitle_x509_stack_push(untrusted, certificate.raw) }
        guard X509_STORE_CTX_init(context, store, leaf.raw, untrusted) == 1 else {
            return .invalid(.other(code: -1, reason: drainOpenSSLErrors("X509_STORE_CTX_init failed"), depth: 0))
        }
        X509_STORE_CTX_set_time(context, 0, time_t(time.timeIntervalSince1970.rounded(.down)))
        let outcome = X509_verify_cert(context)
        clearOpenSSLErrors()
        guard outcome == 1 else { return .invalid(Self.failure(context)) }
        return .valid(builtChain(context, known: [leaf] + intermediates + roots))
    }

    /// The chain OpenSSL built, as our `Certificate` objects: it holds the very `X509` handles we
    /// gave it, so each is found by identity (re-encoding and re-parsing would cost far more).
    private func builtChain(_ context: OpaquePointer, known: [Certificate]) -> [Certificate] {
        guard let chain = X509_STORE_CTX_get0_chain(context) else { return [] }
        var certificates: [Certificate] = []
        for index in 0..<entitle_x509_stack_count(chain) {
            guard let x509 = entitle_x509_stack_at(chain, index),
                let certificate = known.first(where: { $0.raw == x509 })
            else { continue }
            certificates.append(certificate)
        }
        return certificates
    }

    private static func failure(_ context: OpaquePointer) -> ChainFailure {
        let code = X509_STORE_CTX_get_error(context)
        let depth = Int(X509_STORE_CTX_get_error_depth(context))
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: return .expired(depth: depth)
        case X509_V_ERR_CERT_NOT_YET_VALID: return .notYetValid(depth: depth)
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return .noPathToTrustedRoot(depth: depth)
        case X509_V_ERR_CERT_SIGNATURE_FAILURE: return .badSignature(depth: depth)
        default:
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown"
            return .other(code: Int(code), reason: reason, depth: depth)
        }
    }
}
