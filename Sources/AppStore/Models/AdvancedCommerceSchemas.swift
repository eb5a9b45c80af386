/// Schemas of the nested objects of transactions and renewal info (docs/APP_STORE.md §4.7). They are
/// validated on decode and kept as JSON; typed views are added where Entitle reads them.
enum NestedSchemas {
    static let transactionCommitmentInfo = ModelSchema(
        "TransactionCommitmentInfo",
        [
            "billingPeriodNumber": .int32, "commitmentExpiresDate": .date, "commitmentPrice": .price,
            "totalBillingPeriods": .int32,
        ])

    static let renewalCommitmentInfo = ModelSchema(
        "RenewalCommitmentInfo",
        [
            "commitmentAutoRenewProductId": .string, "commitmentAutoRenewStatus": .intEnum,
            "commitmentRenewalBillingPlanType": .stringEnum, "commitmentRenewalDate": .date, "commitmentRenewalPrice": .price,
        ])

    static let advancedCommerceDescriptors = ModelSchema(
        "AdvancedCommerceDescriptors",
        [
            "description": .string, "displayName": .string,
        ])

    static let advancedCommerceOffer = ModelSchema(
        "AdvancedCommerceOffer",
        [
            "period": .stringEnum, "periodCount": .int32, "price": .price, "reason": .stringEnum,
        ])

    static let advancedCommerceRefund = ModelSchema(
        "AdvancedCommerceRefund",
        [
            "refundAmount": .int64, "refundDate": .date, "refundReason": .stringEnum, "refundType": .stringEnum,
        ])

    static let advancedCommerceTransactionItem = ModelSchema(
        "AdvancedCommerceTransactionItem",
        [
            "SKU": .string, "description": .string, "displayName": .string, "offer": .object(advancedCommerceOffer),
            "price": .price, "refunds": .array(.object(advancedCommerceRefund)), "revocationDate": .date,
        ])

    static let advancedCommerceTransactionInfo = ModelSchema(
        "AdvancedCommerceTransactionInfo",
        [
            "descriptors": .object(advancedCommerceDescriptors), "estimatedTax": .int64,
            "items": .array(.object(advancedCommerceTransactionItem)), "period": .stringEnum,
            "requestReferenceId": .string, "taxCode": .string, "taxExclusivePrice": .price, "taxRate": .string,
        ])

    static let advancedCommercePriceIncreaseInfo = ModelSchema(
        "AdvancedCommercePriceIncreaseInfo",
        [
            "dependentSKUs": .array(.string), "price": .price, "status": .stringEnum,
        ])

    static let advancedCommerceRenewalItem = ModelSchema(
        "AdvancedCommerceRenewalItem",
        [
            "SKU": .string, "description": .string, "displayName": .string, "offer": .object(advancedCommerceOffer),
            "price": .price, "priceIncreaseInfo": .object(advancedCommercePriceIncreaseInfo),
        ])

    static let advancedCommerceRenewalInfo = ModelSchema(
        "AdvancedCommerceRenewalInfo",
        [
            "consistencyToken": .string, "descriptors": .object(advancedCommerceDescriptors),
            "items": .array(.object(advancedCommerceRenewalItem)), "period": .stringEnum,
            "requestReferenceId": .string, "taxCode": .string,
        ])
}
