internal import COpenSSL
internal import CShims
package import Foundation

/// RSA with PKCS#1 v1.5 padding and SHA-256 (JWS `RS256`): what Google's service-account
/// assertions and its OIDC tokens use. Keys under 2048 bits are refused.
package enum RSA {
    static let minimumBits = 2048

    /// An RSA private key, e.g. the `private_key` of a Google service-account key file.
    package struct PrivateKey: Sendable {
        let key: EVPKey

        /// Reads a PEM private key (PKCS#8 `BEGIN PRIVATE KEY`, or PKCS#1 `BEGIN RSA PRIVATE KEY`).
        package init(pemRepresentation pem: String) throws(CryptoError) {
            let bio = try MemoryBIO(reading: Array(pem.utf8))
            guard let raw = PEM_read_bio_PrivateKey(bio.raw, nil, { _, _, _, _ in 0 }, nil) else {
                throw CryptoError.invalidKey(drainOpenSSLErrors("no PEM private key found"))
            }
            key = EVPKey(taking: raw)
            try RSA.require(key)
        }

        /// A fresh random key of `bits` bits (public exponent 65537): the test store's stand-in
        /// for Google's token-signing keys.
        package init(generatingBits bits: Int = 2048) throws(CryptoError) {
            guard bits >= RSA.minimumBits, bits <= 8192, let raw = entitle_rsa_generate(UInt32(bits)) else {
                throw CryptoError.internalFailure(drainOpenSSLErrors("RSA key generation failed"))
            }
            key = EVPKey(taking: raw)
        }

        /// The PKCS#8 PEM text of this key.
        package var pemRepresentation: String {
            get throws(CryptoError) { try key.privateKeyPEM() }
        }

        package var publicKey: PublicKey {
            get throws(CryptoError) { PublicKey(validated: try EVPKey.fromSPKI(key.spkiDER())) }
        }

        /// The RS256 signature of `data` (SHA-256, PKCS#1 v1.5).
        package func signature(for data: some ContiguousBytes) throws(CryptoError) -> [UInt8] {
            guard let context = EVP_MD_CTX_new() else { throw CryptoError.internalFailure("EVP_MD_CTX_new failed") }
            defer { EVP_MD_CTX_free(context) }
            var length = 0
            let ready = data.withUnsafeBytes { bytes in
                EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.raw) == 1
                    && EVP_DigestSign(context, nil, &length, bytes.baseAddress, bytes.count) == 1
            }
            guard ready else { throw CryptoError.internalFailure(drainOpenSSLErrors("EVP_DigestSign failed")) }
            var signature = [UInt8](repeating: 0, count: length)
            let signed = data.withUnsafeBytes { bytes in
                EVP_DigestSign(context, &signature, &length, bytes.baseAddress, bytes.count) == 1
            }
            guard signed else { throw CryptoError.internalFailure(drainOpenSSLErrors("EVP_DigestSign failed")) }
            return Array(signature.prefix(length))
        }
    }

    /// An RSA public key.
    package struct PublicKey: Sendable {
        let key: EVPKey

        init(validated key: EVPKey) { self.key = key }

        /// From a JWK's `n` and `e` (big-endian bytes, base64url-decoded).
        package init(modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) {
            guard !modulus.isEmpty, !exponent.isEmpty, exponent.count <= 8,
                let raw = entitle_rsa_public_key(modulus, modulus.count, exponent, exponent.count)
            else { throw CryptoError.invalidKey(drainOpenSSLErrors("not an RSA modulus and exponent")) }
            key = EVPKey(taking: raw)
            try RSA.require(key)
        }

        /// From a `BEGIN PUBLIC KEY` PEM.
        package init(pemRepresentation pem: String) throws(CryptoError) {
            let bio = try MemoryBIO(reading: Array(pem.utf8))
            guard let raw = PEM_read_bio_PUBKEY(bio.raw, nil, nil, nil) else {
                throw CryptoError.invalidKey(drainOpenSSLErrors("no PEM public key found"))
            }
            key = EVPKey(taking: raw)
            try RSA.require(key)
        }

        /// The modulus and public exponent, big-endian (a JWK's `n` and `e`, before base64url).
        package var components: (modulus: [UInt8], exponent: [UInt8]) {
            get throws(CryptoError) {
                var modulus = [UInt8](repeating: 0, count: 1024)
                var exponent = [UInt8](repeating: 0, count: 16)
                let modulusLength = entitle_rsa_component(key.raw, 0, &modulus, modulus.count)
                let exponentLength = entitle_rsa_component(key.raw, 1, &exponent, exponent.count)
                guard modulusLength > 0, exponentLength > 0 else {
                    throw CryptoError.internalFailure(drainOpenSSLErrors("cannot read the RSA key's modulus and exponent"))
                }
                return (Array(modulus.prefix(Int(modulusLength))), Array(exponent.prefix(Int(exponentLength))))
            }
        }

        /// SubjectPublicKeyInfo DER.
        package var derRepresentation: [UInt8] {
            get throws(CryptoError) { try key.spkiDER() }
        }

        package var pemRepresentation: String {
            get throws(CryptoError) { EVPKey.publicKeyPEM(try derRepresentation) }
        }

        /// True when `signature` is the RS256 signature of `data` by this key.
        package func isValidSignature(_ signature: [UInt8], for data: some ContiguousBytes) -> Bool {
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            let valid = data.withUnsafeBytes { bytes in
                EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key.raw) == 1
                    && EVP_DigestVerify(context, signature, signature.count, bytes.baseAddress, bytes.count) == 1
            }
            if !valid { clearOpenSSLErrors() }
            return valid
        }
    }

    static func require(_ key: EVPKey) throws(CryptoError) {
        let bits = Int(entitle_rsa_bits(key.raw))
        guard bits > 0 else { throw CryptoError.unsupportedKey("not an RSA key") }
        guard bits >= minimumBits else { throw CryptoError.unsupportedKey("RSA key of \(bits) bits (at least \(minimumBits))") }
    }
}
