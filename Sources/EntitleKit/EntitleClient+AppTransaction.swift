public import Foundation

/// The app's download (docs/SWIFT_CLIENT.md, "The AppTransaction"): posted once for its
/// environment and download, so Entitle knows the customer from the first launch, with the
/// version they first downloaded.
extension EntitleClient {
    /// Posts the store's signed `AppTransaction` unless the last verified customer already shows
    /// that download (the same `appTransactionId` in the same environment); answers whether it
    /// posted. `listen(using:)` calls it at launch. Offline it throws `EntitleUnreachable` and is
    /// tried again at the next launch: a download is never lost, it is only told later.
    @discardableResult
    public func postAppTransaction(using store: any StorePurchasing) async throws -> Bool {
        guard let signed = try await store.appTransaction(appAccountToken: configuration.appAccountToken) else { return false }
        if let claimed = Self.claimedDownload(signed), let known = lastCustomer?.appDownload,
            known.appTransactionId == claimed.appTransactionId, known.environment == claimed.environment
        {
            return false
        }
        _ = try await post(appTransaction: signed)
        return true
    }

    /// What the signed app transaction says of itself, read without checking its signature: only
    /// to tell whether it was posted already (Entitle verifies what is posted).
    static func claimedDownload(_ jws: String) -> (appTransactionId: String, environment: String)? {
        struct Claims: Decodable {
            var appTransactionId: String?
            var receiptType: String?
        }
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONDecoder().decode(Claims.self, from: payload),  // not JSON: posted, and Entitle refuses it
            let id = claims.appTransactionId, let environment = claims.receiptType
        else { return nil }
        return (id, environment)
    }
}
