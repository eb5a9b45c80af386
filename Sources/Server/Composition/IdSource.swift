import Crypto
import Foundation

/// The composition root's id source: the ids of events and records (grants, usage, webhook
/// tests) are random UUIDs from the system's CSPRNG, lower-cased. The application only calls what
/// it is given (`EntitleApplication(newId:)`), so tests and the test store may give their own.
package enum IdSource {
    package static let random: @Sendable () -> String = { SecureRandom.uuid().uuidString.lowercased() }
}
