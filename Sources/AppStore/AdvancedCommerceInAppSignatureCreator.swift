package import Crypto
package import Foundation
package import JSON

/// An Advanced Commerce in-app request object (`CREATE_SUBSCRIPTION`, `CREATE_ONE_TIME_CHARGE`,
/// `MODIFY_SUBSCRIPTION`, `REACTIVATE_SUBSCRIPTION`), kept as its JSON so that every field Apple
/// defines passes through unchanged. Construction checks the members Apple fixes per type.
package struct AdvancedCommerceInAppRequest: Sendable, Equatable {
    package static let operations: Set<String> = [
        "CREATE_SUBSCRIPTION", "CREATE_ONE_TIME_CHARGE", "MODIFY_SUBSCRIPTION", "REACTIVATE_SUBSCRIPTION",
    ]

    package let json: JSONObject

    package enum ValidationError: Error, Equatable, CustomStringConvertible {
        case unknownOperation(String?)
        case unsupportedVersion(String?)
        package var description: String {
            switch self {
            case .unknownOperation(let value): "unknown Advanced Commerce operation \(value ?? "(missing)")"
            case .unsupportedVersion(let value): "unsupported Advanced Commerce request version \(value ?? "(missing)")"
            }
        }
    }

    package init(_ json: JSONObject) throws(ValidationError) {
        let operation = json["operation"]?.stringValue
        guard let operation, Self.operations.contains(operation) else { throw .unknownOperation(operation) }
        let version = json["version"]?.stringValue
        guard version == "1" else { throw .unsupportedVersion(version) }
        self.json = json
    }
}

/// The Advanced Commerce in-app request JWS: claim `request` is the **standard, padded** base64
/// of the request's UTF-8 JSON (not base64url).
package struct AdvancedCommerceInAppSignatureCreator: Sendable {
    package let creator: JWSSignatureCreator

    package init(_ creator: JWSSignatureCreator) { self.creator = creator }

    package func createSignature(
        request: AdvancedCommerceInAppRequest, nonce: UUID = SecureRandom.uuid(),
        issuedAt: Date = Date()
    ) throws(CryptoError) -> String {
        let encoded = Base64.encode(JSONValue.object(request.json).serializedBytes)
        return try creator.createSignature(
            audience: .advancedCommerce, featureClaims: ["request": .string(encoded)],
            nonce: nonce, issuedAt: issuedAt)
    }
}
