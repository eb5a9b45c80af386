import AppStore
import Crypto
import Entitlements
import Foundation
import JSON

/// What the test store's App Store checks of an offer before it sells it (docs/TEST_STORE.md,
/// "Offers"), as StoreKit answers a purchase with it: an introductory offer only to a customer
/// new to the group, a win-back offer only to one who left it, a promotional offer only to one who
/// has or had a subscription in the group, when it is configured for the product and signed with
/// the app's key within 24 hours with a nonce not used before (the v1 signature, or the JWS and
/// its claims). Each refusal names StoreKit's `Product.PurchaseError`.
struct AppStoreOfferCheck {
    /// What the App Store knows of the customer in the product's subscription group.
    struct Customer {
        var subscribedBefore: Bool
        var subscribedNow: Bool
        /// The transactions the store sold the customer (a promotional JWS may name one).
        var transactionIds: Set<String>
    }

    /// How long a promotional offer's signature is good for.
    static let signatureLifetime: Int64 = 86_400_000

    let app: AppConfiguration
    let productId: String
    let appAccountToken: String?
    /// The store's (moved) clock and the machine's: a signature is fresh by either, as the
    /// developer's server may sign with the moved clock (Entitle) or the machine's (Apple's
    /// libraries).
    let now: Int64
    let machineNow: Int64
    /// The nonces of the promotional offers the store sold (each is good once).
    let usedNonces: Set<String>

    /// Checks the offer; answers a promotional offer's nonce (lower-cased), for the store to
    /// remember once it sells.
    func check(_ offer: TestStoreOffer, customer: Customer) throws(ServiceError) -> String? {
        switch offer.kind {
        case .introductory:
            guard !customer.subscribedBefore else {
                throw TestStoreOffer.refused("ineligibleForOffer", "the customer has subscribed in this group before")
            }
        case .winBack:
            guard customer.subscribedBefore, !customer.subscribedNow else {
                throw TestStoreOffer.refused(
                    "ineligibleForOffer", "a win-back offer is for a customer whose subscription in the group ended")
            }
        case .offerCode:
            break
        case .promotional:
            guard customer.subscribedBefore else {
                throw TestStoreOffer.refused(
                    "ineligibleForOffer", "a promotional offer is for a customer who has or had a subscription in the group")
            }
            let identifier = offer.pricing.identifier ?? ""
            guard app.offers.values.contains(where: { $0.productId == productId && $0.offerIdentifier == identifier }) else {
                throw TestStoreOffer.refused("invalidOfferIdentifier", "\(productId) has no promotional offer \"\(identifier)\"")
            }
            let nonce: String
            switch offer.signature {
            case .v1(let keyIdentifier, let given, let timestamp, let signature)?:
                nonce = try checkV1(
                    offerIdentifier: identifier, keyIdentifier: keyIdentifier, nonce: given, timestamp: timestamp, signature: signature)
            case .jws(let compact)?:
                nonce = try checkJWS(compact, offerIdentifier: identifier, customer: customer)
            case nil:
                throw TestStoreOffer.refused("missingOfferParameters", "a promotional offer needs its signature")
            }
            guard !usedNonces.contains(nonce) else { throw Self.badSignature("the nonce \(nonce) was used before") }
            return nonce
        }
        return nil
    }

    /// The v1 signature: the key the app's own, a UUID nonce, a timestamp within 24 hours, and
    /// an ECDSA signature over the fields Apple joins (docs/APP_STORE.md §1).
    private func checkV1(
        offerIdentifier: String, keyIdentifier: String, nonce: String, timestamp: Int64, signature: String
    ) throws(ServiceError) -> String {
        guard keyIdentifier == app.signingKey.keyId else {
            throw Self.badSignature("the key \(keyIdentifier) is not the app's In-App Purchase key")
        }
        guard let uuid = UUID(uuidString: nonce) else { throw Self.badSignature("the nonce is not a UUID") }
        try checkFresh(timestamp)
        let payload = PromotionalOfferSigner.payload(
            bundleId: app.bundleId, keyId: keyIdentifier, productIdentifier: productId, subscriptionOfferID: offerIdentifier,
            appAccountToken: appAccountToken ?? "", nonce: uuid, timestamp: timestamp)
        // Why it does not decode matters as little to the answer as to StoreKit's.
        guard let der = try? Base64.decode(signature), let parsed = try? ECDSASignature(derRepresentation: der) else {
            throw Self.badSignature("the signature is not base64 of a DER ECDSA signature")
        }
        guard try publicKey().isValidSignature(parsed, for: payload) else {
            throw Self.badSignature("the signature does not verify over these fields with the app's key")
        }
        return uuid.lowercasedString
    }

    /// The JWS: ES256 by the app's key, for this app, product and offer, issued within 24 hours;
    /// a `transactionId` claim must be one the customer has.
    private func checkJWS(_ compact: String, offerIdentifier: String, customer: Customer) throws(ServiceError) -> String {
        guard let jws = try? CompactJWS(compact) else { throw Self.badSignature("not a compact JWS") }  // whatever is wrong with it
        guard jws.algorithm == "ES256", jws.header["kid"]?.stringValue == app.signingKey.keyId else {
            throw Self.badSignature("the JWS is not ES256 with the app's In-App Purchase key (kid)")
        }
        guard jws.isValidES256Signature(publicKey: try publicKey()) else {
            throw Self.badSignature("the JWS signature does not verify with the app's key")
        }
        let claims = jws.payload
        let expected: [(String, String)] = [
            ("aud", "promotional-offer"), ("bid", app.bundleId), ("productId", productId), ("offerIdentifier", offerIdentifier),
        ]
        for (name, value) in expected where claims[name]?.stringValue != value {
            throw Self.badSignature("the claim \"\(name)\" is not \"\(value)\"")
        }
        if let issuer = app.signingKey.issuerId, claims["iss"]?.stringValue != issuer {
            throw Self.badSignature("the claim \"iss\" is not the key's issuer")
        }
        guard let nonce = claims["nonce"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
            throw Self.badSignature("the claim \"nonce\" is not a UUID")
        }
        guard let issuedAt = claims["iat"]?.integer(in: 0...253_402_300_799) else {
            throw Self.badSignature("the claim \"iat\" is not whole seconds")
        }
        try checkFresh(issuedAt * 1000)
        if let transaction = claims["transactionId"] {
            guard let id = transaction.stringValue, customer.transactionIds.contains(id) else {
                throw Self.badSignature("the claim \"transactionId\" is not one of the customer's transactions")
            }
        }
        return nonce.lowercasedString
    }

    private func checkFresh(_ signedAt: Int64) throws(ServiceError) {
        guard abs(now - signedAt) <= Self.signatureLifetime || abs(machineNow - signedAt) <= Self.signatureLifetime else {
            throw Self.badSignature("the signature was made more than 24 hours from now")
        }
    }

    private func publicKey() throws(ServiceError) -> P256.Signing.PublicKey {
        do { return try app.signingKey.privateKey.publicKey } catch {
            throw ServiceError(status: 500, code: "INTERNAL", message: "the app's key has no public key: \(error)")
        }
    }

    private static func badSignature(_ why: String) -> ServiceError { TestStoreOffer.refused("invalidOfferSignature", why) }
}
