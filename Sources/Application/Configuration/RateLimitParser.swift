import JSON

/// `rateLimits` (top level): `{"client"|"server"|"admin"|"address"|"failedVerification": {"perSecond", "burst"}, "enabled"}`.
enum RateLimitParser {
    static func parse(_ object: JSONObject?, reader: inout ConfigurationReader) -> RateLimitSettings {
        var settings = RateLimitSettings()
        guard let object else { return settings }
        reader.checkMembers(object, allowed: ["client", "server", "admin", "address", "failedVerification", "enabled"], path: "rateLimits")
        settings.enabled = reader.bool(object, "enabled", path: "rateLimits") ?? true
        for (name, keyPath) in [
            ("client", \RateLimitSettings.client), ("server", \.server), ("admin", \.admin), ("address", \.address),
            ("failedVerification", \.failedVerification),
        ] {
            guard let limit = reader.object(object, name, path: "rateLimits") else { continue }
            let path = "rateLimits.\(name)"
            reader.checkMembers(limit, allowed: ["perSecond", "burst"], path: path)
            guard limit["perSecond"] != nil, limit["burst"] != nil else {
                reader.problem(path, "expected {\"perSecond\": a number above 0, \"burst\": at least 1}")
                continue
            }
            // Bounded so the bucket's token count always converts to a whole number (RateLimit headers).
            guard let rate = reader.number(limit, "perSecond", path: path, range: 0...RateLimit.maximum, above: true),
                let burst = reader.number(limit, "burst", path: path, range: 1...RateLimit.maximum)
            else { continue }
            settings[keyPath: keyPath] = RateLimit(perSecond: rate, burst: burst)
        }
        return settings
    }
}
