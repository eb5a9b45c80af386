import JSON

/// A signed renewal info's payload (`signedRenewalInfo`, APPSTORE.md §4.3). It has no `bundleId`.
public struct JWSRenewalInfoDecodedPayload: AppStoreModel {
    public static let schema = ModelSchema(
        "JWSRenewalInfoDecodedPayload",
        [
            "expirationIntent": .intEnum, "originalTransactionId": .string, "autoRenewProductId": .string,
            "productId": .string, "autoRenewStatus": .intEnum, "isInBillingRetryPeriod": .bool,
            "priceIncreaseStatus": .intEnum, "gracePeriodExpiresDate": .date, "offerType": .intEnum,
            "offerIdentifier": .string, "signedDate": .date, "environment": .stringEnum,
            "recentSubscriptionStartDate": .date, "renewalDate": .date, "currency": .string, "renewalPrice": .int64,
            "offerDiscountType": .stringEnum, "eligibleWinBackOfferIds": .array(.string), "appAccountToken": .uuid,
            "appTransactionId": .string, "offerPeriod": .string,
            "advancedCommerceInfo": .object(NestedSchemas.advancedCommerceRenewalInfo),
            "commitmentInfo": .object(NestedSchemas.renewalCommitmentInfo), "renewalBillingPlanType": .stringEnum,
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    public var expirationIntent: ExpirationIntent? { int64("expirationIntent").map(ExpirationIntent.init(rawValue:)) }
    public var originalTransactionId: String? { string("originalTransactionId") }
    public var autoRenewProductId: String? { string("autoRenewProductId") }
    public var productId: String? { string("productId") }
    public var autoRenewStatus: AutoRenewStatus? { int64("autoRenewStatus").map(AutoRenewStatus.init(rawValue:)) }
    public var isInBillingRetryPeriod: Bool? { bool("isInBillingRetryPeriod") }
    public var priceIncreaseStatus: PriceIncreaseStatus? { int64("priceIncreaseStatus").map(PriceIncreaseStatus.init(rawValue:)) }
    public var gracePeriodExpiresDate: Int64? { milliseconds("gracePeriodExpiresDate") }
    public var offerType: OfferType? { int64("offerType").map(OfferType.init(rawValue:)) }
    public var offerIdentifier: String? { string("offerIdentifier") }
    public var signedDate: Int64? { milliseconds("signedDate") }
    public var environment: AppStoreEnvironment? { string("environment").map(AppStoreEnvironment.init(rawValue:)) }
    public var recentSubscriptionStartDate: Int64? { milliseconds("recentSubscriptionStartDate") }
    public var renewalDate: Int64? { milliseconds("renewalDate") }
    public var renewalPrice: Int64? { int64("renewalPrice") }
    public var currency: String? { string("currency") }
    public var eligibleWinBackOfferIds: [String]? { json["eligibleWinBackOfferIds"]?.arrayValue?.compactMap(\.stringValue) }
    public var appAccountToken: String? { string("appAccountToken")?.lowercased() }
    public var appTransactionId: String? { string("appTransactionId") }
    public var renewalBillingPlanType: BillingPlanType? { string("renewalBillingPlanType").map(BillingPlanType.init(rawValue:)) }
    /// The commitment's next term (API 1.21), as sent (validated by its schema).
    public var commitmentInfo: JSONObject? { json["commitmentInfo"]?.objectValue }
}
