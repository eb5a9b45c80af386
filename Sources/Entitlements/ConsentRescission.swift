/// A parent or guardian withdrew consent for the app on a child's device (Apple's
/// `RESCIND_CONSENT`); Apple blocks the app there. Entitle stores the notification and tells the
/// developer's systems (`CONSENT_RESCINDED`), naming the app download and, when Entitle knows
/// them, its purchases and customer, so they can act.
package struct ConsentRescission: Sendable, Equatable {
    /// The app download (`appTransactionId` of the notification's signed app transaction).
    package var appTransactionId: String?
    /// The subscriptions and purchases made from that download that Entitle has stored.
    package var originalTransactionIds: [String]
    /// Their customer, when one of them is linked to an account token.
    package var appAccountToken: String?

    package init(appTransactionId: String?, originalTransactionIds: [String] = [], appAccountToken: String? = nil) {
        self.appTransactionId = appTransactionId
        self.originalTransactionIds = originalTransactionIds
        self.appAccountToken = appAccountToken
    }
}
