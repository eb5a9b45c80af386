import JSON

/// `rateLimits` (top level): `{"client"|"server"|"admin"|"address": {"perSecond", "burst"}, "enabled"}`.
enum RateLimitParser {
    static func parse(_ object: JSONObject?, reader: inout ConfigurationReader) -> RateLimitSettings {
        var settings = RateLimitSettings()
        guard let object else { return settings }
        reader.checkMembers(object, allowed: ["client", "server", "admin", "address", "enabled"], path: "rateLimits")
        settings.enabled = reader.bool(object, "enabled", path: "rateLimits") ?? true
        for (name, keyPath) in [
            ("client", \RateLimitSettings.client), ("server", \.server), ("admin", \.admin), ("address", \.address),
        ] {
            guard let limit = reader.object(object, name, path: "rateLimits") else { continue }
            let path = "rateLimits.\(name)"
            reader.checkMembers(limit, allowed: ["perSecond", "burst"], path: path)
            guard let rate = limit["perSecond"]?.doubleValue, rate > 0, let burst = limit["burst"]?.doubleValue, burst >= 1 else {
                reader.problem(path, "expected {\"perSecond\": a number above 0, \"burst\": at least 1}")
                continue
            }
            settings[keyPath: keyPath] = RateLimit(perSecond: rate, burst: burst)
        }
        return settings
    }
}
