package import Crypto
package import Foundation
package import JSON

/// A throwaway App Store-like chain minted by `make-chain.sh`, and JWS signed with its leaf key:
/// the private stand-in for Apple's signing chain in verification tests.
package final class TestChain: @unchecked Sendable {
    package let folder: URL
    package let mintedAt: Date
    package let root: Certificate
    package let otherRoot: Certificate
    package let leafKey: P256.Signing.PrivateKey

    /// With `ocspURLs` (leaf's responder, intermediate's responder) the certificates name them.
    package init(ocspURLs: (leaf: String, intermediate: String)? = nil) throws {
        folder = try makeTemporaryDirectory("entitle-chain")
        var arguments = [packageRoot.appendingPathComponent("Tests/TestSupport/make-chain.sh").path, folder.path]
        if let ocspURLs { arguments += [ocspURLs.leaf, ocspURLs.intermediate] }
        let result = try runProcess("/bin/sh", arguments)
        guard result.status == 0 else { throw TestHTTPClient.ClientError(description: "make-chain.sh failed: \(result.stderr)") }
        // After minting: every certificate's notBefore (whole seconds) is at or before this instant.
        mintedAt = Date()
        root = try Certificate.load(contentsOf: folder.appendingPathComponent("root.pem").path)[0]
        otherRoot = try Certificate.load(contentsOf: folder.appendingPathComponent("other-root.pem").path)[0]
        leafKey = try P256.Signing.PrivateKey(
            pemRepresentation: String(
                contentsOf: folder.appendingPathComponent("leaf.key"),
                encoding: .utf8))
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// Standard base64 of a certificate file's DER, as it appears in `x5c`.
    package func x5c(_ name: String) throws -> String {
        Base64.encode(try Certificate.load(contentsOf: folder.appendingPathComponent(name).path)[0].derRepresentation)
    }

    /// The usual header: ES256 and x5c = [leaf, intermediate, root].
    package func header() throws -> JSONObject {
        [
            "alg": "ES256",
            "x5c": .array([.string(try x5c("leaf.pem")), .string(try x5c("intermediate.pem")), .string(try x5c("root.pem"))]),
        ]
    }

    /// A compact JWS over `payload`, signed by `key` (the leaf's by default).
    package func sign(_ payload: JSONObject, header: JSONObject? = nil, key: P256.Signing.PrivateKey? = nil) throws -> String {
        try JWSSigner.sign(header: header ?? self.header(), payload: payload, with: key ?? leafKey)
    }

    /// Milliseconds since 1970 for a date.
    package static func milliseconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
}
