import Foundation
import XCTest

@testable import Application

final class WebhookSignatureTests: XCTestCase {
    func testSignatureIsStandardWebhooks() {
        // The example of the Standard Webhooks specification (secret, id, timestamp, payload).
        let secret = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        let signature = WebhookSignature.header(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: #"{"test": 2432232314}"#,
            secret: Array(Data(base64Encoded: secret)!))
        XCTAssertEqual(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }
}
