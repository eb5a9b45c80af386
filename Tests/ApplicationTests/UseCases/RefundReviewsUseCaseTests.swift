import AppStore
import AppStoreAPI
import Entitlements
import Foundation
import Instants
import JSON
import Synchronization
import TestSupport
import XCTest

@testable import Application

/// The refund reviews use case without HTTP (UseCaseFixture): answered by the app's policy, and
/// the server's clock decides when Apple's deadline has passed.
final class RefundReviewsUseCaseTests: XCTestCase {
    private func request(_ id: String, reason: String, at: Date, token: String) -> RefundRequest {
        let requested = Milliseconds.since1970(at)
        return RefundRequest(
            id: id, store: "app_store", environment: "Sandbox", appAccountToken: token, transactionId: "t-\(id)",
            originalTransactionId: "t-\(id)", reason: reason, requestedAt: requested, deadline: requested + RefundRequest.appleWindow)
    }

    private func waitFor(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(10)
        while try !condition() {
            guard Date() < deadline else { return XCTFail("waited 10 s for \(what)") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    func testARequestIsAnsweredByThePolicyAndOnePastItsDeadlineIsNot() throws {
        let fixture = try UseCaseFixture()
        let (store, clock, apple) = (fixture.store, fixture.clock, fixture.apple)
        let reviews = fixture.services.refundReviews

        var batch = FactBatch(appId: "app", environment: "Sandbox")
        batch.refundRequest = request("r-1", reason: "LEGAL", at: clock.now(), token: fixture.token)
        XCTAssertEqual(try store.apply(batch), .applied)
        reviews.kick()
        try waitFor("the answer to Apple") { !apple.consumption.all.isEmpty }
        let (transactionId, body) = try XCTUnwrap(apple.consumption.all.first)
        XCTAssertEqual(transactionId, "t-r-1")
        XCTAssertEqual(body["customerConsented"], true)
        XCTAssertEqual(body["refundPreference"], "DECLINE", "the rule for LEGAL")
        try waitFor("the request recorded as sent") {
            try store.refundRequests(appId: "app", limit: 10).first { $0.id == "r-1" }?.status == .sent
        }

        // A request made now and answered only after Apple's 12 hours: nothing is sent, it is LATE.
        var late = FactBatch(appId: "app", environment: "Sandbox")
        late.refundRequest = request("r-2", reason: "LEGAL", at: clock.now(), token: fixture.token)
        XCTAssertEqual(try store.apply(late), .applied)
        clock.advance(by: 13 * 3600)
        reviews.kick()
        try waitFor("the late request recorded") {
            try store.refundRequests(appId: "app", limit: 10).first { $0.id == "r-2" }?.status == .late
        }
        XCTAssertEqual(apple.consumption.all.map(\.0), ["t-r-1"], "nothing sent past the deadline")
    }
}

/// The App Store Server API port as a test sets it up: it records Send Consumption Information,
/// answers the subscription statuses, transaction history and notification history it was given,
/// and refuses every other call (the use cases under test make none).
final class RecordingAppStore: AppStoreServerAPI, Sendable {
    struct Answers {
        var statuses: [JSONValue] = []
        var history: [String] = []
        var notifications: [String] = []
    }

    let environment = "Sandbox"
    let consumption = LockedList<(String, JSONObject)>()
    let answers = Mutex(Answers())

    private func refused() -> AppStoreAPIError {
        .api(status: 500, code: nil, message: "not part of this test", retryAfter: nil, environment: environment)
    }

    func sendConsumptionInformation(_ transactionId: String, _ request: JSONObject) throws(AppStoreAPIError) {
        consumption.append((transactionId, request))
    }

    func getAllTransactionHistory(
        _ transactionId: String, since revision: String?, query: [(String, String)]
    ) throws(AppStoreAPIError) -> (signedTransactions: [String], revision: String?) {
        (answers.withLock { $0.history }, "revision-1")
    }
    func getAllSubscriptionStatuses(_ transactionId: String, status: [Int64]) throws(AppStoreAPIError) -> StatusResponse {
        let groups = answers.withLock { $0.statuses }
        guard !groups.isEmpty else { throw refused() }
        return StatusResponse(validated: ["environment": "Sandbox", "bundleId": "com.example.app", "data": .array(groups)])
    }
    func lookUpOrderId(_ orderId: String) throws(AppStoreAPIError) -> OrderLookupResponse { throw refused() }
    func setAppAccountToken(_ originalTransactionId: String, appAccountToken: String) throws(AppStoreAPIError) { throw refused() }
    func finishTransaction(_ transactionId: String) throws(AppStoreAPIError) { throw refused() }
    func getNotificationHistory(
        startDate: Int64, endDate: Int64, paginationToken: String?, onlyFailures: Bool
    ) throws(AppStoreAPIError) -> NotificationHistoryResponse {
        let payloads = answers.withLock { $0.notifications }
        return NotificationHistoryResponse(
            validated: ["hasMore": false, "notificationHistory": .array(payloads.map { .object(["signedPayload": .string($0)]) })])
    }
    func requestTestNotification() throws(AppStoreAPIError) -> SendTestNotificationResponse { throw refused() }
    func getTestNotificationStatus(_ token: String) throws(AppStoreAPIError) -> CheckTestNotificationResponse { throw refused() }
    func uploadRetentionImage(_ imageIdentifier: String, png: [UInt8], size: String) throws(AppStoreAPIError) { throw refused() }
    func retentionImages() throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func deleteRetentionImage(_ imageIdentifier: String) throws(AppStoreAPIError) { throw refused() }
    func uploadRetentionMessage(_ messageIdentifier: String, _ body: JSONObject) throws(AppStoreAPIError) { throw refused() }
    func retentionMessages() throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func deleteRetentionMessage(_ messageIdentifier: String) throws(AppStoreAPIError) { throw refused() }
    func setDefaultRetentionMessage(productId: String, locale: String, messageIdentifier: String) throws(AppStoreAPIError) {
        throw refused()
    }
    func defaultRetentionMessage(productId: String, locale: String) throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func deleteDefaultRetentionMessage(productId: String, locale: String) throws(AppStoreAPIError) { throw refused() }
    func setRealtimeURL(_ url: String) throws(AppStoreAPIError) { throw refused() }
    func realtimeURL() throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func deleteRealtimeURL() throws(AppStoreAPIError) { throw refused() }
    func startRetentionPerformanceTest(originalTransactionId: String) throws(AppStoreAPIError) -> JSONObject { throw refused() }
    func retentionPerformanceTestResult(_ requestId: String) throws(AppStoreAPIError) -> JSONObject { throw refused() }
}
