import Instants
package import JSON

/// A 12-month commitment billed monthly (App Store Server API 1.21) as one transaction states it:
/// which of the commitment's monthly payments this is. Apple's members and units, as sent; Apple
/// documents no rule from them to access, so Entitle derives none (the transaction's own
/// `expiresDate` still decides the period).
package struct TransactionCommitment: Sendable, Equatable {
    /// 1 to `totalBillingPeriods`.
    package var billingPeriodNumber: Int64?
    package var totalBillingPeriods: Int64?
    /// When the whole commitment ends, epoch milliseconds.
    package var commitmentExpiresDate: Int64?
    /// The whole commitment's price, in milliunits of the transaction's currency.
    package var commitmentPrice: Int64?

    package init(
        billingPeriodNumber: Int64? = nil, totalBillingPeriods: Int64? = nil, commitmentExpiresDate: Int64? = nil,
        commitmentPrice: Int64? = nil
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
    }

    /// From Apple's `commitmentInfo` object, the payload's or the stored copy (the same members).
    package init(apple json: JSONObject) {
        self.init(
            billingPeriodNumber: json["billingPeriodNumber"]?.integer(in: AppleMembers.periods),
            totalBillingPeriods: json["totalBillingPeriods"]?.integer(in: AppleMembers.periods),
            commitmentExpiresDate: AppleMembers.milliseconds(json["commitmentExpiresDate"]),
            commitmentPrice: json["commitmentPrice"]?.integer(in: Milliunits.priceRange))
    }

    /// Apple's members, for storage and for the answers (which add the ISO form of the date).
    package func write<Object: JSONObjectBuilder>(into object: inout Object, isoDates: Bool) {
        object.set("billingPeriodNumber", ifPresent: billingPeriodNumber)
        object.set("totalBillingPeriods", ifPresent: totalBillingPeriods)
        AppleMembers.date(&object, "commitmentExpiresDate", commitmentExpiresDate, iso: isoDates)
        object.set("commitmentPrice", ifPresent: commitmentPrice)
    }
}

/// What a renewal info says of the commitment's next term: whether the customer commits again,
/// to which product, billed how, when and at what price.
package struct RenewalCommitment: Sendable, Equatable {
    /// Apple's `commitmentAutoRenewStatus`: 1 commits again at the end, 0 does not.
    package var autoRenewStatus: Int64?
    package var autoRenewProductId: String?
    /// `BILLED_UPFRONT`, `MONTHLY`, or a newer value, as Apple sends it.
    package var renewalBillingPlanType: String?
    package var renewalDate: Int64?
    /// In milliunits of the renewal's currency.
    package var renewalPrice: Int64?

    package init(
        autoRenewStatus: Int64? = nil, autoRenewProductId: String? = nil, renewalBillingPlanType: String? = nil,
        renewalDate: Int64? = nil, renewalPrice: Int64? = nil
    ) {
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductId = autoRenewProductId
        self.renewalBillingPlanType = renewalBillingPlanType
        self.renewalDate = renewalDate
        self.renewalPrice = renewalPrice
    }

    /// From Apple's renewal-info `commitmentInfo` object, the payload's or the stored copy.
    package init(apple json: JSONObject) {
        self.init(
            autoRenewStatus: json["commitmentAutoRenewStatus"]?.integer(in: Int64(Int32.min)...Int64(Int32.max)),
            autoRenewProductId: json["commitmentAutoRenewProductId"]?.stringValue,
            renewalBillingPlanType: json["commitmentRenewalBillingPlanType"]?.stringValue,
            renewalDate: AppleMembers.milliseconds(json["commitmentRenewalDate"]),
            renewalPrice: json["commitmentRenewalPrice"]?.integer(in: Milliunits.priceRange))
    }

    package func write<Object: JSONObjectBuilder>(into object: inout Object, isoDates: Bool) {
        object.set("commitmentAutoRenewStatus", ifPresent: autoRenewStatus)
        object.set("commitmentAutoRenewProductId", ifPresent: autoRenewProductId)
        object.set("commitmentRenewalBillingPlanType", ifPresent: renewalBillingPlanType)
        AppleMembers.date(&object, "commitmentRenewalDate", renewalDate, iso: isoDates)
        object.set("commitmentRenewalPrice", ifPresent: renewalPrice)
    }
}

/// Storing a commitment: Apple's object as JSON text, read back by the same `init(apple:)`.
package enum StoredCommitment {
    package static func text(_ commitment: TransactionCommitment?) -> String? {
        commitment.map { commitment in serialized { commitment.write(into: &$0, isoDates: false) } }
    }

    package static func text(_ commitment: RenewalCommitment?) -> String? {
        commitment.map { commitment in serialized { commitment.write(into: &$0, isoDates: false) } }
    }

    package static func transaction(_ text: String?) -> TransactionCommitment? { object(text).map(TransactionCommitment.init(apple:)) }

    package static func renewal(_ text: String?) -> RenewalCommitment? { object(text).map(RenewalCommitment.init(apple:)) }

    private static func serialized(_ write: (inout JSONObjectWriter) -> Void) -> String {
        var writer = JSONObjectWriter(capacity: 160)
        write(&writer)
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    private static func object(_ text: String?) -> JSONObject? { JSONParser.storedObject(text) }
}

/// Apple's dates in these objects: epoch milliseconds, possibly fractional (truncated, as every
/// App Store date is); in answers also as ISO text beside (`…Ms` the number), as everywhere.
enum AppleMembers {
    static func milliseconds(_ value: JSONValue?) -> Int64? { Milliseconds.truncating(value) }
    /// A commitment's billing periods (Apple's are 1 to 12), as `int32` members.
    static let periods: ClosedRange<Int64> = 0...Int64(Int32.max)

    static func date<Object: JSONObjectBuilder>(_ object: inout Object, _ key: String, _ instant: Int64?, iso: Bool) {
        guard let instant else { return }
        if iso { Timestamps.set(&object, key, instant) } else { object.set(key, instant) }
    }
}
