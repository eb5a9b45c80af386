package import JSON

/// A test customer's download of an app, as the App Store keeps it: one per Apple Account and app,
/// the same `appTransactionId` every time the app asks (`AppTransaction.shared`, docs/TEST_STORE.md).
package struct SimulatedAppDownload: Sendable, Equatable {
    package var bundleId: String
    package var appAppleId: Int64?
    package var environment: String
    package var appTransactionId: String
    package var originalApplicationVersion: String
    package var originalPurchaseDate: Int64

    package init(
        bundleId: String, appAppleId: Int64?, environment: String, appTransactionId: String, originalApplicationVersion: String,
        originalPurchaseDate: Int64
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.appTransactionId = appTransactionId
        self.originalApplicationVersion = originalApplicationVersion
        self.originalPurchaseDate = originalPurchaseDate
    }

    /// The AppTransaction's payload as Apple signs it (AppTransaction's fields), for a device
    /// running `applicationVersion`; `deviceVerification` is the device's (random here), as the
    /// app checks it and Entitle does not.
    package func payload(applicationVersion: String, deviceVerification: String, nonce: String, signedAt: Int64) -> JSONObject {
        var payload: JSONObject = [
            "receiptType": .string(environment), "bundleId": .string(bundleId), "applicationVersion": .string(applicationVersion),
            "versionExternalIdentifier": 0, "receiptCreationDate": .int(signedAt), "originalPurchaseDate": .int(originalPurchaseDate),
            "originalApplicationVersion": .string(originalApplicationVersion), "deviceVerification": .string(deviceVerification),
            "deviceVerificationNonce": .string(nonce), "appTransactionId": .string(appTransactionId), "originalPlatform": "iOS",
        ]
        if let appAppleId { payload["appAppleId"] = .int(appAppleId) }
        return payload
    }
}
