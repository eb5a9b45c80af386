import Crypto
import Foundation
import JSON

/// Reads the JSON configuration of docs/API.md, applies environment overrides, loads the signing
/// keys and checks every rule. Either a complete `EntitleConfiguration` or every problem at once.
package enum ConfigurationLoader {
    package static func load(
        path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    )
        throws(ConfigurationError) -> EntitleConfiguration
    {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"
            throw ConfigurationError(problems: ["\(path): \(reason)"])
        }
        return try load(text: [UInt8](data), path: path, environment: environment)
    }

    /// The configuration in `text`, as if read from `path` (files it names are found beside it).
    package static func load(text: [UInt8], path: String, environment: [String: String]) throws(ConfigurationError) -> EntitleConfiguration
    {
        let root: JSONValue
        do { root = try JSONParser.parse(text, rejectDuplicateKeys: false) } catch {
            throw ConfigurationError(problems: ["\(path): not valid JSON: \(error)"])
        }
        guard let object = root.objectValue else {
            throw ConfigurationError(problems: ["\(path): expected a JSON object at the top level"])
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var reader = ConfigurationReader()
        let configuration = parse(object, folder: folder, path: path, environment: environment, reader: &reader)
        guard reader.problems.isEmpty, let configuration else {
            throw ConfigurationError(problems: reader.problems.map { "\(path): \($0)" })
        }
        return configuration
    }

    /// Resolves a path from the file against the configuration's folder.
    package static func resolve(_ file: String, in folder: String) -> String {
        file.hasPrefix("/") ? file : URL(fileURLWithPath: folder).appendingPathComponent(file).path
    }

    // MARK: - Top level

    private static func parse(
        _ root: JSONObject, folder: String, path: String, environment: [String: String],
        reader: inout ConfigurationReader
    ) -> EntitleConfiguration? {
        reader.checkMembers(
            root, allowed: ["server", "storage", "delivery", "console", "apps", "rateLimits", "metrics", "testStore", "responseSigning"],
            path: "config")
        var server = parseServer(reader.object(root, "server", path: "config"), reader: &reader)
        applyServerOverrides(&server, environment: environment, reader: &reader)
        var storageMembers = StorageMembers()
        StorageMembers.section.parse(reader.object(root, "storage", path: "config"), folder: folder, into: &storageMembers, reader: &reader)
        StorageMembers.section.applyOverrides(environment, folder: folder, into: &storageMembers, reader: &reader)
        let storage = StorageSettings(storageMembers, folder: folder, reader: &reader)

        guard let appValues = reader.array(root, "apps", path: "config") else {
            if root["apps"] == nil { reader.problem("config", "missing \"apps\" (at least one app is needed)") }
            return nil
        }
        if appValues.isEmpty { reader.problem("apps", "at least one app is needed") }
        var apps: [AppConfiguration] = []
        for (index, value) in appValues.enumerated() {
            guard let appObject = value.objectValue else {
                reader.problem("apps[\(index)]", "expected an object, found \(value.typeName)")
                continue
            }
            if let app = AppConfigurationParser.parse(
                appObject, path: "apps[\(index)]", folder: folder,
                environment: environment, reader: &reader)
            {
                apps.append(app)
            }
        }
        checkAcrossApps(apps, reader: &reader)
        var configuration = EntitleConfiguration(server: server, storage: storage, apps: apps, path: path)
        configuration.delivery = WebhookConfigurationParser.parseDelivery(
            reader.object(root, "delivery", path: "config"), folder: folder, reader: &reader)
        configuration.console = ConsoleSettingsParser.parse(reader.object(root, "console", path: "config"), folder: folder, reader: &reader)
        RateLimitSettings.section.parse(reader.object(root, "rateLimits", path: "config"), into: &configuration.rateLimits, reader: &reader)
        MetricsSettings.section.parse(
            reader.object(root, "metrics", path: "config"), folder: folder, into: &configuration.metrics, reader: &reader)
        TestStoreSettings.section.parse(
            reader.object(root, "testStore", path: "config"), folder: folder, into: &configuration.testStore, reader: &reader)
        configuration.enableTestStore(reader: &reader)
        ResponseSigningSettings.section.parse(
            reader.object(root, "responseSigning", path: "config"), folder: folder, into: &configuration.responseSigning, reader: &reader)
        configuration.loadResponseSigningKey(reader: &reader)
        return configuration
    }

    private static func parseServer(_ object: JSONObject?, reader: inout ConfigurationReader) -> ServerSettings {
        var server = ServerSettings()
        ServerSettings.section.parse(object, into: &server, reader: &reader)
        return server
    }

    /// The `ENTITLE_*` variables of `ServerSettings.section` override the file (deployments set
    /// them in the unit's environment).
    private static func applyServerOverrides(
        _ server: inout ServerSettings, environment: [String: String],
        reader: inout ConfigurationReader
    ) {
        ServerSettings.section.applyOverrides(environment, into: &server, reader: &reader)
    }

    private static func checkAcrossApps(_ apps: [AppConfiguration], reader: inout ConfigurationReader) {
        var ids = Set<String>()
        var bundles = Set<String>()
        var keys = Set<[UInt8]>()
        for app in apps {
            if !ids.insert(app.id).inserted { reader.problem("apps", "duplicate app id \"\(app.id)\"") }
            if !bundles.insert(app.bundleId).inserted {
                reader.problem("apps", "two apps share bundle ID \"\(app.bundleId)\" (notifications are routed by it)")
            }
            for key in app.apiKeys where !keys.insert(key.sha256).inserted {
                reader.problem("apps", "an API key is listed twice (keys must identify one app and role)")
            }
        }
    }
}
