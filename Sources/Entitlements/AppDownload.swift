package import AppStore

/// A customer's download of the app, as the app's signed `AppTransaction` tells it, linked to the
/// customer's token by the app that posted it (`POST /v1/app-transactions`). A customer has one
/// per environment: a later post replaces it, because the device's Apple Account, and with it the
/// download, may have changed.
package struct AppDownload: Sendable, Equatable {
    package var environment: String
    package var appAccountToken: String
    package var appTransactionId: String
    /// The version first bought or downloaded (`CFBundleVersion` on iOS): what an app that went
    /// from paid to free reads to honour its earlier buyers.
    package var originalApplicationVersion: String?
    package var originalPurchaseDate: Int64?
    package var originalPlatform: String?
    /// When Entitle stored it (ms).
    package var postedAt: Int64

    package init(
        environment: String, appAccountToken: String, appTransactionId: String, originalApplicationVersion: String?,
        originalPurchaseDate: Int64?, originalPlatform: String?, postedAt: Int64
    ) {
        self.environment = environment
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.originalApplicationVersion = originalApplicationVersion
        self.originalPurchaseDate = originalPurchaseDate
        self.originalPlatform = originalPlatform
        self.postedAt = postedAt
    }

    /// The download a verified app transaction names, or nil when it names none (an
    /// `appTransactionId` is in every app transaction Apple signs since iOS 18.4; older ones cannot
    /// be told apart).
    package init?(_ verified: AppTransaction, environment: String, appAccountToken: String, postedAt: Int64) {
        guard let id = verified.appTransactionId, !id.isEmpty else { return nil }
        self.init(
            environment: environment, appAccountToken: appAccountToken, appTransactionId: id,
            originalApplicationVersion: verified.string("originalApplicationVersion"),
            originalPurchaseDate: verified.milliseconds("originalPurchaseDate"), originalPlatform: verified.originalPlatform?.rawValue,
            postedAt: postedAt)
    }
}
