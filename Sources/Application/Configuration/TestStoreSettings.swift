import AppStore
package import Crypto
import Foundation
package import JSON

/// `"testStore"`: the test store (docs/TEST_STORE.md), for deployments that are not production.
/// It signs with its own chain (`entitle test-store init --out DIR` makes one), which every app of
/// the deployment then trusts; a deployment with Production or Apple's roots refuses it.
package struct TestStoreSettings: Sendable {
    package var enabled = false
    /// The chain's folder: `root.pem`, `intermediate.pem`, `leaf.pem` and `leaf.key`.
    package var chainFolder: String?
    /// The chain, loaded at start-up when enabled.
    package var chain: TestStoreChain?

    package init() {}

    package static let section = ConfigurationSection<TestStoreSettings>(
        "testStore",
        [
            .init("enabled", .flag) { $0.enabled = $1.flag ?? $0.enabled },
            .init("chain", .path) { $0.chainFolder = $1.text },
        ])
}

/// The test store's signing chain: what its App Store signs with, shaped like Apple's.
package struct TestStoreChain: Sendable {
    package let root: Certificate
    package let intermediate: Certificate
    package let leaf: Certificate
    package let leafKey: P256.Signing.PrivateKey
    /// What its Google Play signs push tokens with (`google-token.key`); a chain made before the
    /// test store sold on Google Play has none, and its Google Play refuses to sell.
    package let google: TestStoreGoogleKey?

    package init(
        root: Certificate, intermediate: Certificate, leaf: Certificate, leafKey: P256.Signing.PrivateKey, google: TestStoreGoogleKey?
    ) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
        self.google = google
    }

    /// The e-mail of the service account `entitle test-store init` writes for a test deployment.
    package static let serviceAccountEmail = "entitle@entitle-test-store.iam.gserviceaccount.com"

    /// The chain in `folder` (as `entitle test-store init` writes it).
    package init(folder: String) throws(ConfigurationValueError) {
        func certificate(_ name: String) throws(ConfigurationValueError) -> Certificate {
            do { return try Certificate(pemEncoded: try String(contentsOfFile: "\(folder)/\(name)", encoding: .utf8)) } catch {
                throw ConfigurationValueError(
                    "\(folder)/\(name) is not a readable PEM certificate (entitle test-store init --out DIR makes a chain)")
            }
        }
        root = try certificate("root.pem")
        intermediate = try certificate("intermediate.pem")
        leaf = try certificate("leaf.pem")
        do {
            leafKey = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: "\(folder)/leaf.key", encoding: .utf8))
        } catch {
            throw ConfigurationValueError("\(folder)/leaf.key is not a readable P-256 key")
        }
        let googlePath = "\(folder)/google-token.key"
        guard FileManager.default.fileExists(atPath: googlePath) else {
            google = nil
            return
        }
        do {
            google = try TestStoreGoogleKey(
                privateKey: try RSA.PrivateKey(pemRepresentation: try String(contentsOfFile: googlePath, encoding: .utf8)))
        } catch {
            throw ConfigurationValueError("\(googlePath) is not a readable RSA key of 2048 bits or more")
        }
    }

    /// The files of the chain, as written to its folder: Apple's chain and key; Google's token
    /// key, its JWK set, and a service account for the deployment's apps to call the Play
    /// Developer API as.
    package func files() throws -> [(name: String, text: String)] {
        var files = [
            ("root.pem", root.pemRepresentation), ("intermediate.pem", intermediate.pemRepresentation),
            ("leaf.pem", leaf.pemRepresentation), ("leaf.key", try leafKey.pemRepresentation),
        ]
        if let google {
            files += [
                ("google-token.key", try google.privateKey.pemRepresentation),
                ("google-jwks.json", JSONValue.object(try google.jwks()).serializedString + "\n"),
                ("google-service-account.json", try TestStoreGoogleKey.serviceAccountFile(email: Self.serviceAccountEmail) + "\n"),
            ]
        }
        return files
    }

    /// Signs `payload` as Apple signs its data: ES256 with the chain in `x5c`.
    package func sign(_ payload: JSONObject) throws -> String {
        let header: JSONObject = [
            "alg": "ES256", "x5c": .array([leaf, intermediate, root].map { .string(Base64.encode($0.derRepresentation)) }),
        ]
        return try JWSSigner.sign(header: header, payload: payload, with: leafKey)
    }
}

extension EntitleConfiguration {
    /// With the test store enabled: its chain loaded, the deployment checked (no Production, no
    /// Apple root: the test store must never sign for a real app) and its root trusted by every app.
    mutating func enableTestStore(reader: inout ConfigurationReader) {
        guard testStore.enabled else { return }
        guard let folder = testStore.chainFolder else {
            return reader.problem("testStore.chain", "the test store needs a chain: entitle test-store init --out DIR makes one")
        }
        let chain: TestStoreChain
        do { chain = try TestStoreChain(folder: folder) } catch { return reader.problem("testStore.chain", error.description) }
        testStore.chain = chain
        for index in apps.indices {
            let app = apps[index]
            if app.environments.contains(.production) {
                reader.problem("testStore", "app \(app.id) lists the Production environment: the test store is for test deployments only")
            }
            if let apple = app.verification.rootCertificates.lazy.compactMap(AppleRootCertificates.appleRootName).first {
                reader.problem("testStore", "app \(app.id) trusts Apple's \(apple): the test store is for test deployments only")
            }
            if !apps[index].verification.rootCertificates.contains(chain.root) {
                apps[index].verification.rootCertificates.append(chain.root)
            }
        }
    }
}
