import Crypto
import Foundation
import TestSupport
import XCTest

@testable import Application

/// A member renamed (`appStoreServerAPI.tokenRetrySeconds`, which now times every call to Apple,
/// is `callRetrySeconds`): the old name is still read and warned about, both at once is refused.
/// The parser, in-process.
final class RenamedMembersTests: XCTestCase {
    private func load(_ api: String) throws -> Result<EntitleConfiguration, ConfigurationError> {
        let folder = try makeTemporaryDirectory("entitle-config")
        try writeFile(folder.appendingPathComponent("key.p8"), try P256.Signing.PrivateKey().pemRepresentation)
        let text = """
            {"apps": [{"id": "app", "bundleId": "com.example.app", "environments": ["Sandbox"],
               "signingKey": {"keyId": "KEY1", "issuerId": "57246542-96fe-1a63-e053-0824d011072a", "privateKeyFile": "key.p8"},
               "apiKeys": [{"key": "server_key_0123456789", "role": "server"}],
               "appStoreServerAPI": {\(api)}}]}
            """
        return Result { () throws(ConfigurationError) in
            try ConfigurationLoader.load(text: Array(text.utf8), path: folder.appendingPathComponent("entitle.json").path, environment: [:])
        }
    }

    func testTheOldNameIsReadAndWarnedAboutAndBothAreRefused() throws {
        let current = try load(#""callRetrySeconds": 5"#).get()
        XCTAssertEqual(current.apps.first?.serverAPI.callRetrySeconds, 5)
        XCTAssertFalse(current.warnings.contains { $0.contains("old name") })

        let old = try load(#""tokenRetrySeconds": 7"#).get()
        XCTAssertEqual(old.apps.first?.serverAPI.callRetrySeconds, 7, "still read")
        XCTAssert(
            old.warnings.contains(
                "app app: apps[0].appStoreServerAPI.tokenRetrySeconds is the old name of apps[0].appStoreServerAPI.callRetrySeconds: "
                    + "rename it (the old name is still read)"), "\(old.warnings)")

        guard case .failure(let error) = try load(#""tokenRetrySeconds": 7, "callRetrySeconds": 5"#) else {
            return XCTFail("both names at once are refused")
        }
        XCTAssert(error.problems.contains { $0.contains("give callRetrySeconds alone") }, "\(error.problems)")
    }
}
