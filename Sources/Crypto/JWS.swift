import JSON

/// Why a compact JWS could not be read. Each case names the segment at fault.
public enum JWSError: Error, Sendable, Equatable, CustomStringConvertible {
    case segmentCount(Int)
    case invalidBase64URL(segment: String)
    case invalidJSON(segment: String, detail: String)
    case notAnObject(segment: String)

    public var description: String {
        switch self {
        case .segmentCount(let count): "a compact JWS has 3 segments, found \(count)"
        case .invalidBase64URL(let segment): "the \(segment) is not base64url"
        case .invalidJSON(let segment, let detail): "the \(segment) is not JSON: \(detail)"
        case .notAnObject(let segment): "the \(segment) is not a JSON object"
        }
    }
}

/// A compact JWS (RFC 7515 §7.1) taken apart; nothing is trusted until `isValidES256Signature`.
public struct CompactJWS: Sendable {
    public let header: JSONObject
    public let payload: JSONObject
    /// The decoded payload bytes, exactly as signed.
    public let payloadBytes: [UInt8]
    /// The decoded signature bytes (64 for a well-formed ES256 signature).
    public let signature: [UInt8]
    /// `base64url(header) "." base64url(payload)`, the bytes the signature covers.
    public let signingInput: [UInt8]

    /// Splits and decodes `compact`. Surrounding whitespace is not removed: callers trim files.
    public init(_ compact: some StringProtocol) throws(JWSError) {
        let bytes = Array(compact.utf8)
        var dots: [Int] = []
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            throw JWSError.segmentCount(bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).count)
        }
        let headerBytes = try Self.decodeSegment(bytes[0..<dots[0]], name: "header")
        payloadBytes = try Self.decodeSegment(bytes[(dots[0] + 1)..<dots[1]], name: "payload")
        signature = try Self.decodeSegment(bytes[(dots[1] + 1)...], name: "signature")
        header = try Self.parseObject(headerBytes, name: "header")
        payload = try Self.parseObject(payloadBytes, name: "payload")
        signingInput = Array(bytes[0..<dots[1]])
    }

    /// The header's `alg`, if it is a string.
    public var algorithm: String? { header["alg"]?.stringValue }

    /// True when the signature is a 64-byte ES256 signature over the signing input by `key`.
    public func isValidES256Signature(publicKey: P256.Signing.PublicKey) -> Bool {
        guard let parsed = try? ECDSASignature(rawRepresentation: signature) else { return false }
        return publicKey.isValidSignature(parsed, for: signingInput)
    }

    private static func decodeSegment(_ characters: ArraySlice<UInt8>, name: String) throws(JWSError) -> [UInt8] {
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

/// Creates compact ES256 JWS tokens.
public enum JWSSigner {
    /// `base64url(header).base64url(payload).base64url(r‖s)`.
    public static func sign(header: JSONObject, payload: JSONObject,
                            with key: P256.Signing.PrivateKey) throws(CryptoError) -> String {
        let signingInput = Base64.encodeURL(JSONValue.object(header).serializedBytes) + "."
            + Base64.encodeURL(JSONValue.object(payload).serializedBytes)
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature.rawRepresentation)
    }
}
