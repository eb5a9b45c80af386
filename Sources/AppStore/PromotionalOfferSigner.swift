package import Crypto
package import Foundation

/// The version 1 promotional-offer signature (StoreKit 1 `SKPaymentDiscount`, StoreKit 2
/// `promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`), byte-exact to docs/APP_STORE.md §1.
package struct PromotionalOfferSigner: Sendable {
    /// U+2063 INVISIBLE SEPARATOR, the field separator Apple specifies.
    package static let separator = "\u{2063}"

    private let privateKey: P256.Signing.PrivateKey
    package let keyId: String
    package let bundleId: String

    package init(privateKey: P256.Signing.PrivateKey, keyId: String, bundleId: String) {
        self.privateKey = privateKey
        self.keyId = keyId
        self.bundleId = bundleId
    }

    /// The exact UTF-8 bytes that are signed. `appAccountToken` may be empty; it and the nonce
    /// are lower-cased (Unicode default mapping), nothing else is touched.
    package static func payload(
        bundleId: String, keyId: String, productIdentifier: String,
        subscriptionOfferID: String, appAccountToken: String,
        nonce: UUID, timestamp: Int64
    ) -> [UInt8] {
        let fields = [
            bundleId, keyId, productIdentifier, subscriptionOfferID, appAccountToken.lowercased(),
            nonce.lowercasedString, String(timestamp),
        ]
        return Array(fields.joined(separator: separator).utf8)
    }

    /// Standard base64 (padded) of the DER ECDSA signature over `payload(…)`.
    package func signature(
        productIdentifier: String, subscriptionOfferID: String, appAccountToken: String,
        nonce: UUID, timestamp: Int64
    ) throws(CryptoError) -> String {
        let payload = Self.payload(
            bundleId: bundleId, keyId: keyId, productIdentifier: productIdentifier,
            subscriptionOfferID: subscriptionOfferID, appAccountToken: appAccountToken,
            nonce: nonce, timestamp: timestamp)
        return Base64.encode(try privateKey.derSignature(for: payload))
    }
}
