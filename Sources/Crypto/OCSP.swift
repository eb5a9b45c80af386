internal import COpenSSL
internal import CShims
package import Foundation

/// What an OCSP response says about one certificate, after every check of docs/APP_STORE.md §3.6.
package enum OCSPEvaluation: Sendable, Equatable {
    /// Good; cache the answer until `nextUpdate` (when the responder gave one).
    case good(nextUpdate: Date?)
    case revoked
    /// The responder does not know the certificate.
    case unknown
    /// A well-formed response that fails a check (status, signature, certificate ID, freshness).
    case invalid(String)
    /// Bytes that are not an OCSP response at all.
    case unreadable(String)
}

/// OCSP (RFC 6960) with OpenSSL: the request for a certificate and the evaluation of the answer.
package enum OCSP {
    /// The responder URL from the certificate's Authority Information Access extension.
    package static func responderURL(of certificate: Certificate) -> String? {
        guard let url = entitle_ocsp_responder_url(certificate.raw) else { return nil }
        defer { entitle_openssl_free(url) }
        return String(cString: url)
    }

    /// DER `OCSPRequest` with one SHA-256 CertID for `certificate` issued by `issuer`.
    package static func request(for certificate: Certificate, issuer: Certificate) throws(CryptoError) -> [UInt8] {
        guard let request = OCSP_REQUEST_new() else { throw CryptoError.internalFailure(drainOpenSSLErrors("OCSP_REQUEST_new")) }
        defer { OCSP_REQUEST_free(request) }
        guard let id = OCSP_cert_to_id(EVP_sha256(), certificate.raw, issuer.raw) else {
            throw CryptoError.internalFailure(drainOpenSSLErrors("OCSP_cert_to_id"))
        }
        guard OCSP_request_add0_id(request, id) != nil else {  // the request now owns `id`
            OCSP_CERTID_free(id)
            throw CryptoError.internalFailure(drainOpenSSLErrors("OCSP_request_add0_id"))
        }
        var pointer: UnsafeMutablePointer<UInt8>?
        let length = i2d_OCSP_REQUEST(request, &pointer)
        defer { entitle_openssl_free(pointer) }
        guard length > 0, let pointer else { throw CryptoError.internalFailure(drainOpenSSLErrors("i2d_OCSP_REQUEST")) }
        return Array(UnsafeBufferPointer(start: pointer, count: Int(length)))
    }

    /// Checks `der` as the answer about `certificate`: status successful, signed by `issuer` or by
    /// a responder it delegated (OCSPSigning), a matching SingleResponse, and fresh at `now`
    /// within `skew` seconds.
    package static func evaluate(
        _ der: [UInt8], certificate: Certificate, issuer: Certificate, at now: Date,
        skew: TimeInterval = 60
    ) -> OCSPEvaluation {
        defer { clearOpenSSLErrors() }
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var pointer = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &pointer, buffer.count)
        }
        guard let response = parsed else { return .unreadable("not a DER OCSP response") }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            return .invalid("responder status \(String(cString: OCSP_response_status_str(Int(status))))")
        }
        guard let basic = OCSP_response_get1_basic(response) else { return .invalid("no basic response") }
        defer { OCSP_BASICRESP_free(basic) }
        guard verifySignature(basic, issuer: issuer) else { return .invalid("the response signature does not verify") }
        guard let id = OCSP_cert_to_id(EVP_sha256(), certificate.raw, issuer.raw) else { return .invalid("no certificate ID") }
        defer { OCSP_CERTID_free(id) }
        var certificateStatus: Int32 = 0, reason: Int32 = 0
        var revocationTime: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?, thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?,
            nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard OCSP_resp_find_status(basic, id, &certificateStatus, &reason, &revocationTime, &thisUpdate, &nextUpdate) == 1 else {
            return .invalid("no answer for this certificate in the response")
        }
        guard let thisDate = date(thisUpdate), thisDate <= now.addingTimeInterval(skew) else {
            return .invalid("thisUpdate is in the future")
        }
        let nextDate = date(nextUpdate)
        if let nextDate, nextDate < now.addingTimeInterval(-skew) { return .invalid("the response is stale (nextUpdate passed)") }
        switch certificateStatus {
        case V_OCSP_CERTSTATUS_GOOD: return .good(nextUpdate: nextDate)
        case V_OCSP_CERTSTATUS_REVOKED: return .revoked
        default: return .unknown
        }
    }

    /// The signer must be the issuer itself or a certificate the issuer signed for OCSP: a store
    /// holding only the issuer, with partial chains allowed, expresses exactly that.
    private static func verifySignature(_ basic: OpaquePointer, issuer: Certificate) -> Bool {
        guard let store = X509_STORE_new(), let certificates = entitle_x509_stack_new() else { return false }
        defer {
            entitle_x509_stack_free(certificates)
            X509_STORE_free(store)
        }
        X509_STORE_add_cert(store, issuer.raw)
        X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        _ = entitle_x509_stack_push(certificates, issuer.raw)
        return OCSP_basic_verify(basic, certificates, store, 0) == 1
    }

    private static func date(_ time: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?) -> Date? {
        guard let time else { return nil }
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
    }
}
