package import Foundation
package import JSON

/// Why a compact JWS could not be read. Each case names the segment at fault.
package enum JWSError: Error, Sendable, Equatable, CustomStringConvertible {
    case segmentCount(Int)
    case invalidBase64URL(segment: String)
    case invalidJSON(segment: String, detail: String)
    case notAnObject(segment: String)

    package var description: String {
        switch self {
        case .segmentCount(let count): "a compact JWS has 3 segments, found \(count)"
        case .invalidBase64URL(let segment): "the \(segment) is not base64url"
        case .invalidJSON(let segment, let detail): "the \(segment) is not JSON: \(detail)"
        case .notAnObject(let segment): "the \(segment) is not a JSON object"
        }
    }
}

/// The three segments of a compact JWS, located but not yet decoded, so a caller can decide
/// what to decode (a verifier that has seen the exact header before need not decode it again).
package struct JWSSegments: Sendable {
    package let bytes: [UInt8]
    package let header: Range<Int>
    package let payload: Range<Int>
    package let signature: Range<Int>

    package init(_ compact: some StringProtocol) throws(JWSError) {
        let bytes = compact.utf8.withContiguousStorageIfAvailable { Array($0) } ?? Array(compact.utf8)
        let dots = bytes.withUnsafeBufferPointer { buffer -> [Int] in
            var found: [Int] = []
            for index in 0..<buffer.count where buffer[index] == UInt8(ascii: ".") {
                found.append(index)
                if found.count > 2 { break }
            }
            return found
        }
        guard dots.count == 2 else {
            throw JWSError.segmentCount(bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).count)
        }
        self.bytes = bytes
        header = 0..<dots[0]
        payload = (dots[0] + 1)..<dots[1]
        signature = (dots[1] + 1)..<bytes.count
    }

    /// `base64url(header) "." base64url(payload)`, the bytes the signature covers.
    package var signingInput: ArraySlice<UInt8> { bytes[0..<payload.upperBound] }
    /// The header segment's text, as sent.
    package var headerText: ArraySlice<UInt8> { bytes[header] }

    package func decodeHeader() throws(JWSError) -> JSONObject {
        try Self.parseObject(try Self.decode(bytes[header], name: "header"), name: "header")
    }

    /// The payload's bytes and JSON object.
    package func decodePayload() throws(JWSError) -> ([UInt8], JSONObject) {
        let decoded = try Self.decode(bytes[payload], name: "payload")
        return (decoded, try Self.parseObject(decoded, name: "payload"))
    }

    package func decodeSignature() throws(JWSError) -> [UInt8] { try Self.decode(bytes[signature], name: "signature") }

    private static func decode(_ characters: ArraySlice<UInt8>, name: String) throws(JWSError) -> [UInt8] {
        guard !characters.isEmpty else { throw JWSError.invalidBase64URL(segment: name) }
        // A JWS never carries padding; refuse it rather than accept two spellings of one token.
        guard !characters.contains(UInt8(ascii: "=")) else { throw JWSError.invalidBase64URL(segment: name) }
        do { return try Base64.decodeURL(characters) } catch { throw JWSError.invalidBase64URL(segment: name) }
    }

    private static func parseObject(_ bytes: [UInt8], name: String) throws(JWSError) -> JSONObject {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw JWSError.invalidJSON(segment: name, detail: error.description)
        }
        guard let object = value.objectValue else { throw JWSError.notAnObject(segment: name) }
        return object
    }
}

/// A compact JWS (RFC 7515 §7.1) taken apart; nothing is trusted until `isValidES256Signature`.
package struct CompactJWS: Sendable {
    package let header: JSONObject
    package let payload: JSONObject
    /// The decoded payload bytes, exactly as signed.
    package let payloadBytes: [UInt8]
    /// The decoded signature bytes (64 for a well-formed ES256 signature).
    package let signature: [UInt8]
    /// `base64url(header) "." base64url(payload)`, the bytes the signature covers.
    package let signingInput: [UInt8]

    /// Splits and decodes `compact`. Surrounding whitespace is not removed: callers trim files.
    package init(_ compact: some StringProtocol) throws(JWSError) {
        let segments = try JWSSegments(compact)
        header = try segments.decodeHeader()
        (payloadBytes, payload) = try segments.decodePayload()
        signature = try segments.decodeSignature()
        signingInput = Array(segments.signingInput)
    }

    /// The header's `alg`, if it is a string.
    package var algorithm: String? { header["alg"]?.stringValue }

    /// True when the signature is a 64-byte ES256 signature over the signing input by `key`.
    /// RS256 (Google's OIDC tokens and service-account assertions).
    package func isValidRS256Signature(publicKey: RSA.PublicKey) -> Bool {
        algorithm == "RS256" && publicKey.isValidSignature(signature, for: signingInput)
    }

    package func isValidES256Signature(publicKey: P256.Signing.PublicKey) -> Bool {
        Self.isValidES256Signature(signature, over: signingInput, publicKey: publicKey)
    }

    package static func isValidES256Signature(
        _ signature: [UInt8], over signingInput: some ContiguousBytes,
        publicKey: P256.Signing.PublicKey
    ) -> Bool {
        guard let parsed = try? ECDSASignature(rawRepresentation: signature) else { return false }
        return publicKey.isValidSignature(parsed, for: signingInput)
    }
}

/// Creates compact ES256 and RS256 JWS tokens.
package enum JWSSigner {
    /// `base64url(header).base64url(payload).base64url(RS256 signature)`.
    package static func sign(header: JSONObject, payload: JSONObject, with key: RSA.PrivateKey) throws(CryptoError) -> String {
        let signingInput =
            Base64.encodeURL(JSONValue.object(header).serializedBytes) + "."
            + Base64.encodeURL(JSONValue.object(payload).serializedBytes)
        return signingInput + "." + Base64.encodeURL(try key.signature(for: Array(signingInput.utf8)))
    }

    /// `base64url(header).base64url(payload).base64url(r‖s)`.
    package static func sign(
        header: JSONObject, payload: JSONObject,
        with key: P256.Signing.PrivateKey
    ) throws(CryptoError) -> String {
        let signingInput =
            Base64.encodeURL(JSONValue.object(header).serializedBytes) + "."
            + Base64.encodeURL(JSONValue.object(payload).serializedBytes)
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature.rawRepresentation)
    }
}
