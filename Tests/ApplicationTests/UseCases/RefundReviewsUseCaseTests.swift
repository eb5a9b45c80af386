import AppStore
import Entitlements
import Foundation
import Instants
import JSON
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
