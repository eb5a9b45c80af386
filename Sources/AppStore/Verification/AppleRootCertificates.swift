package import Crypto

/// Apple's root certificate authorities, identified by the SHA-256 of their DER (facts from
/// Apple's PKI page; the certificates themselves come from the deployment, see
/// `entitle fetch-apple-roots`). A root that matches none of these is refused unless the app
/// allows private roots (test chains).
package enum AppleRootCertificates {
    package static let fingerprints: [String: String] = [
        "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179": "Apple Root CA - G3",
        "c2b9b042dd57830e7d117dac55ac8ae19407d38e41d88f3215bc3a890444a050": "Apple Root CA - G2",
        "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024": "Apple Root CA",
    ]

    /// The name of the Apple root this certificate is, or nil.
    package static func appleRootName(of certificate: Certificate) -> String? {
        fingerprints[certificate.sha256Fingerprint]
    }
}

/// The marker extensions Apple puts on its App Store signing chain (docs/APP_STORE.md §3.4).
package enum AppleMarkerOID {
    /// On the WWDR intermediate.
    package static let intermediate = "1.2.840.113635.100.6.2.1"
    /// On the App Store receipt-signing leaf.
    package static let leaf = "1.2.840.113635.100.6.11.1"
}
