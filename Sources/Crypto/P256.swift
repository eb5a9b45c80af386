internal import COpenSSL
internal import CShims
package import Foundation

/// ECDSA on NIST P-256 with SHA-256, named after swift-crypto's `P256.Signing`.
package enum P256 {
    package enum Signing {}
}

extension P256.Signing {
    /// A P-256 private key, e.g. an App Store Connect In-App Purchase key (`.p8`).
    package struct PrivateKey: Sendable {
        let key: EVPKey

        /// A fresh random key.
        package init() throws(CryptoError) {
            guard let raw = entitle_generate_p256_key() else {
                throw CryptoError.internalFailure(drainOpenSSLErrors("P-256 key generation failed"))
            }
            key = EVPKey(taking: raw)
        }

        /// Reads a PEM private key: PKCS#8 (`BEGIN PRIVATE KEY`, the `.p8` format) or SEC1
        /// (`BEGIN EC PRIVATE KEY`). Encrypted keys are refused rather than prompting for a password.
        package init(pemRepresentation pem: String) throws(CryptoError) {
            let bio = try MemoryBIO(reading: Array(pem.utf8))
            guard let raw = PEM_read_bio_PrivateKey(bio.raw, nil, { _, _, _, _ in 0 }, nil) else {
                throw CryptoError.invalidKey(drainOpenSSLErrors("no PEM private key found"))
            }
            key = EVPKey(taking: raw)
            try key.requireP256()
        }

        /// The PKCS#8 PEM text of this key (what `entitle keygen` writes).
        package var pemRepresentation: String {
            get throws(CryptoError) { try key.privateKeyPEM() }
        }

        package var publicKey: PublicKey {
            get throws(CryptoError) { try PublicKey(derRepresentation: key.spkiDER()) }
        }

        /// Signs SHA-256(`data`). ECDSA is randomised: two signatures of one message differ.
        package func signature(for data: some ContiguousBytes) throws(CryptoError) -> ECDSASignature {
            try signature(forDigest: SHA256.hash(data))
        }

        /// Signs a ready-made SHA-256 digest.
        package func signature(forDigest digest: [UInt8]) throws(CryptoError) -> ECDSASignature {
            try ECDSASignature(derRepresentation: derSignature(forDigest: digest))
        }

        /// Signs SHA-256(`data`) and returns OpenSSL's DER `ECDSA-Sig-Value` as is (the v1 offer
        /// format), skipping the round trip through the raw form.
        package func derSignature(for data: some ContiguousBytes) throws(CryptoError) -> [UInt8] {
            try derSignature(forDigest: SHA256.hash(data))
        }

        package func derSignature(forDigest digest: [UInt8]) throws(CryptoError) -> [UInt8] {
            var der = [UInt8](repeating: 0, count: 80)
            var length = der.count
            let signed = key.withContext(.sign) { context in
                EVP_PKEY_sign(context, &der, &length, digest, digest.count) == 1
            }
            guard signed == true else {
                throw CryptoError.internalFailure(drainOpenSSLErrors("EVP_PKEY_sign failed"))
            }
            return Array(der.prefix(length))
        }
    }

    /// A P-256 public key.
    package struct PublicKey: Sendable {
        let key: EVPKey

        /// From SubjectPublicKeyInfo DER.
        package init(derRepresentation der: some Collection<UInt8>) throws(CryptoError) {
            key = try EVPKey.fromSPKI(Array(der))
            try key.requireP256()
        }

        /// From a `BEGIN PUBLIC KEY` PEM.
        package init(pemRepresentation pem: String) throws(CryptoError) {
            let bio = try MemoryBIO(reading: Array(pem.utf8))
            guard let raw = PEM_read_bio_PUBKEY(bio.raw, nil, nil, nil) else {
                throw CryptoError.invalidKey(drainOpenSSLErrors("no PEM public key found"))
            }
            key = EVPKey(taking: raw)
            try key.requireP256()
        }

        init(validated key: EVPKey) { self.key = key }

        /// SubjectPublicKeyInfo DER.
        package var derRepresentation: [UInt8] {
            get throws(CryptoError) { try key.spkiDER() }
        }

        package var pemRepresentation: String {
            get throws(CryptoError) { EVPKey.publicKeyPEM(try derRepresentation) }
        }

        /// True when `signature` is a valid ECDSA signature of SHA-256(`data`) by this key.
        /// Both low-S and high-S forms are accepted, as OpenSSL does.
        package func isValidSignature(_ signature: ECDSASignature, for data: some ContiguousBytes) -> Bool {
            isValidSignature(signature, forDigest: SHA256.hash(data))
        }

        package func isValidSignature(_ signature: ECDSASignature, forDigest digest: [UInt8]) -> Bool {
            let der = signature.derRepresentation
            let result = key.withContext(.verify) { context in
                EVP_PKEY_verify(context, der, der.count, digest, digest.count)
            }
            if result != 1 { clearOpenSSLErrors() }
            return result == 1
        }
    }
}
