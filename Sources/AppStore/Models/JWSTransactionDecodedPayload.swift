import JSON

/// A signed transaction's payload (`signedTransactionInfo`, APPSTORE.md §4.2).
public struct JWSTransactionDecodedPayload: AppStoreModel {
    public static let schema = ModelSchema(
        "JWSTransactionDecodedPayload",
        [
            "originalTransactionId": .string, "transactionId": .string, "webOrderLineItemId": .string,
            "bundleId": .string, "productId": .string, "subscriptionGroupIdentifier": .string,
            "purchaseDate": .date, "originalPurchaseDate": .date, "expiresDate": .date, "quantity": .int32,
            "type": .stringEnum, "appAccountToken": .uuid, "inAppOwnershipType": .stringEnum, "signedDate": .date,
            "revocationReason": .intEnum, "revocationDate": .date, "isUpgraded": .bool, "offerType": .intEnum,
            "offerIdentifier": .string, "environment": .stringEnum, "storefront": .string, "storefrontId": .string,
            "transactionReason": .stringEnum, "currency": .string, "price": .int64, "offerDiscountType": .stringEnum,
            "appTransactionId": .string, "offerPeriod": .string, "revocationType": .stringEnum,
            "revocationPercentage": .int32, "advancedCommerceInfo": .object(NestedSchemas.advancedCommerceTransactionInfo),
            "billingPlanType": .stringEnum, "commitmentInfo": .object(NestedSchemas.transactionCommitmentInfo),
        ])

    public let json: JSONObject
    public init(validated json: JSONObject) { self.json = json }

    public var originalTransactionId: String? { string("originalTransactionId") }
    public var transactionId: String? { string("transactionId") }
    public var webOrderLineItemId: String? { string("webOrderLineItemId") }
    public var bundleId: String? { string("bundleId") }
    public var productId: String? { string("productId") }
    public var subscriptionGroupIdentifier: String? { string("subscriptionGroupIdentifier") }
    public var purchaseDate: Int64? { milliseconds("purchaseDate") }
    public var originalPurchaseDate: Int64? { milliseconds("originalPurchaseDate") }
    public var expiresDate: Int64? { milliseconds("expiresDate") }
    public var quantity: Int64? { int64("quantity") }
    public var type: ProductType? { string("type").map(ProductType.init(rawValue:)) }
    /// Lower case, however it was sent.
    public var appAccountToken: String? { string("appAccountToken")?.lowercased() }
    public var inAppOwnershipType: InAppOwnershipType? { string("inAppOwnershipType").map(InAppOwnershipType.init(rawValue:)) }
    public var signedDate: Int64? { milliseconds("signedDate") }
    public var revocationReason: RevocationReason? { int64("revocationReason").map(RevocationReason.init(rawValue:)) }
    public var revocationDate: Int64? { milliseconds("revocationDate") }
    public var isUpgraded: Bool? { bool("isUpgraded") }
    public var offerType: OfferType? { int64("offerType").map(OfferType.init(rawValue:)) }
    public var offerIdentifier: String? { string("offerIdentifier") }
    public var environment: AppStoreEnvironment? { string("environment").map(AppStoreEnvironment.init(rawValue:)) }
    public var storefront: String? { string("storefront") }
    public var transactionReason: TransactionReason? { string("transactionReason").map(TransactionReason.init(rawValue:)) }
    public var price: Int64? { int64("price") }
    public var currency: String? { string("currency") }
    public var offerDiscountType: OfferDiscountType? { string("offerDiscountType").map(OfferDiscountType.init(rawValue:)) }
    /// The offer's duration, ISO 8601 (`P1M`), as Apple sends it.
    public var offerPeriod: String? { string("offerPeriod") }
    public var appTransactionId: String? { string("appTransactionId") }
    public var revocationType: RevocationType? { string("revocationType").map(RevocationType.init(rawValue:)) }
    public var revocationPercentage: Int64? { int64("revocationPercentage") }
    public var billingPlanType: BillingPlanType? { string("billingPlanType").map(BillingPlanType.init(rawValue:)) }
    /// The 12-month commitment billed monthly (API 1.21), as sent (validated by its schema).
    public var commitmentInfo: JSONObject? { json["commitmentInfo"]?.objectValue }
}
