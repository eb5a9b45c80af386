package import JSON

/// A signed renewal info's payload (`signedRenewalInfo`, docs/APP_STORE.md §4.3). It has no `bundleId`.
package struct JWSRenewalInfoDecodedPayload: AppStoreModel {
    package static let schema = ModelSchema(
        "JWSRenewalInfoDecodedPayload",
        [
            "expirationIntent": .intEnum, "originalTransactionId": .string, "autoRenewProductId": .string,
            "productId": .string, "autoRenewStatus": .intEnum, "isInBillingRetryPeriod": .bool,
            "priceIncreaseStatus": .intEnum, "gracePeriodExpiresDate": .date, "offerType": .intEnum,
            "offerIdentifier": .string, "signedDate": .date, "environment": .stringEnum,
            "recentSubscriptionStartDate": .date, "renewalDate": .date, "currency": .currency, "renewalPrice": .price,
            "offerDiscountType": .stringEnum, "eligibleWinBackOfferIds": .array(.string), "appAccountToken": .uuid,
            "appTransactionId": .string, "offerPeriod": .string,
            "advancedCommerceInfo": .object(NestedSchemas.advancedCommerceRenewalInfo),
            "commitmentInfo": .object(NestedSchemas.renewalCommitmentInfo), "renewalBillingPlanType": .stringEnum,
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    package var expirationIntent: ExpirationIntent? { int64("expirationIntent").map(ExpirationIntent.init(rawValue:)) }
    package var originalTransactionId: String? { string("originalTransactionId") }
    package var autoRenewProductId: String? { string("autoRenewProductId") }
    package var productId: String? { string("productId") }
    package var autoRenewStatus: AutoRenewStatus? { int64("autoRenewStatus").map(AutoRenewStatus.init(rawValue:)) }
    package var isInBillingRetryPeriod: Bool? { bool("isInBillingRetryPeriod") }
    package var priceIncreaseStatus: PriceIncreaseStatus? { int64("priceIncreaseStatus").map(PriceIncreaseStatus.init(rawValue:)) }
    package var gracePeriodExpiresDate: Int64? { milliseconds("gracePeriodExpiresDate") }
    package var offerType: OfferType? { int64("offerType").map(OfferType.init(rawValue:)) }
    package var offerIdentifier: String? { string("offerIdentifier") }
    package var signedDate: Int64? { milliseconds("signedDate") }
    package var environment: AppStoreEnvironment? { string("environment").map(AppStoreEnvironment.init(rawValue:)) }
    package var recentSubscriptionStartDate: Int64? { milliseconds("recentSubscriptionStartDate") }
    package var renewalDate: Int64? { milliseconds("renewalDate") }
    package var renewalPrice: Int64? { int64("renewalPrice") }
    package var currency: String? { string("currency") }
    package var eligibleWinBackOfferIds: [String]? { json["eligibleWinBackOfferIds"]?.arrayValue?.compactMap(\.stringValue) }
    package var appAccountToken: String? { string("appAccountToken")?.lowercased() }
    package var appTransactionId: String? { string("appTransactionId") }
    package var renewalBillingPlanType: BillingPlanType? { string("renewalBillingPlanType").map(BillingPlanType.init(rawValue:)) }
    /// The commitment's next term (API 1.21), as sent (validated by its schema).
    package var commitmentInfo: JSONObject? { json["commitmentInfo"]?.objectValue }
}
