import Crypto
import Foundation
import JSON

/// An Advanced Commerce in-app request object (`CREATE_SUBSCRIPTION`, `CREATE_ONE_TIME_CHARGE`,
/// `MODIFY_SUBSCRIPTION`, `REACTIVATE_SUBSCRIPTION`), kept as its JSON so that every field Apple
/// defines passes through unchanged. Construction checks the members Apple fixes per type.
public struct AdvancedCommerceInAppRequest: Sendable, Equatable {
    public static let operations: Set<String> = [
        "CREATE_SUBSCRIPTION", "CREATE_ONE_TIME_CHARGE", "MODIFY_SUBSCRIPTION", "REACTIVATE_SUBSCRIPTION",
    ]

    public let json: JSONObject

    public enum ValidationError: Error, Equatable, CustomStringConvertible {
        case unknownOperation(String?)
        case unsupportedVersion(String?)
        public var description: String {
            switch self {
            case .unknownOperation(let value): "unknown Advanced Commerce operation \(value ?? "(missing)")"
            case .unsupportedVersion(let value): "unsupported Advanced Commerce request version \(value ?? "(missing)")"
            }
        }
    }

    public init(_ json: JSONObject) throws(ValidationError) {
        let operation = json["operation"]?.stringValue
        guard let operation, Self.operations.contains(operation) else { throw .unknownOperation(operation) }
        let version = json["version"]?.stringValue
        guard version == "1" else { throw .unsupportedVersion(version) }
        self.json = json
    }
}

/// The Advanced Commerce in-app request JWS: claim `request` is the **standard, padded** base64
/// of the request's UTF-8 JSON (not base64url).
public struct AdvancedCommerceInAppSignatureCreator: Sendable {
    public let creator: JWSSignatureCreator

    public init(_ creator: JWSSignatureCreator) { self.creator = creator }

    public func createSignature(
        request: AdvancedCommerceInAppRequest, nonce: UUID = SecureRandom.uuid(),
        issuedAt: Date = Date()
    ) throws(CryptoError) -> String {
        let encoded = Base64.encode(JSONValue.object(request.json).serializedBytes)
        return try creator.createSignature(
            audience: .advancedCommerce, featureClaims: ["request": .string(encoded)],
            nonce: nonce, issuedAt: issuedAt)
    }
}
