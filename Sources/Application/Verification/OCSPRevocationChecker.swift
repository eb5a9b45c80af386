package import AppStore
package import Crypto
package import Foundation
import HTTPClient
import Synchronization

/// Online revocation checks (docs/APP_STORE.md §3.6): an OCSP request to the responder named in the
/// certificate, sent with libcurl, the answer checked with OpenSSL. Good answers are cached until
/// their `nextUpdate`. Network-level trouble (no connection, timeout, non-200, bytes that are no
/// OCSP response) is `unavailable`, so the caller reports a retryable failure; a response that is
/// readable but not "good" invalidates the chain. Blocks: call it off the event loops.
package final class OCSPRevocationChecker: RevocationChecker {
    private let client: HTTPClient
    private let goodUntil = Mutex<[String: Date]>([:])
    private static let cacheCapacity = 256

    package init(timeout: Double = 30, caFile: String? = nil) {
        var configuration = HTTPClient.Configuration()
        configuration.connectTimeout = min(timeout, 10)
        configuration.totalTimeout = timeout
        configuration.maxResponseBytes = 1 << 20
        configuration.caFile = caFile
        client = HTTPClient(configuration: configuration)
    }

    package func status(of certificate: Certificate, issuer: Certificate, at now: Date) -> RevocationStatus {
        let key = certificate.sha256Fingerprint + issuer.sha256Fingerprint
        if let until = goodUntil.withLock({ $0[key] }), until > now { return .good }
        guard let url = OCSP.responderURL(of: certificate) else {
            return .notGood("the certificate names no OCSP responder")
        }
        let request: [UInt8]
        do { request = try OCSP.request(for: certificate, issuer: issuer) } catch {
            return .notGood("cannot build the OCSP request: \(error)")
        }
        let response: HTTPClientResponse
        do {
            response = try client.send(
                HTTPClientRequest(
                    method: "POST", url: url,
                    headers: [
                        ("Content-Type", "application/ocsp-request"),
                        ("Accept", "application/ocsp-response"),
                    ],
                    body: request))
        } catch {
            return .unavailable("responder \(url) unreachable: \(error)")
        }
        guard response.status == 200 else { return .unavailable("responder \(url) answered HTTP \(response.status)") }
        switch OCSP.evaluate(response.body, certificate: certificate, issuer: issuer, at: now) {
        case .good(let nextUpdate):
            if let nextUpdate { remember(key, until: nextUpdate, now: now) }
            return .good
        case .revoked: return .notGood("certificate \(certificate.serialNumberHex) is revoked")
        case .unknown: return .notGood("the responder does not know certificate \(certificate.serialNumberHex)")
        case .invalid(let reason): return .notGood(reason)
        case .unreadable(let reason): return .unavailable("responder \(url) answered garbage: \(reason)")
        }
    }

    private func remember(_ key: String, until: Date, now: Date) {
        goodUntil.withLock { entries in
            entries[key] = until
            if entries.count > Self.cacheCapacity { entries = entries.filter { $0.value > now } }
        }
    }
}
