import Crypto

/// Standard Webhooks signing: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`
/// keyed with the endpoint's decoded secret.
package enum WebhookSignature {
    package static func header(id: String, timestamp: Int64, body: String, secret: [UInt8]) -> String {
        "v1," + Base64.encode(HMACSHA256.authenticationCode(key: secret, message: Array("\(id).\(timestamp).\(body)".utf8)))
    }
}
