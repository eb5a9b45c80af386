package import Crypto
package import Foundation
import Instants
package import JSON

/// The StoreKit JWS audiences Entitle signs for (docs/APP_STORE.md §2).
package enum SignatureAudience: String, Sendable, CaseIterable {
    case promotionalOffer = "promotional-offer"
    case introductoryOfferEligibility = "introductory-offer-eligibility"
    case advancedCommerce = "advanced-commerce-api"
}

/// The common construction of every StoreKit JWS that the developer's server signs:
/// header `{"alg":"ES256","kid","typ":"JWT"}`, claims `iss`, integer `iat`, `aud`, `bid`,
/// lower-case `nonce`, no `exp`, ES256 raw `r‖s` signature.
package struct JWSSignatureCreator: Sendable {
    private let privateKey: P256.Signing.PrivateKey
    package let keyId: String
    package let issuerId: String
    package let bundleId: String

    package init(privateKey: P256.Signing.PrivateKey, keyId: String, issuerId: String, bundleId: String) {
        self.privateKey = privateKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    /// Signs the base claims plus `featureClaims`. `issuedAt` is truncated to whole seconds.
    package func createSignature(
        audience: SignatureAudience, featureClaims: JSONObject,
        nonce: UUID, issuedAt: Date
    ) throws(CryptoError) -> String {
        let header: JSONObject = ["alg": "ES256", "kid": .string(keyId), "typ": "JWT"]
        var claims: JSONObject = [
            "iss": .string(issuerId),
            "iat": .int(Milliseconds.since1970(issuedAt) / 1000),
            "aud": .string(audience.rawValue),
            "bid": .string(bundleId),
            "nonce": .string(nonce.lowercasedString),
        ]
        for member in featureClaims.members { claims[member.key] = member.value }
        return try JWSSigner.sign(header: header, payload: claims, with: privateKey)
    }
}

/// Promotional offer v2 (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`, back-deployed to iOS 15 by the current SDK).
package struct PromotionalOfferV2SignatureCreator: Sendable {
    package let creator: JWSSignatureCreator

    package init(_ creator: JWSSignatureCreator) { self.creator = creator }

    /// `transactionId` is optional and omitted from the claims when nil (never `null`).
    package func createSignature(
        productId: String, offerIdentifier: String, transactionId: String?,
        nonce: UUID = SecureRandom.uuid(), issuedAt: Date = Date()
    ) throws(CryptoError) -> String {
        var claims: JSONObject = ["productId": .string(productId), "offerIdentifier": .string(offerIdentifier)]
        if let transactionId { claims["transactionId"] = .string(transactionId) }
        return try creator.createSignature(
            audience: .promotionalOffer, featureClaims: claims,
            nonce: nonce, issuedAt: issuedAt)
    }
}

/// Introductory-offer eligibility (`Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`).
package struct IntroductoryOfferEligibilitySignatureCreator: Sendable {
    package let creator: JWSSignatureCreator

    package init(_ creator: JWSSignatureCreator) { self.creator = creator }

    package func createSignature(
        productId: String, allowIntroductoryOffer: Bool, transactionId: String,
        nonce: UUID = SecureRandom.uuid(), issuedAt: Date = Date()
    ) throws(CryptoError) -> String {
        let claims: JSONObject = [
            "productId": .string(productId),
            "allowIntroductoryOffer": .bool(allowIntroductoryOffer),
            "transactionId": .string(transactionId),
        ]
        return try creator.createSignature(
            audience: .introductoryOfferEligibility, featureClaims: claims,
            nonce: nonce, issuedAt: issuedAt)
    }
}
