import Crypto
import Foundation
import HTTP
import JSON
import Server
import TestSupport
import XCTest

/// Answers the app can trust: with `responseSigning`, the subscriber, a signed offer and
/// eligibility answers carry `Entitle-Signature` over the request's nonce, method, target, time
/// and body digest, verified here by Python's `cryptography` with the published JWKS alone.
final class ResponseSigningTests: TestStoreTestCase {
    override class var signsResponses: Bool { true }

    private let nonce = "AAECAwQFBgcICQoLDA0ODw"  // base64url of 16 bytes (a real client draws them at random)

    private func get(_ path: String, nonce: String?, key: String = "client_key_0123456789") -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("authorization", "Bearer \(key)")]
        if let nonce { headers.append(("entitle-nonce", nonce)) }
        return entitle.handle(HTTPRequest(method: "GET", target: path, headers: headers, body: []))
    }

    /// Python's verdict on an answer: the JWS verifies with the JWKS's key, and its payload (and
    /// whether the body's digest matches) as it reads it.
    private func verify(_ response: HTTPResponse, body: [UInt8]? = nil) throws -> JSONValue {
        let python = try requireTestPython("cryptography", for: #function)
        let jwks = get("/.well-known/entitle/jwks.json", nonce: nil)
        XCTAssertEqual(jwks.status, 200)
        let script = """
            import sys, json, base64, hashlib
            from cryptography.hazmat.primitives.asymmetric import ec, utils
            from cryptography.hazmat.primitives import hashes
            from cryptography.exceptions import InvalidSignature
            def b64(s): return base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))
            jwk = json.loads(open(sys.argv[1]).read())['keys'][0]
            key = ec.EllipticCurvePublicNumbers(int.from_bytes(b64(jwk['x']), 'big'), int.from_bytes(b64(jwk['y']), 'big'), ec.SECP256R1()).public_key()
            header, payload, signature = sys.argv[2].split('.')
            raw = b64(signature)
            der = utils.encode_dss_signature(int.from_bytes(raw[:32], 'big'), int.from_bytes(raw[32:], 'big'))
            try:
                key.verify(der, (header + '.' + payload).encode(), ec.ECDSA(hashes.SHA256()))
                valid = True
            except InvalidSignature:
                valid = False
            claims = json.loads(b64(payload))
            body = open(sys.argv[3], 'rb').read()
            digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b'=').decode()
            print(json.dumps({'valid': valid, 'kid': json.loads(b64(header))['kid'], 'claims': claims, 'bodyMatches': digest == claims['bodySha256']}))
            """
        let jwksFile = folder.appendingPathComponent("jwks.json")
        let bodyFile = folder.appendingPathComponent("body")
        try Data(jwks.body).write(to: jwksFile)
        try Data(body ?? response.body).write(to: bodyFile)
        let signature = try XCTUnwrap(response.header("Entitle-Signature"), "the answer is signed")
        let run = try runProcess(python, ["-c", script, jwksFile.path, signature, bodyFile.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return try JSONParser.parse(Array(run.stdout.utf8))
    }

    func testTheSubscriberAnswerIsSignedForItsRequest() throws {
        _ = try buy(trial: false)
        let path = "/v1/subscribers/\(token)?environment=Sandbox"
        let answer = get(path, nonce: nonce)
        XCTAssertEqual(answer.status, 200)
        let verdict = try verify(answer)
        XCTAssertEqual(verdict["valid"], true)
        XCTAssertEqual(verdict["kid"], "response-key-1")
        XCTAssertEqual(verdict["bodyMatches"], true)
        XCTAssertEqual(verdict["claims"]?["nonce"]?.stringValue, nonce)
        XCTAssertEqual(verdict["claims"]?["method"], "GET")
        XCTAssertEqual(verdict["claims"]?["path"]?.stringValue, path)
        let time = try XCTUnwrap(verdict["claims"]?["time"]?.integer(in: 0...Int64.max))
        XCTAssertLessThan(abs(time - Int64(Date().timeIntervalSince1970 * 1000)), 60_000, "the machine's time")

        var tampered = answer.body
        tampered[tampered.count / 2] ^= 0x01
        XCTAssertEqual(try verify(answer, body: tampered)["bodyMatches"], false, "a changed byte no longer matches the signed digest")
    }

    /// An error is signed too (an app must not believe a forged "no such subscriber"), as is a
    /// signed offer; no nonce, no signature; a malformed nonce is refused.
    func testErrorsAndOffersAreSignedAndANonceIsChecked() throws {
        let missing = get("/v1/subscribers/0b0c6f4e-52f5-4d35-9a43-3c2a77d7c2a1", nonce: nonce)
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(try verify(missing)["valid"], true)
        XCTAssertNil(get("/v1/subscribers/\(token)", nonce: nil).header("Entitle-Signature"))
        XCTAssertEqual(get("/v1/subscribers/\(token)", nonce: "short").status, 400)
        XCTAssertEqual(get("/v1/subscribers/\(token)", nonce: nonce + "==").status, 400)

        let offer = entitle.handle(
            HTTPRequest(
                method: "POST", target: "/v1/promotional-offers/sign",
                headers: [
                    ("authorization", "Bearer client_key_0123456789"), ("content-type", "application/json"), ("entitle-nonce", nonce),
                ],
                body: JSONValue.object(["productId": "pro.monthly", "offerId": "welcome", "appAccountToken": .string(token)])
                    .serializedBytes))
        XCTAssertEqual(offer.status, 200)
        let verdict = try verify(offer)
        XCTAssertEqual(verdict["valid"], true)
        XCTAssertEqual(verdict["claims"]?["method"], "POST")
        XCTAssertNil(get("/v1/events", nonce: nonce, key: "server_key_0123456789").header("Entitle-Signature"), "only the app's answers")
    }
}
