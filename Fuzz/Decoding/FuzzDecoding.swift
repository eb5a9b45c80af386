import Crypto

// libFuzzer target: the decoders that read untrusted bytes before any signature is checked:
// strict base64 and base64url (decode → encode must give the input back, padding aside), compact JWS segments
// and their header and payload, strict DER ECDSA signatures (parse → encode must give the input
// back) and X.509 certificates. Nothing may crash.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoding(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    // Padding may be present or absent (documented); everything else must be canonical.
    func unpadded(_ text: String) -> Substring { text[...].prefix { $0 != "=" } }
    if let decoded = try? Base64.decode(text) {
        precondition(unpadded(Base64.encode(decoded)) == unpadded(text), "base64 is not canonical")
    }
    if let decoded = try? Base64.decodeURL(text) {
        precondition(unpadded(Base64.encodeURL(decoded)) == unpadded(text), "base64url is not canonical")
    }
    if let segments = try? JWSSegments(text) {
        _ = try? segments.decodeHeader()
        _ = try? segments.decodePayload()
        _ = try? segments.decodeSignature()
    }
    if let signature = try? ECDSASignature(derRepresentation: bytes) {
        precondition(signature.derRepresentation == bytes, "DER signature is not strict")
    }
    if let certificate = try? Certificate(derEncoded: bytes) {
        _ = certificate.sha256Fingerprint
        _ = certificate.subject
    }
    return 0
}
