import Crypto
import Foundation
import Instants
import JSON

/// The StoreKit JWS audiences Entitle signs for (APPSTORE.md §2).
public enum SignatureAudience: String, Sendable, CaseIterable {
    case promotionalOffer = "promotional-offer"
    case introductoryOfferEligibility = "introductory-offer-eligibility"
    case advancedCommerce = "advanced-commerce-api"
}

/// The common construction of every StoreKit JWS that the developer's server signs:
/// header `{"alg":"ES256","kid","typ":"JWT"}`, claims `iss`, integer `iat`, `aud`, `bid`,
/// lower-case `nonce`, no `exp`, ES256 raw `r‖s` signature.
public struct JWSSignatureCreator: Sendable {
    private let privateKey: P256.Signing.PrivateKey
    public let keyId: String
    public let issuerId: String
    public let bundleId: String

    public init(privateKey: P256.Signing.PrivateKey, keyId: String, issuerId: String, bundleId: String) {
        self.privateKey = privateKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    /// Signs the base claims plus `featureClaims`. `issuedAt` is truncated to whole seconds.
    public func createSignature(
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

/// Promotional offer v2 (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`, iOS 26+).
public struct PromotionalOfferV2SignatureCreator: Sendable {
    public let creator: JWSSignatureCreator

    public init(_ creator: JWSSignatureCreator) { self.creator = creator }

    /// `transactionId` is optional and omitted from the claims when nil (never `null`).
    public func createSignature(
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
public struct IntroductoryOfferEligibilitySignatureCreator: Sendable {
    public let creator: JWSSignatureCreator

    public init(_ creator: JWSSignatureCreator) { self.creator = creator }

    public func createSignature(
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
