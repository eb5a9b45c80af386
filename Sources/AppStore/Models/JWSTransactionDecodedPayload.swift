package import JSON

/// A signed transaction's payload (`signedTransactionInfo`, docs/APP_STORE.md §4.2).
package struct JWSTransactionDecodedPayload: AppStoreModel {
    package static let schema = ModelSchema(
        "JWSTransactionDecodedPayload",
        [
            "originalTransactionId": .string, "transactionId": .string, "webOrderLineItemId": .string,
            "bundleId": .string, "productId": .string, "subscriptionGroupIdentifier": .string,
            "purchaseDate": .date, "originalPurchaseDate": .date, "expiresDate": .date, "quantity": .int32,
            "type": .stringEnum, "appAccountToken": .uuid, "inAppOwnershipType": .stringEnum, "signedDate": .date,
            "revocationReason": .intEnum, "revocationDate": .date, "isUpgraded": .bool, "offerType": .intEnum,
            "offerIdentifier": .string, "environment": .stringEnum, "storefront": .string, "storefrontId": .string,
            "transactionReason": .stringEnum, "currency": .currency, "price": .price, "offerDiscountType": .stringEnum,
            "appTransactionId": .string, "offerPeriod": .string, "revocationType": .stringEnum,
            "revocationPercentage": .int32, "advancedCommerceInfo": .object(NestedSchemas.advancedCommerceTransactionInfo),
            "billingPlanType": .stringEnum, "commitmentInfo": .object(NestedSchemas.transactionCommitmentInfo),
        ])

    package let json: JSONObject
    package init(validated json: JSONObject) { self.json = json }

    package var originalTransactionId: String? { string("originalTransactionId") }
    package var transactionId: String? { string("transactionId") }
    package var webOrderLineItemId: String? { string("webOrderLineItemId") }
    package var bundleId: String? { string("bundleId") }
    package var productId: String? { string("productId") }
    package var subscriptionGroupIdentifier: String? { string("subscriptionGroupIdentifier") }
    package var purchaseDate: Int64? { milliseconds("purchaseDate") }
    package var originalPurchaseDate: Int64? { milliseconds("originalPurchaseDate") }
    package var expiresDate: Int64? { milliseconds("expiresDate") }
    package var quantity: Int64? { int64("quantity") }
    package var type: ProductType? { string("type").map(ProductType.init(rawValue:)) }
    /// Lower case, however it was sent.
    package var appAccountToken: String? { string("appAccountToken")?.lowercased() }
    package var inAppOwnershipType: InAppOwnershipType? { string("inAppOwnershipType").map(InAppOwnershipType.init(rawValue:)) }
    package var signedDate: Int64? { milliseconds("signedDate") }
    package var revocationReason: RevocationReason? { int64("revocationReason").map(RevocationReason.init(rawValue:)) }
    package var revocationDate: Int64? { milliseconds("revocationDate") }
    package var isUpgraded: Bool? { bool("isUpgraded") }
    package var offerType: OfferType? { int64("offerType").map(OfferType.init(rawValue:)) }
    package var offerIdentifier: String? { string("offerIdentifier") }
    package var environment: AppStoreEnvironment? { string("environment").map(AppStoreEnvironment.init(rawValue:)) }
    package var storefront: String? { string("storefront") }
    package var transactionReason: TransactionReason? { string("transactionReason").map(TransactionReason.init(rawValue:)) }
    package var price: Int64? { int64("price") }
    package var currency: String? { string("currency") }
    package var offerDiscountType: OfferDiscountType? { string("offerDiscountType").map(OfferDiscountType.init(rawValue:)) }
    /// The offer's duration, ISO 8601 (`P1M`), as Apple sends it.
    package var offerPeriod: String? { string("offerPeriod") }
    package var appTransactionId: String? { string("appTransactionId") }
    package var revocationType: RevocationType? { string("revocationType").map(RevocationType.init(rawValue:)) }
    package var revocationPercentage: Int64? { int64("revocationPercentage") }
    package var billingPlanType: BillingPlanType? { string("billingPlanType").map(BillingPlanType.init(rawValue:)) }
    /// The 12-month commitment billed monthly (API 1.21), as sent (validated by its schema).
    package var commitmentInfo: JSONObject? { json["commitmentInfo"]?.objectValue }
}
