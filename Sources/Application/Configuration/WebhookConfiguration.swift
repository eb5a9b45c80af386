package import AppStore
import Crypto
package import Entitlements
import Foundation
import JSON

/// One `webhooks[]` entry of an app: where its events go and the key that signs them.
package struct WebhookEndpoint: Sendable {
    package var url: String
    /// The decoded `whsec_` secret (Standard Webhooks): the HMAC-SHA256 key. Never logged.
    package var secret: [UInt8]
    /// Nil: every environment the app enables.
    package var environments: Set<AppStoreEnvironment>?
    /// Nil: every event type.
    package var events: Set<String>?

    /// The endpoint as the domain's event composer addresses events to it.
    package var eventEndpoint: EventEndpoint {
        EventEndpoint(url: url, environments: environments.map { Set($0.map(\.rawValue)) }, types: events)
    }

    /// The URL as logs and metrics name it: scheme, host, port and path only (user info and a
    /// query may carry credentials).
    package var label: String { Self.label(of: url) }

    package static func label(of url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else {
            return "invalid-url"
        }
        let port = components.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)\(components.path)"
    }
}

/// How deliveries are made (the top-level `delivery` object; the same for every app).
package struct DeliverySettings: Sendable {
    /// A 2xx must arrive within this; anything else is retried.
    package var timeoutSeconds = 10.0
    /// The first retry's delay; each next one doubles (with ±20 % jitter) up to `maxRetrySeconds`.
    package var firstRetrySeconds = 5.0
    package var maxRetrySeconds = 3600.0
    /// After this long without success a delivery is marked failed (dead).
    package var retryWindowSeconds = 86_400.0
    /// Deliveries in flight at once per endpoint (each endpoint has its own threads).
    package var concurrencyPerEndpoint = 2
    /// A PEM bundle to trust instead of the system's CAs (private receivers, tests).
    package var caFile: String?

    package init() {}
}

enum WebhookConfigurationParser {
    static func parseWebhooks(_ values: [JSONValue], path: String, reader: inout ConfigurationReader) -> [WebhookEndpoint] {
        var endpoints: [WebhookEndpoint] = []
        for (index, value) in values.enumerated() {
            let path = "\(path)[\(index)]"
            guard let object = value.objectValue else {
                reader.problem(path, "expected an object, found \(value.typeName)")
                continue
            }
            reader.checkMembers(object, allowed: ["url", "secret", "environments", "events"], path: path)
            let url = reader.string(object, "url", path: path, required: true).flatMap {
                checkedURL($0, path: "\(path).url", reader: &reader)
            }
            let secret = reader.string(object, "secret", path: path, required: true).flatMap {
                decodeSecret($0, path: "\(path).secret", reader: &reader)
            }
            var environments: Set<AppStoreEnvironment>?
            if let names = reader.stringArray(object, "environments", path: path) {
                environments = Set(names.map(AppStoreEnvironment.init(rawValue:)))
                for name in names where !AppStoreEnvironment.all.contains(AppStoreEnvironment(rawValue: name)) {
                    reader.problem("\(path).environments", "unknown environment \"\(name)\" (Production, Sandbox, Xcode, LocalTesting)")
                }
            }
            var events: Set<String>?
            if let names = reader.stringArray(object, "events", path: path) {
                events = Set(names)
                let known = Set(CustomerEvent.Kind.allCases.map(\.rawValue))
                for name in names where !known.contains(name) {
                    reader.problem("\(path).events", "unknown event type \"\(name)\"")
                }
            }
            if let url, endpoints.contains(where: { $0.url == url }) { reader.problem("\(path).url", "listed twice") }
            guard let url, let secret else { continue }
            endpoints.append(WebhookEndpoint(url: url, secret: secret, environments: environments, events: events))
        }
        return endpoints
    }

    static func parseForwarding(_ object: JSONObject?, path: String, reader: inout ConfigurationReader) -> [AppStoreEnvironment: String] {
        guard let object else { return [:] }
        var targets: [AppStoreEnvironment: String] = [:]
        for name in object.keys {
            let value = object[name]!
            let environment = AppStoreEnvironment(rawValue: name)
            guard AppStoreEnvironment.all.contains(environment), environment.isSigned else {
                reader.problem("\(path).\(name)", "unknown environment (Production, Sandbox)")
                continue
            }
            guard let text = value.stringValue else {
                reader.problem("\(path).\(name)", "expected a URL string, found \(value.typeName)")
                continue
            }
            if let url = checkedURL(text, path: "\(path).\(name)", reader: &reader) { targets[environment] = url }
        }
        return targets
    }

    static func parseDelivery(_ object: JSONObject?, folder: String, reader: inout ConfigurationReader) -> DeliverySettings {
        var settings = DeliverySettings()
        DeliverySettings.section.parse(object, folder: folder, into: &settings, reader: &reader)
        return settings
    }

    /// An absolute https URL (http only to this machine, for local receivers).
    private static func checkedURL(_ text: String, path: String, reader: inout ConfigurationReader) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            reader.problem(path, "\"\(WebhookEndpoint.label(of: text))\" is not an absolute URL")
            return nil
        }
        let local = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && local) else {
            reader.problem(path, "must be https (http only to localhost)")
            return nil
        }
        return text
    }

    /// `whsec_` followed by the base64 of 24 to 64 random bytes (Standard Webhooks).
    private static func decodeSecret(_ text: String, path: String, reader: inout ConfigurationReader) -> [UInt8]? {
        guard text.hasPrefix("whsec_"), let bytes = try? Base64.decode(text.dropFirst(6)) else {
            reader.problem(path, "must be \"whsec_\" followed by base64 (the value is not shown)")
            return nil
        }
        guard (24...64).contains(bytes.count) else {
            reader.problem(path, "must decode to 24 to 64 bytes, found \(bytes.count) (the value is not shown)")
            return nil
        }
        return bytes
    }
}
