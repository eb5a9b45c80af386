import Foundation
import JSON

/// `"console"`: the support console at `/console`.
package struct ConsoleSettings: Sendable {
    /// Off: `/console` answers 404 (the admin API stays, for curl).
    package var enabled = true
    /// How long a sign-in lasts.
    package var sessionHours = 8
    /// The key session cookies are signed with, from `sessionSecretFile`. Instances behind one
    /// load balancer need the same one; without it each process draws its own at start-up (a
    /// restart then signs everyone out).
    package var sessionSecret: [UInt8]?
    /// Mark the cookie `Secure` always; otherwise only when the request came over TLS through a
    /// proxy (`X-Forwarded-Proto: https`).
    package var secureCookies = false

    package init() {}
}

enum ConsoleSettingsParser {
    static func parse(_ object: JSONObject?, folder: String, reader: inout ConfigurationReader) -> ConsoleSettings {
        var settings = ConsoleSettings()
        guard let object else { return settings }
        reader.checkMembers(object, allowed: ["enabled", "sessionHours", "sessionSecretFile", "secureCookies"], path: "console")
        if let enabled = reader.bool(object, "enabled", path: "console") { settings.enabled = enabled }
        if let hours = reader.integer(object, "sessionHours", path: "console", range: 1...720) { settings.sessionHours = Int(hours) }
        if let secure = reader.bool(object, "secureCookies", path: "console") { settings.secureCookies = secure }
        if let file = reader.string(object, "sessionSecretFile", path: "console") {
            let path = ConfigurationLoader.resolve(file, in: folder)
            if let data = FileManager.default.contents(atPath: path) {
                let secret = Array(data)
                if secret.count >= 32 {
                    settings.sessionSecret = secret
                } else {
                    reader.problem("console.sessionSecretFile", "\(path) must hold at least 32 bytes (openssl rand -out FILE 32)")
                }
            } else {
                reader.problem("console.sessionSecretFile", "cannot read \(path)")
            }
        }
        return settings
    }
}
