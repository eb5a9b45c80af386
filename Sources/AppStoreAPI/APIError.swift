package import HTTPClient

/// An App Store Server API error code (docs/APP_STORE.md §5.5), kept raw so an unknown code (e.g.
/// 9990000) survives; `name` gives the known case.
package struct APIErrorCode: Sendable, Hashable, CustomStringConvertible {
    package let rawValue: Int64
    package init(_ rawValue: Int64) { self.rawValue = rawValue }

    package var name: String? { Self.names[rawValue] }
    package var description: String { name.map { "\($0) (\(rawValue))" } ?? String(rawValue) }

    /// The `…Retryable` codes: the same request may succeed later.
    package var isRetryable: Bool { [4040002, 4040004, 4040006, 5000001].contains(rawValue) }

    package static let transactionIdNotFound = APIErrorCode(4040010)
    package static let rateLimitExceeded = APIErrorCode(4290000)

    static let names: [Int64: String] = [
        4000000: "generalBadRequest", 4000002: "invalidAppIdentifier", 4000005: "invalidRequestRevision",
        4000006: "invalidTransactionId", 4000008: "invalidOriginalTransactionId", 4000009: "invalidExtendByDays",
        4000010: "invalidExtendReasonCode", 4000011: "invalidRequestIdentifier", 4000012: "startDateTooFarInPast",
        4000013: "startDateAfterEndDate", 4000014: "invalidPaginationToken", 4000015: "invalidStartDate",
        4000016: "invalidEndDate", 4000017: "paginationTokenExpired", 4000018: "invalidNotificationType",
        4000019: "multipleFiltersSupplied", 4000020: "invalidTestNotificationToken", 4000021: "invalidSort",
        4000022: "invalidProductType", 4000023: "invalidProductId", 4000024: "invalidSubscriptionGroupIdentifier",
        4000025: "invalidExcludeRevoked", 4000026: "invalidInAppOwnershipType", 4000027: "invalidEmptyStorefrontCountryCodeList",
        4000028: "invalidStorefrontCountryCode", 4000030: "invalidRevoked", 4000031: "invalidStatus",
        4000032: "invalidAccountTenure", 4000033: "invalidAppAccountToken", 4000034: "invalidConsumptionStatus",
        4000035: "invalidCustomerConsented", 4000036: "invalidDeliveryStatus", 4000037: "invalidLifetimeDollarsPurchased",
        4000038: "invalidLifetimeDollarsRefunded", 4000039: "invalidPlatform", 4000040: "invalidPlayTime",
        4000041: "invalidSampleContentProvided", 4000042: "invalidUserStatus", 4000043: "invalidTransactionNotConsumable",
        4000047: "invalidTransactionTypeNotSupported", 4000048: "appTransactionIdNotSupported", 4000161: "invalidImage",
        4000162: "headerTooLong", 4000163: "bodyTooLong", 4000164: "invalidLocale", 4000175: "altTextTooLong",
        4000183: "invalidAppAccountTokenUUID", 4000185: "familyTransactionNotSupported",
        4000187: "transactionIdNotOriginalTransactionId", 4000211: "invalidPerformanceTestRequest", 4000212: "invalidRequestId",
        4000213: "existingPerformanceTestRun", 4000215: "badRequestRealtimeUrl", 4000216: "badRequestImageSize",
        4000218: "badRequestTooManyBulletPoints", 4000219: "badRequestBulletPointTextTooLong",
        4000224: "badRequestAboveImageRequiresAnImage", 4030004: "subscriptionExtensionIneligible",
        4030005: "subscriptionMaxExtension", 4030007: "familySharedSubscriptionExtensionIneligible",
        4030014: "maximumNumberOfImagesReached", 4030016: "maximumNumberOfMessagesReached", 4030017: "messageNotApproved",
        4030018: "imageNotApproved", 4030019: "imageInUse", 4030026: "forbiddenNoPassingTest", 4040001: "accountNotFound",
        4040002: "accountNotFoundRetryable", 4040003: "appNotFound", 4040004: "appNotFoundRetryable",
        4040005: "originalTransactionIdNotFound", 4040006: "originalTransactionIdNotFoundRetryable",
        4040007: "serverNotificationUrlNotFound", 4040008: "testNotificationNotFound", 4040009: "statusRequestNotFound",
        4040010: "transactionIdNotFound", 4040014: "imageNotFound", 4040015: "messageNotFound",
        4040018: "performanceTestRunNotFound", 4040019: "appTransactionDoesNotExist", 4040020: "defaultMessageNotFound",
        4040021: "realtimeUrlNotFound", 4090000: "imageAlreadyExists", 4090001: "messageAlreadyExists",
        4290000: "rateLimitExceeded", 5000000: "generalInternal", 5000001: "generalInternalRetryable",
    ]
}

/// Why an App Store Server API call failed: Apple answered with an error, the network failed,
/// or Apple's answer did not decode. The three are kept apart (docs/APP_STORE.md §5.5).
package enum AppStoreAPIError: Error, Sendable, CustomStringConvertible {
    /// Any non-2xx answer. `retryAfter` is Apple's `Retry-After` (epoch milliseconds) when sent.
    case api(status: Int, code: APIErrorCode?, message: String?, retryAfter: Int64?, environment: String)
    case transport(HTTPClientError, environment: String)
    case decoding(String, environment: String)

    package var description: String {
        switch self {
        case .api(let status, let code, let message, _, let environment):
            "App Store Server API (\(environment)) answered HTTP \(status)" + (code.map { ", error \($0)" } ?? "")
                + (message.map { ": \($0)" } ?? "")
        case .transport(let error, let environment): "App Store Server API (\(environment)) unreachable: \(error)"
        case .decoding(let detail, let environment): "App Store Server API (\(environment)) answer did not decode: \(detail)"
        }
    }

    /// 429, the `…Retryable` codes, 5xx and transport failures may succeed later (§5.6).
    package var isRetryable: Bool {
        switch self {
        case .api(let status, let code, _, _, _): status == 429 || status >= 500 || code?.isRetryable == true
        case .transport(let error, _): error.kind != .cancelled
        case .decoding: false
        }
    }

    package var apiCode: APIErrorCode? {
        if case .api(_, let code, _, _, _) = self { return code }
        return nil
    }
}
