package import Foundation
import JSON

/// A verified notification with the verdict on each signed item inside it (P-11): the outer
/// signature does not vouch for them, so each is checked with its own operation, by the same rules.
///
/// As in Apple's library, the notification's own verdict does not depend on its nested items: a
/// notification whose `signedTransactionInfo` is not a valid JWS is itself VALID, and the nested
/// verdict says what is wrong with the item. Whoever stores facts refuses such a notification
/// (`firstNestedFailure`).
package struct VerifiedNotification: Sendable {
    package let notification: ResponseBodyV2DecodedPayload
    /// Each nested item's verdict, nil when the notification carries no such item.
    package let transactionResult: VerificationResult<JWSTransactionDecodedPayload>?
    package let renewalInfoResult: VerificationResult<JWSRenewalInfoDecodedPayload>?
    package let appTransactionResult: VerificationResult<AppTransaction>?

    package var transaction: JWSTransactionDecodedPayload? { transactionResult?.payload }
    package var renewalInfo: JWSRenewalInfoDecodedPayload? { renewalInfoResult?.payload }
    package var appTransaction: AppTransaction? { appTransactionResult?.payload }

    /// The first nested item that failed, its reason naming the item.
    package var firstNestedFailure: VerificationFailure? {
        for (name, failure) in nestedFailures { return VerificationFailure(failure.status, "\(name): \(failure.reason)") }
        return nil
    }

    /// Nested items that failed, by their member name (`signedTransactionInfo`, …).
    package var nestedFailures: [(name: String, failure: VerificationFailure)] {
        [
            ("signedTransactionInfo", transactionResult?.failure), ("signedRenewalInfo", renewalInfoResult?.failure),
            ("signedAppTransactionInfo", appTransactionResult?.failure),
        ].compactMap { item in item.1.map { (item.0, $0) } }
    }
}

extension SignedDataVerifier {
    /// Verifies the notification, then each of `data.signedTransactionInfo`, `data.signedRenewalInfo`
    /// and `appData.signedAppTransactionInfo` on its own.
    package func verifyNotificationAndContents(_ jws: String, effectiveDate: Date? = nil) -> VerificationResult<VerifiedNotification> {
        do { return verifyNotificationAndContents(try SignedPayload(jws), effectiveDate: effectiveDate) } catch {
            return .invalid(error)
        }
    }

    package func verifyNotificationAndContents(
        _ parsed: SignedPayload,
        effectiveDate: Date? = nil
    ) -> VerificationResult<VerifiedNotification> {
        let notification: ResponseBodyV2DecodedPayload
        switch verifyNotification(parsed, effectiveDate: effectiveDate) {
        case .valid(let payload): notification = payload
        case .invalid(let failure): return .invalid(failure)
        }
        return .valid(
            VerifiedNotification(
                notification: notification,
                transactionResult: notification.data?.signedTransactionInfo.map { verifyTransaction($0, effectiveDate: effectiveDate) },
                renewalInfoResult: notification.data?.signedRenewalInfo.map { verifyRenewalInfo($0, effectiveDate: effectiveDate) },
                appTransactionResult: notification.appData?.signedAppTransactionInfo.map {
                    verifyAppTransaction($0, effectiveDate: effectiveDate)
                }))
    }
}
