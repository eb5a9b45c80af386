import Entitlements
import Foundation
package import JSON

/// The last listing of the app's retention messages Entitle fetched from Apple (`entitle retention
/// messages list`), kept beside the configuration so `check-config` can warn of a rule that
/// names a message Apple has not approved (Apple shows its default message then).
package enum RetentionMessageListing {
    package static func path(configuration: String, app: String) -> String {
        URL(fileURLWithPath: configuration).deletingLastPathComponent().appendingPathComponent("retention-messages-\(app).json").path
    }

    package static func save(_ listing: JSONObject, configuration: String, app: String) throws {
        try Data(JSONValue.object(listing).serializedBytes).write(to: URL(fileURLWithPath: path(configuration: configuration, app: app)))
    }

    /// Each message's state (`PENDING`, `APPROVED`, `REJECTED`) as last listed; nil: never listed.
    package static func states(configuration: String, app: String) -> [String: String]? {
        guard let data = FileManager.default.contents(atPath: path(configuration: configuration, app: app)),
            let listing = JSONParser.storedObject(String(decoding: data, as: UTF8.self))
        else { return nil }
        var states: [String: String] = [:]
        for item in listing["messageIdentifiers"]?.arrayValue ?? [] {
            if let id = item["messageIdentifier"]?.stringValue { states[id] = item["messageState"]?.stringValue ?? "?" }
        }
        return states
    }

    /// The messages an app's retention rules answer with that the last listing does not show approved.
    package static func unapproved(_ app: AppConfiguration, configuration: String) -> [String] {
        guard let policy = app.retention, let states = states(configuration: configuration, app: app.id) else { return [] }
        let named = [policy.defaultMessage] + policy.rules.map(\.answer.messageIdentifier)
        return Array(Set(named)).sorted().compactMap { id in
            let state = states[id]
            return state == "APPROVED" ? nil : "\(id) (\(state ?? "not uploaded"))"
        }
    }
}
