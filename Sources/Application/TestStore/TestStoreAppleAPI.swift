import Crypto
package import JSON

/// The rules of the App Store Server API the test store serves for Entitle's own client
/// (docs/TEST_STORE.md, "The App Store Server API"), as Apple documents them: who may call
/// (the bearer token), what a Send Consumption Information body must be, and Apple's error
/// answers.
package enum TestStoreAppleAPI {
    /// Apple's error answer: the HTTP status and `{"errorCode", "errorMessage"}` (401 has no
    /// body).
    package struct Refusal: Error, Sendable, Equatable {
        package let status: Int
        package let errorCode: Int64?
        package let message: String

        package init(_ status: Int, _ errorCode: Int64?, _ message: String) {
            self.status = status
            self.errorCode = errorCode
            self.message = message
        }

        package var body: JSONObject? {
            errorCode.map { ["errorCode": .int($0), "errorMessage": .string(message)] }
        }

        static let unauthorized = Refusal(401, nil, "Unauthorized")
        static func transactionNotFound() -> Refusal { Refusal(404, 4_040_010, "Transaction id not found.") }
        static func badRequest(_ code: Int64, _ message: String) -> Refusal { Refusal(400, code, message) }
    }

    /// The app a bearer token is for, when it is one Apple would take: ES256 by the app's
    /// In-App Purchase key (`kid`), `aud` `appstoreconnect-v1`, `bid` the app's, `iss` its
    /// issuer ID, unexpired, lasting at most an hour. Anything else is 401, as Apple answers.
    /// Times are the machine's: the token is made by the machine's clock, not the moved one.
    package static func authorize(_ authorization: String?, apps: [AppConfiguration], machineNow: Int64) throws(Refusal) -> AppConfiguration
    {
        guard let header = authorization, header.hasPrefix("Bearer "),
            let jws = try? CompactJWS(header.dropFirst("Bearer ".count))  // whatever is wrong, Apple answers 401
        else { throw .unauthorized }
        let claims = jws.payload
        guard jws.algorithm == "ES256", claims["aud"]?.stringValue == "appstoreconnect-v1",
            let app = apps.first(where: { $0.bundleId == claims["bid"]?.stringValue }),
            let issuer = app.signingKey.issuerId, claims["iss"]?.stringValue == issuer,
            jws.header["kid"]?.stringValue == app.signingKey.keyId,
            let publicKey = try? app.signingKey.privateKey.publicKey, jws.isValidES256Signature(publicKey: publicKey)
        else { throw .unauthorized }
        // `iat` is optional: Apple's own libraries send none, and Apple takes their tokens.
        let seconds = machineNow / 1000
        let instant = 0...Int64(253_402_300_799)
        guard let expires = claims["exp"]?.integer(in: instant), expires > seconds else { throw .unauthorized }
        if let issued = claims["iat"] {
            guard let issuedAt = issued.integer(in: instant), issuedAt <= seconds + 60, expires - issuedAt <= 3600 else {
                throw .unauthorized
            }
        } else {
            guard expires <= seconds + 3600 else { throw .unauthorized }
        }
        return app
    }

    /// What Apple refuses in a Send Consumption Information v2 body (docs/REFUNDS.md): members
    /// it does not know, consent not given, a required field missing, an unknown value, a
    /// percentage out of range, for an auto-renewable subscription, for undelivered content, or
    /// (a prorated refund of anything else) not strictly between 0 and 100 000.
    static func checkConsumption(_ body: JSONObject, autoRenewable: Bool) throws(Refusal) {
        let known: Set<String> = [
            "customerConsented", "deliveryStatus", "sampleContentProvided", "consumptionPercentage", "refundPreference",
        ]
        if let unknown = body.members.map(\.key).first(where: { !known.contains($0) }) {
            throw .badRequest(4_000_000, "Invalid request. Unknown field \(unknown).")
        }
        guard body["customerConsented"]?.boolValue == true else {
            throw .badRequest(4_000_035, "Invalid request. The customer consented field is required and must be true.")
        }
        let statuses: Set<String> = [
            "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER",
        ]
        guard let status = body["deliveryStatus"]?.stringValue, statuses.contains(status) else {
            throw .badRequest(4_000_036, "Invalid request. The delivery status field is invalid.")
        }
        guard body["sampleContentProvided"]?.boolValue != nil else {
            throw .badRequest(4_000_041, "Invalid request. The sample content provided field is required.")
        }
        var percentage: Int64?
        if let value = body["consumptionPercentage"] {
            guard let amount = value.integer(in: 0...100_000) else {
                throw .badRequest(4_000_000, "Invalid request. The consumption percentage is out of range.")
            }
            guard !autoRenewable else {
                throw .badRequest(4_000_000, "Invalid request. An auto-renewable subscription takes no consumption percentage.")
            }
            guard status == "DELIVERED" || amount == 0 else {
                throw .badRequest(4_000_000, "Invalid request. Undelivered content has a consumption percentage of 0.")
            }
            percentage = amount
        }
        if let preference = body["refundPreference"] {
            guard let value = preference.stringValue, ["GRANT_FULL", "GRANT_PRORATED", "DECLINE"].contains(value) else {
                throw .badRequest(4_000_000, "Invalid request. The refund preference is invalid.")
            }
            // Apple computes a subscription's percentage itself.
            if value == "GRANT_PRORATED", !autoRenewable, !(percentage.map { $0 > 0 && $0 < 100_000 } ?? false) {
                throw .badRequest(4_000_000, "Invalid request. A prorated refund needs a consumption percentage between 0 and 100000.")
            }
        }
    }
}
