import Foundation
import JSON

/// A notification whose nested signed items were verified too (P-11): the outer signature does
/// not vouch for them, so each is checked with its own operation, by the same rules.
public struct VerifiedNotification: Sendable {
    public let notification: ResponseBodyV2DecodedPayload
    public let transaction: JWSTransactionDecodedPayload?
    public let renewalInfo: JWSRenewalInfoDecodedPayload?
    public let appTransaction: AppTransaction?
}

extension SignedDataVerifier {
    /// Verifies the notification, then its `data.signedTransactionInfo`, `data.signedRenewalInfo`
    /// and `appData.signedAppTransactionInfo`. The first failure decides, its reason naming the item.
    public func verifyNotificationAndContents(_ jws: String, effectiveDate: Date? = nil) -> VerificationResult<VerifiedNotification> {
        let notification: ResponseBodyV2DecodedPayload
        switch verifyNotification(jws, effectiveDate: effectiveDate) {
        case .valid(let payload): notification = payload
        case .invalid(let failure): return .invalid(failure)
        }
        func nested<Model>(_ text: String?, _ name: String,
                           _ verify: (String, Date?) -> VerificationResult<Model>) -> Result<Model?, VerificationFailure> {
            guard let text else { return .success(nil) }
            switch verify(text, effectiveDate) {
            case .valid(let payload): return .success(payload)
            case .invalid(let failure): return .failure(VerificationFailure(failure.status, "\(name): \(failure.reason)"))
            }
        }
        do {
            let transaction = try nested(notification.data?.signedTransactionInfo, "signedTransactionInfo", verifyTransaction).get()
            let renewal = try nested(notification.data?.signedRenewalInfo, "signedRenewalInfo", verifyRenewalInfo).get()
            let app = try nested(notification.appData?.signedAppTransactionInfo, "signedAppTransactionInfo",
                                 verifyAppTransaction).get()
            return .valid(VerifiedNotification(notification: notification, transaction: transaction, renewalInfo: renewal,
                                               appTransaction: app))
        } catch {
            return .invalid(error)
        }
    }
}
