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
        ConsoleSettings.section.parse(object, folder: folder, into: &settings, reader: &reader)
        return settings
    }
}
