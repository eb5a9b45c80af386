package import AppStore
import Crypto

/// The signers of one app, built once from its configuration.
package struct AppSigners: Sendable {
    package let promotionalOffer: PromotionalOfferSigner
    /// Present only when the key has an issuer ID: the JWS forms need `iss`.
    package let promotionalOfferV2: PromotionalOfferV2SignatureCreator?
    package let introductoryOfferEligibility: IntroductoryOfferEligibilitySignatureCreator?

    package init(app: AppConfiguration) {
        let key = app.signingKey
        promotionalOffer = PromotionalOfferSigner(privateKey: key.privateKey, keyId: key.keyId, bundleId: app.bundleId)
        if let issuerId = key.issuerId {
            let creator = JWSSignatureCreator(
                privateKey: key.privateKey, keyId: key.keyId, issuerId: issuerId,
                bundleId: app.bundleId)
            promotionalOfferV2 = PromotionalOfferV2SignatureCreator(creator)
            introductoryOfferEligibility = IntroductoryOfferEligibilitySignatureCreator(creator)
        } else {
            promotionalOfferV2 = nil
            introductoryOfferEligibility = nil
        }
    }
}
