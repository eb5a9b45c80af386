import Crypto
import Foundation

/// The one check of an `appAccountToken` given by a caller: a UUID in canonical text, compared
/// and stored lower-case (StoreKit sends it as the app set it; Apple's payloads lower-case it).
package enum AppAccountToken {
    package static func validated(_ text: String) throws(ServiceError) -> String {
        guard UUID.isCanonicalText(text) else { throw .badRequest("appAccountToken must be a UUID") }
        return text.lowercased()
    }

    package static func validated(_ text: String?) throws(ServiceError) -> String? {
        guard let text else { return nil }
        return try validated(text)
    }
}
