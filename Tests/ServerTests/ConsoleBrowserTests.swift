import Foundation
import HTTP
import JSON
import TestSupport
import XCTest

/// The console in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`)
/// driven by Selenium (PyPI) from `Tests/TestSupport/console-browser.py`. Sign in, search a customer
/// by each kind of key, read the badges, grant a month, see it, use the time chooser, revoke,
/// re-sync, filter notifications, retry a failed delivery, sign out and be refused — then the same
/// pages at a phone-sized window. Screenshots of each page go to `.build/test-output/console/`.
final class ConsoleBrowserTests: XCTestCase {
    private static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func requireBrowser() throws -> (chromium: String, driver: String, python: String) {
        let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let driver = ["/usr/bin/chromedriver"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let chromium, let driver else {
            let notice =
                "ConsoleBrowserTests skipped: no Chromium (apt-get install chromium chromium-driver, or Scripts/install-dependencies.sh --tests)"
            print(notice)
            throw XCTSkip(notice)
        }
        return (chromium, driver, try requireTestPython("selenium", for: "ConsoleBrowserTests"))
    }

    func testASupportPersonFindsACustomerAndGrantsAMonthInTheBrowser() throws {
        let browser = try requireBrowser()
        // A webhook endpoint nobody listens on, with a one-second window: its deliveries fail fast,
        // so the deliveries page has a failed one to retry.
        let fixture = try SupportFixture(
            top: #", "delivery": {"firstRetrySeconds": 0.2, "maxRetrySeconds": 0.3, "retryWindowSeconds": 1, "timeoutSeconds": 1}"#,
            app: #", "webhooks": [{"url": "http://127.0.0.1:9/hook", "secret": "whsec_c2VjcmV0LWZvci10aGUtY29uc29sZS10ZXN0"}]"#,
            // Production first, with no data in it: Charts must open on Sandbox, where the data is.
            environments: #"["Production", "Sandbox"]"#)
        try fixture.seedCustomer()
        XCTAssertEqual(try fixture.postForgedNotification().status, 422)
        let renewal = try fixture.call(
            "POST", "/v1/transactions", key: SupportFixture.client,
            body: ["signedTransaction": .string(try fixture.expiredTransaction(id: "1001", signed: fixture.base + 4))])
        XCTAssertEqual(renewal.status, 200, renewal.text)
        // A refund request for the refund requests page (this app gives no consent: recorded, not answered).
        let request = try fixture.notification(
            "6f1c0e0a-0000-4000-8000-000000000010", type: "CONSUMPTION_REQUEST", subtype: nil,
            transaction: try fixture.expiredTransaction(id: "1001", signed: fixture.base + 5), renewal: nil, signed: fixture.base + 6)
        XCTAssertEqual(try fixture.call("POST", "/v1/notifications/apple", key: nil, body: ["signedPayload": .string(request)]).status, 200)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline,
            try fixture.call("GET", "/v1/webhooks/deliveries?status=failed").json["deliveries"]?.arrayValue?.isEmpty ?? true
        {
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertFalse(
            try fixture.call("GET", "/v1/webhooks/deliveries?status=failed").json["deliveries"]?.arrayValue?.isEmpty ?? true,
            "a failed delivery to retry")

        let output = Self.packageRoot.appendingPathComponent(".build/test-output/console")
        try? FileManager.default.removeItem(at: output)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        // While the subscription was still running, 39 days ago.
        let past = Date(timeIntervalSince1970: Double(fixture.base - 39 * SupportFixture.day) / 1000)
        let script = Self.packageRoot.appendingPathComponent("Tests/TestSupport/console-browser.py").path
        let run = try runProcess(
            browser.python,
            [
                script, "--url", fixture.url, "--key", SupportFixture.admin, "--token", fixture.token, "--original", "1000",
                "--transaction", "1001", "--app-transaction", "704000000000001", "--order", "MK5TTTVWJH",
                "--past", ISO8601DateFormatter().string(from: past), "--out", output.path, "--chromium", browser.chromium,
                "--driver", browser.driver,
            ])
        XCTAssertEqual(run.status, 0, "browser steps failed:\n\(run.stdout)\n\(run.stderr)")
        XCTAssert(run.stdout.contains("console: all steps passed"), run.stdout)
        for page in [
            "desktop-sign-in", "desktop-overview", "desktop-search", "desktop-customer", "desktop-customer-granted",
            "desktop-customer-as-of", "desktop-notifications", "desktop-deliveries", "desktop-refunds", "desktop-charts",
            "desktop-signed-out",
            "phone-sign-in", "phone-overview", "phone-search", "phone-customer", "phone-notifications", "phone-deliveries",
            "phone-refunds", "phone-charts",
        ] {
            let bytes = try Data(contentsOf: output.appendingPathComponent("\(page).png"))
            XCTAssertEqual(Array(bytes.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "\(page).png is a PNG")
        }
        XCTAssert(
            fixture.standIn.requests.contains { $0.path.hasPrefix("/inApps/v1/subscriptions/") || $0.path.contains("/history/") },
            "the re-sync asked Apple")
    }
}
