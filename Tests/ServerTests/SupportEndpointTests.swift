import Foundation
import HTTP
import JSON
import TestSupport
import XCTest

/// The admin API over HTTP: promotional grants (both forms), revocation, the events they cause,
/// a customer's history, search by every key, the overview, role checks, and the console's
/// session (cookie, CSRF, sign-out, rate-limited sign-in).
final class SupportEndpointTests: XCTestCase {
    private var fixture: SupportFixture!

    override func setUpWithError() throws { fixture = try SupportFixture() }
    override func tearDownWithError() throws { fixture = nil }

    private var token: String { fixture.token }
    private var grants: String { "/v1/subscribers/\(fixture.token)/entitlements/pro/grants" }

    private func entitlement(_ name: String = "pro", at: String? = nil) throws -> JSONValue? {
        let reply = try fixture.call("GET", "/v1/subscribers/\(token)" + (at.map { "?at=\($0)" } ?? ""))
        XCTAssertEqual(reply.status, 200, reply.text)
        return reply.json["subscriber"]?["entitlements"]?[name]
    }

    // MARK: - Grants

    func testAGrantOfAMonthBeatsAnExpiredSubscription() throws {
        try fixture.seedCustomer()
        XCTAssertEqual(try entitlement()?["state"], "EXPIRED")
        let before = Date()
        let reply = try fixture.call("POST", grants, body: ["duration": "P1M", "reason": "sorry for the outage"])
        XCTAssertEqual(reply.status, 201, reply.text)
        let grant = try XCTUnwrap(reply.json["grant"])
        XCTAssertEqual(grant["entitlement"], "pro")
        XCTAssertEqual(grant["store"], "promotional")
        XCTAssertEqual(grant["state"], "ACTIVE")
        XCTAssertEqual(grant["grantedBy"], "Dana (support)", "recorded under the admin key's name")
        XCTAssertEqual(grant["reason"], "sorry for the outage")
        let starts = try XCTUnwrap(grant["startsAtMs"]?.int64Value)
        let expires = try XCTUnwrap(grant["expiresDateMs"]?.int64Value)
        XCTAssertGreaterThanOrEqual(starts, Int64(before.timeIntervalSince1970 * 1000))
        // A calendar month: 28 to 31 days.
        XCTAssert((28 * SupportFixture.day...31 * SupportFixture.day).contains(expires - starts), "\(expires - starts)")
        let now = try XCTUnwrap(try entitlement())
        XCTAssertEqual(now["isActive"], true, "an active grant beats the expired subscription")
        XCTAssertEqual(now["store"], "promotional")
        XCTAssertEqual(now["grantId"], grant["id"])
        XCTAssertEqual(now["expiresDateMs"]?.int64Value, expires)
        XCTAssertNil(now["productId"])
        // The subscription itself is still shown as it is.
        let subscriber = try fixture.call("GET", "/v1/subscribers/\(token)").json["subscriber"]
        XCTAssertEqual(subscriber?["subscriptions"]?["pro.monthly"]?["state"], "EXPIRED")
        // As of an instant before the grant: the subscription's answer.
        XCTAssertEqual(try entitlement(at: String(starts - 1))?["state"], "EXPIRED")
        XCTAssertEqual(try entitlement(at: String(starts - 1))?["store"], "app_store")
    }

    func testAGrantUntilAnInstantAndItsChecks() throws {
        let until = "2030-01-02T03:04:05Z"
        let reply = try fixture.call("POST", grants, body: ["expiresDate": .string(until)])
        XCTAssertEqual(reply.status, 201, reply.text)
        XCTAssertEqual(reply.json["grant"]?["expiresDate"], "2030-01-02T03:04:05.000Z")
        XCTAssertEqual(try entitlement()?["isActive"], true, "a customer with nothing else is found by the grant")
        XCTAssertEqual(try fixture.call("POST", grants, body: ["duration": "P1M", "expiresDate": .string(until)]).status, 400)
        XCTAssertEqual(try fixture.call("POST", grants, body: [:]).status, 400)
        XCTAssertEqual(try fixture.call("POST", grants, body: ["duration": "one month"]).json["error"]?["code"], "BAD_REQUEST")
        XCTAssertEqual(try fixture.call("POST", grants, body: ["expiresDate": "2001-01-01T00:00:00Z"]).status, 400, "in the past")
        XCTAssertEqual(try fixture.call("POST", grants, body: ["duration": "P100Y"]).status, 400, "longer than 10 years")
        let unknown = try fixture.call("POST", "/v1/subscribers/\(token)/entitlements/gold/grants", body: ["duration": "P1M"])
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(unknown.json["error"]?["code"], "UNKNOWN_ENTITLEMENT")
        XCTAssertEqual(
            try fixture.call("POST", "/v1/subscribers/not-a-uuid/entitlements/pro/grants", body: ["duration": "P1M"]).status, 400)
    }

    func testRevokingEndsTheGrantOnceAndCausesTheEvents() throws {
        try fixture.seedCustomer()
        let given = try fixture.call("POST", grants, body: ["duration": "P7D"])
        let id = try XCTUnwrap(given.json["grant"]?["id"]?.stringValue)
        let revoked = try fixture.call("DELETE", "\(grants)/\(id)", key: SupportFixture.otherAdmin)
        XCTAssertEqual(revoked.status, 200, revoked.text)
        XCTAssertEqual(revoked.json["grant"]?["state"], "REVOKED")
        XCTAssertEqual(revoked.json["grant"]?["revokedBy"], "admin key 4", "an unnamed key is named by its role and place")
        XCTAssertEqual(try entitlement()?["state"], "EXPIRED", "the subscription's answer is back")
        XCTAssertEqual(try entitlement()?["store"], "app_store")
        let again = try fixture.call("DELETE", "\(grants)/\(id)")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.json["grant"]?["revokedBy"], "admin key 4", "revoking twice changes nothing")
        XCTAssertEqual(try fixture.call("DELETE", "\(grants)/00000000-0000-4000-8000-000000000000").status, 404)
        XCTAssertEqual(try fixture.call("DELETE", "/v1/subscribers/\(token)/entitlements/extras/grants/\(id)").status, 404)

        let events = try fixture.call("GET", "/v1/events", key: SupportFixture.server).json["events"]?.arrayValue ?? []
        let types = events.compactMap { $0["type"]?.stringValue }
        XCTAssertEqual(types.filter { $0.hasPrefix("PROMOTIONAL") }, ["PROMOTIONAL_GRANT", "PROMOTIONAL_GRANT_REVOKED"])
        let grantEvent = try XCTUnwrap(events.first { $0["type"] == "PROMOTIONAL_GRANT" })
        XCTAssertEqual(grantEvent["appAccountToken"]?.stringValue, token)
        XCTAssertEqual(grantEvent["source"], "support")
        XCTAssertEqual(grantEvent["entitlements"]?.arrayValue?.compactMap(\.stringValue), ["pro"])
        XCTAssertEqual(grantEvent["grant"]?["id"]?.stringValue, id)
        XCTAssertEqual(grantEvent["subscriber"]?["entitlements"]?["pro"]?["store"], "promotional", "the subscriber after the grant")
        let revokedEvent = try XCTUnwrap(events.first { $0["type"] == "PROMOTIONAL_GRANT_REVOKED" })
        XCTAssertEqual(revokedEvent["subscriber"]?["entitlements"]?["pro"]?["state"], "EXPIRED")
    }

    /// The subscriber in a later purchase event's body counts the customer's grant (the writer
    /// reads grants only for customers known to have one).
    func testLaterEventsShowTheGrantInTheirSubscriber() throws {
        try fixture.seedCustomer()
        XCTAssertEqual(try fixture.call("POST", grants, body: ["duration": "P1M"]).status, 201)
        let renewal = try fixture.call(
            "POST", "/v1/transactions", key: SupportFixture.client,
            body: ["signedTransaction": .string(try fixture.expiredTransaction(id: "1001", signed: fixture.base + 4))])
        XCTAssertEqual(renewal.status, 200, renewal.text)
        let events = try fixture.call("GET", "/v1/events", key: SupportFixture.server).json["events"]?.arrayValue ?? []
        let renewed = try XCTUnwrap(events.last { $0["type"] == "RENEWAL" }, "\(events.compactMap { $0["type"]?.stringValue })")
        XCTAssertEqual(renewed["subscriber"]?["entitlements"]?["pro"]?["store"], "promotional")
        XCTAssertEqual(renewed["subscriber"]?["entitlements"]?["pro"]?["isActive"], true)
    }

    // MARK: - History

    func testTheHistoryListsEveryFactInTimeOrderWithItsSource() throws {
        try fixture.seedCustomer()
        let id = try XCTUnwrap(try fixture.call("POST", grants, body: ["duration": "P1M"]).json["grant"]?["id"]?.stringValue)
        XCTAssertEqual(try fixture.call("DELETE", "\(grants)/\(id)").status, 200)
        let reply = try fixture.call("GET", "/v1/subscribers/\(token)/history")
        XCTAssertEqual(reply.status, 200, reply.text)
        let history = try XCTUnwrap(reply.json["history"]?.arrayValue)
        let kinds = history.compactMap { $0["kind"]?.stringValue }
        for kind in ["transaction", "renewalInfo", "notification", "grant", "grantRevoked", "event"] {
            XCTAssert(kinds.contains(kind), "\(kind) missing from \(kinds)")
        }
        let instants = history.compactMap { $0["atMs"]?.int64Value }
        XCTAssertEqual(instants.count, history.count)
        XCTAssertEqual(instants, instants.sorted(), "time order")
        XCTAssertEqual(kinds.first, "transaction", "bought 40 days ago: the oldest fact")
        XCTAssertEqual(Array(kinds.suffix(2)), ["grantRevoked", "event"], "the revocation and its event come last")

        let transaction = try XCTUnwrap(history.first { $0["kind"] == "transaction" })
        XCTAssertEqual(transaction["payload"]?["productId"], "pro.monthly", "signed data decoded")
        XCTAssertEqual(transaction["source"], "App Store (signed by Apple)")
        let notification = try XCTUnwrap(history.first { $0["kind"] == "notification" })
        XCTAssertEqual(notification["notificationType"], "EXPIRED")
        XCTAssertEqual(notification["payload"]?["data"]?["transactionInfo"]?["transactionId"], "1000", "inner JWS decoded too")
        XCTAssertEqual(history.first { $0["kind"] == "grant" }?["source"], "support: Dana (support)")
        let eventTypes = history.filter { $0["kind"] == "event" }.compactMap { $0["type"]?.stringValue }
        XCTAssertEqual(eventTypes.first, "INITIAL_PURCHASE")
        XCTAssert(eventTypes.contains("EXPIRATION"), "\(eventTypes)")
        XCTAssertEqual(Array(eventTypes.suffix(2)), ["PROMOTIONAL_GRANT", "PROMOTIONAL_GRANT_REVOKED"])
        XCTAssertEqual(reply.json["grants"]?.arrayValue?.first?["state"], "REVOKED")
        XCTAssertEqual(try fixture.call("GET", "/v1/subscribers/00000000-0000-4000-8000-000000000000/history").status, 404)
    }

    // MARK: - Search

    func testSearchFindsTheCustomerByEveryKey() throws {
        try fixture.seedCustomer()
        func matches(_ query: String) throws -> [JSONValue] {
            let reply = try fixture.call("GET", "/v1/subscribers?query=\(query)")
            XCTAssertEqual(reply.status, 200, reply.text)
            return reply.json["matches"]?.arrayValue ?? []
        }
        for (query, matchedBy) in [
            (token, "appAccountToken"), (token.uppercased(), "appAccountToken"), ("1000", "originalTransactionId"),
            ("704000000000001", "appTransactionId"),
        ] {
            let found = try matches(query)
            XCTAssertEqual(found.count, 1, query)
            XCTAssertEqual(found.first?["matchedBy"]?.stringValue, matchedBy, query)
            XCTAssertEqual(found.first?["appAccountToken"]?.stringValue, token, query)
            XCTAssertEqual(found.first?["subscriber"]?["entitlements"]?["pro"]?["state"], "EXPIRED", query)
        }
        // A renewal's transaction id finds its subscription.
        let renewal = try fixture.call(
            "POST", "/v1/transactions", key: SupportFixture.client,
            body: ["signedTransaction": .string(try fixture.expiredTransaction(id: "1001", signed: fixture.base + 4))])
        XCTAssertEqual(renewal.status, 200, renewal.text)
        XCTAssertEqual(try matches("1001").first?["matchedBy"], "transactionId")
        XCTAssertEqual(try matches("1001").first?["appAccountToken"]?.stringValue, token)
        // An order ID from the receipt e-mail is looked up with Apple (the stand-in answers with a
        // signed transaction of subscription 1000), stored, and leads to the customer.
        let order = try matches("MK5TTTVWJH")
        XCTAssertEqual(order.first?["matchedBy"], "orderId")
        XCTAssertEqual(order.first?["appAccountToken"]?.stringValue, token)
        XCTAssert(fixture.standIn.requests.contains { $0.path == "/inApps/v1/lookup/MK5TTTVWJH" }, "asked Apple")
        XCTAssertEqual(try matches("nothing-like-this"), [])
        XCTAssertEqual(try fixture.call("GET", "/v1/subscribers").status, 400)
    }

    // MARK: - Overview

    func testTheOverviewCountsCustomersNotificationsAndGrants() throws {
        try fixture.seedCustomer()
        XCTAssertEqual(try fixture.call("POST", grants, body: ["duration": "P1M"]).status, 201)
        let bad = try fixture.postForgedNotification()
        XCTAssertNotEqual(bad.status, 200, "signed by another root")
        let reply = try fixture.call("GET", "/v1/stats")
        XCTAssertEqual(reply.status, 200, reply.text)
        let stats = try XCTUnwrap(reply.json["stats"])
        XCTAssertEqual(stats["activeSubscribers"]?["Sandbox"]?["pro"], 1, "the grant makes the customer active")
        XCTAssertEqual(stats["activeSubscribers"]?["Sandbox"]?["extras"], 0)
        XCTAssertEqual(stats["activePromotionalGrants"]?["Sandbox"], 1)
        XCTAssertEqual(stats["trialsRunning"]?["Sandbox"], 0)
        XCTAssertEqual(stats["notifications"]?["lastHour"]?["total"], 1)
        XCTAssertEqual(stats["notifications"]?["lastDay"]?["byType"]?["EXPIRED"], 1)
        XCTAssertEqual(stats["notifications"]?["hourly"]?.arrayValue?.count, 24)
        XCTAssertEqual(stats["notifications"]?["hourly"]?.arrayValue?.last?["count"], 1, "this hour's bar")
        XCTAssertGreaterThanOrEqual(stats["verificationFailures"]?["lastHour"]?["total"]?.int64Value ?? 0, 1)
        XCTAssertEqual(stats["webhookDeliveries"]?["pending"], 0)
    }

    func testRefusedNotificationsAreListedWithWhatTheyClaimed() throws {
        XCTAssertEqual(try fixture.postForgedNotification().status, 422)
        let reply = try fixture.call("GET", "/v1/notifications/refused", key: SupportFixture.server)
        XCTAssertEqual(reply.status, 200, reply.text)
        let refused = try XCTUnwrap(reply.json["refused"]?.arrayValue?.first)
        XCTAssertEqual(refused["result"], "refused")
        XCTAssertEqual(refused["notificationType"], "DID_RENEW", "as claimed")
        XCTAssertEqual(refused["environment"], "Sandbox")
        XCTAssertEqual(refused["status"], "INVALID_CHAIN")
        XCTAssertNotNil(refused["reason"]?.stringValue)
        XCTAssertEqual(
            try fixture.call("GET", "/v1/notifications", key: SupportFixture.server).json["notifications"]?.arrayValue?.count, 0,
            "not stored")
        XCTAssertEqual(try fixture.call("GET", "/v1/notifications/refused", key: SupportFixture.client).status, 403)
    }

    // MARK: - Roles

    func testOnlyAdminKeysReachTheAdminAPI() throws {
        try fixture.seedCustomer()
        let paths: [(String, String, JSONObject?)] = [
            ("POST", grants, ["duration": "P1M"]), ("DELETE", "\(grants)/00000000-0000-4000-8000-000000000000", nil),
            ("GET", "/v1/subscribers/\(token)/history", nil), ("GET", "/v1/subscribers?query=1000", nil), ("GET", "/v1/stats", nil),
        ]
        for (method, path, body) in paths {
            for key in [SupportFixture.client, SupportFixture.server] {
                let reply = try fixture.call(method, path, key: key, body: body)
                XCTAssertEqual(reply.status, 403, "\(method) \(path) with \(key)")
                XCTAssertEqual(reply.json["error"]?["code"], "FORBIDDEN")
            }
            XCTAssertEqual(try fixture.call(method, path, key: nil, body: body).status, 401)
            XCTAssertEqual(try fixture.call(method, path, key: "unknown_key_0123456789", body: body).status, 401)
        }
        // An admin key may do what a server key may.
        XCTAssertEqual(try fixture.call("GET", "/v1/notifications").status, 200)
        XCTAssertEqual(try fixture.call("GET", "/v1/subscribers/by-transaction/1000").status, 200)
        XCTAssertEqual(try fixture.call("GET", "/v1/events").status, 200)
    }

    // MARK: - Console session

    private func signIn(_ key: String = SupportFixture.admin, headers: [String] = []) throws -> SupportFixture.Reply {
        try fixture.call("POST", "/console/session", key: nil, body: ["key": .string(key)], headers: headers)
    }

    private func cookieValue(_ reply: SupportFixture.Reply) -> String? {
        reply.headers["set-cookie"]?.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last.map(String.init)
    }

    func testTheConsoleSessionIsAStrictHttpOnlyCookieWithACSRFToken() throws {
        let reply = try signIn()
        XCTAssertEqual(reply.status, 200, reply.text)
        let setCookie = try XCTUnwrap(reply.headers["set-cookie"])
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=28800"] { XCTAssert(setCookie.contains(attribute), setCookie) }
        XCTAssertFalse(setCookie.contains("Secure"), "plain HTTP without a TLS proxy")
        XCTAssertFalse(reply.text.contains(SupportFixture.admin), "the key is never answered")
        XCTAssertEqual(reply.json["keyName"], "Dana (support)")
        let cookie = try XCTUnwrap(cookieValue(reply))
        let csrf = try XCTUnwrap(reply.json["csrfToken"]?.stringValue)
        XCTAssertFalse(cookie.contains(csrf), "the CSRF token is not readable from the cookie")

        XCTAssertEqual(try fixture.call("GET", "/v1/stats", key: nil, cookie: cookie).status, 200)
        XCTAssertEqual(try fixture.call("GET", "/console/session", key: nil, cookie: cookie).json["csrfToken"]?.stringValue, csrf)
        let withoutToken = try fixture.call("POST", grants, key: nil, cookie: cookie, body: ["duration": "P1M"])
        XCTAssertEqual(withoutToken.status, 403)
        XCTAssertEqual(withoutToken.json["error"]?["code"], "CSRF_TOKEN_INVALID")
        XCTAssertEqual(
            try fixture.call(
                "POST", grants, key: nil, cookie: cookie, csrf: (csrf.first == "0" ? "1" : "0") + csrf.dropFirst(),
                body: ["duration": "P1M"]
            ).status, 403)
        let granted = try fixture.call("POST", grants, key: nil, cookie: cookie, csrf: csrf, body: ["duration": "P1M"])
        XCTAssertEqual(granted.status, 201, granted.text)
        XCTAssertEqual(granted.json["grant"]?["grantedBy"], "Dana (support)")
        let forged = cookie.replacingOccurrences(of: ".", with: "x", options: [], range: cookie.range(of: "."))
        XCTAssertEqual(try fixture.call("GET", "/v1/stats", key: nil, cookie: forged).status, 401)

        XCTAssertEqual(try fixture.call("DELETE", "/console/session", key: nil, cookie: cookie).status, 403, "sign-out needs the token")
        let out = try fixture.call("DELETE", "/console/session", key: nil, cookie: cookie, csrf: csrf)
        XCTAssertEqual(out.status, 200)
        XCTAssert(out.headers["set-cookie"]?.contains("Max-Age=0") == true, "the cookie is cleared")
        XCTAssertEqual(try fixture.call("GET", "/v1/stats", key: nil, cookie: cookie).status, 401, "a signed-out session is refused")
        XCTAssertEqual(try fixture.call("GET", "/console/session", key: nil, cookie: cookie).status, 401)
    }

    func testBehindATLSProxyTheCookieIsSecure() throws {
        let reply = try signIn(headers: ["X-Forwarded-Proto: https"])
        XCTAssert(reply.headers["set-cookie"]?.contains("; Secure") == true)
    }

    func testOnlyAdminKeysSignInAndFailuresAreRateLimited() throws {
        XCTAssertEqual(try signIn(SupportFixture.server).status, 403)
        XCTAssertEqual(try signIn(SupportFixture.client).status, 403)
        for _ in 0..<3 { XCTAssertEqual(try signIn("wrong_key_0123456789").status, 401) }
        let limited = try signIn("wrong_key_0123456789")
        XCTAssertEqual(limited.status, 429, "five failures from this address: further guesses wait")
        XCTAssertEqual(limited.json["error"]?["code"], "TOO_MANY_ATTEMPTS")
        XCTAssertNotNil(limited.headers["retry-after"])
        let right = try signIn()
        XCTAssertEqual(right.status, 429, "past the limit the right key gets what a wrong one gets: no oracle")
        XCTAssertEqual(right.json["error"]?["code"], "TOO_MANY_ATTEMPTS")
        // Behind a proxy on this machine, the client is the address the proxy forwarded: another
        // address's admin still signs in.
        XCTAssertEqual(try signIn(headers: ["X-Forwarded-For: 203.0.113.7"]).status, 200)
        // A client's own X-Forwarded-For line comes before the proxy's: the proxy's last hop counts.
        XCTAssertEqual(try signIn(headers: ["X-Forwarded-For: 203.0.113.7", "X-Forwarded-For: 127.0.0.1"]).status, 429)
        XCTAssertEqual(try signIn(headers: ["X-Forwarded-For: 127.0.0.1", "X-Forwarded-For: 203.0.113.7"]).status, 200)
    }

    /// 100 failures spread over addresses used to lock every admin out for five minutes; then the
    /// overall limit answered 429 to a wrong key but 200 to the right one from any new address.
    func testFailuresFromEverywhereDoNotLockOutSupportNorTellAGuesser() throws {
        XCTAssertEqual(try signIn(headers: ["X-Forwarded-For: 203.0.113.10"]).status, 200, "support signed in here before")
        for client in 0..<100 {
            _ = try signIn("wrong_key_0123456789", headers: ["X-Forwarded-For: 198.51.100.\(client)"])
        }
        let guess = try signIn("wrong_key_0123456789", headers: ["X-Forwarded-For: 203.0.113.9"])
        XCTAssertEqual(guess.status, 429, "the overall limit still bounds guessing from new addresses")
        XCTAssertEqual(try signIn(headers: ["X-Forwarded-For: 203.0.113.9"]).status, 429, "and the right key there is told the same")
        XCTAssertEqual(try signIn(headers: ["X-Forwarded-For: 203.0.113.10"]).status, 200, "an address that signed in before gets in")
    }

    private static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func testTheConsolePageRunsOnlyItsOwnScript() throws {
        let page = try fixture.call("GET", "/console", key: nil)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
        let policy = try XCTUnwrap(page.headers["content-security-policy"])
        XCTAssert(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"), policy)
        XCTAssertFalse(policy.contains("unsafe-inline"))
        XCTAssertEqual(page.headers["x-content-type-options"], "nosniff")
        XCTAssertEqual(page.headers["x-frame-options"], "DENY")
        // Every script has a src; no handler attributes (a CSP without 'unsafe-inline' would block them).
        let scripts = page.text.components(separatedBy: "<script").dropFirst()
        XCTAssertFalse(scripts.isEmpty)
        for script in scripts { XCTAssert(script.hasPrefix(" type=\"module\" src=\"/console/"), String(script.prefix(60))) }
        XCTAssertNil(page.text.range(of: #"\son[a-z]+="#, options: .regularExpression))
        // The console's real files (Sources/Server/Console/Assets), served as they are on disk, each
        // with its content hash as ETag: asked again with it, the answer is 304 with no body.
        let assets = Self.packageRoot.appendingPathComponent("Sources/Server/Console/Assets")
        for (path, file) in [
            ("/console", "index.html"), ("/console/console.js", "console.js"), ("/console/format.js", "format.js"),
            ("/console/console.css", "console.css"),
        ] {
            let reply = try fixture.call("GET", path, key: nil)
            XCTAssertEqual(reply.status, 200, path)
            XCTAssertNotNil(reply.headers["content-security-policy"])
            XCTAssertEqual(reply.text, try String(contentsOf: assets.appendingPathComponent(file), encoding: .utf8), path)
            let etag = try XCTUnwrap(reply.headers["etag"], path)
            let again = try fixture.call("GET", path, key: nil, headers: ["If-None-Match: \(etag)"])
            XCTAssertEqual(again.status, 304, path)
            XCTAssertEqual(again.text, "", path)
            XCTAssertEqual(try fixture.call("GET", path, key: nil, headers: ["If-None-Match: \"other\""]).status, 200, path)
        }
        for key in [SupportFixture.admin, SupportFixture.server, SupportFixture.client] {
            XCTAssertFalse(page.text.contains(key))
        }
        let api = try fixture.call("GET", "/v1/stats")
        XCTAssertEqual(api.headers["x-content-type-options"], "nosniff", "API answers too")
    }
}
