import Foundation

/// Independent checks of what Entitle signs: OpenSSL's command line for DER signatures and
/// Python's `cryptography` (Debian's python3-cryptography) for compact ES256 JWS.
package enum IndependentVerifier {
    /// A reference tool that is not installed: says so and names the package, instead of looking
    /// like a signature our code got wrong.
    package struct MissingTool: Error, CustomStringConvertible {
        package let description: String
    }

    private static func requireOpenSSL() throws {
        guard (try? runProcess("openssl", ["version"]))?.status == 0 else {
            throw MissingTool(
                description: "the openssl command line is not installed: apt-get install openssl "
                    + "(or run Scripts/install-dependencies.sh --tests)")
        }
    }

    private static func requirePythonCryptography() throws {
        guard (try? runProcess(systemPython, ["-c", "import cryptography"]))?.status == 0 else {
            throw MissingTool(
                description: "Python's cryptography is not installed for \(systemPython): apt-get install "
                    + "python3-cryptography (or run Scripts/install-dependencies.sh --tests)")
        }
    }

    /// `openssl dgst -sha256 -verify PUB -signature SIG MESSAGE`; true on "Verified OK".
    package static func openSSLVerifies(publicKeyPEM: String, derSignature: [UInt8], message: [UInt8]) throws -> Bool {
        try requireOpenSSL()
        let folder = try makeTemporaryDirectory("entitle-openssl")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pub = folder.appendingPathComponent("pub.pem"), sig = folder.appendingPathComponent("sig.der")
        let msg = folder.appendingPathComponent("message.bin")
        try writeFile(pub, publicKeyPEM)
        try writeFile(sig, bytes: derSignature)
        try writeFile(msg, bytes: message)
        let result = try runProcess("openssl", ["dgst", "-sha256", "-verify", pub.path, "-signature", sig.path, msg.path])
        return result.status == 0 && result.stdout.contains("Verified OK")
    }

    /// Verifies a compact JWS with Python's `cryptography` and returns its header and payload as
    /// Python decoded them (JSON text of `{"header":…, "payload":…}`), or nil when it does not verify.
    package static func pythonVerifiedJWS(_ token: String, publicKeyPEM: String) throws -> String? {
        try requirePythonCryptography()
        let folder = try makeTemporaryDirectory("entitle-python")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pub = folder.appendingPathComponent("pub.pem")
        try writeFile(pub, publicKeyPEM)
        let result = try runProcess(systemPython, ["-c", script, pub.path], input: Array(token.utf8))
        return result.status == 0 ? result.stdout : nil
    }

    private static let script = """
        import base64, json, sys
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
        def b64url(text):
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        key = serialization.load_pem_public_key(open(sys.argv[1], "rb").read())
        header, payload, signature = sys.stdin.read().strip().split(".")
        raw = b64url(signature)
        if len(raw) != 64:
            sys.exit("signature is not 64 bytes")
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        key.verify(der, (header + "." + payload).encode("ascii"), ec.ECDSA(hashes.SHA256()))
        print(json.dumps({"header": json.loads(b64url(header)), "payload": json.loads(b64url(payload))}))
        """
}
