/// What Entitle knows of the customer and the request when it chooses an offering.
package struct TargetingContext: Sendable, Equatable {
    /// `appStore` or `googlePlay`: the store the app sells through on this device.
    package var store: String?
    /// The storefront's country, ISO 3166-1 alpha-2 or alpha-3 as the app gives it (upper case).
    package var country: String?
    /// `iOS`, `iPadOS`, `macOS`, `tvOS`, `visionOS`, `watchOS`, `android`, … as the app gives it.
    package var platform: String?
    package var appVersion: String?
    package var environment: String?
    package var state: CustomerLifecycle
    /// Whole days since Entitle first saw the customer (0: today, or never before).
    package var daysSinceFirstSeen: Int64
    package var attributes: [String: String]

    package init(
        store: String? = nil, country: String? = nil, platform: String? = nil, appVersion: String? = nil, environment: String? = nil,
        state: CustomerLifecycle = .neverSubscribed, daysSinceFirstSeen: Int64 = 0, attributes: [String: String] = [:]
    ) {
        self.store = store
        self.country = country
        self.platform = platform
        self.appVersion = appVersion
        self.environment = environment
        self.state = state
        self.daysSinceFirstSeen = daysSinceFirstSeen
        self.attributes = attributes
    }
}

/// A rule's `when`: every member given must hold (an empty condition matches everyone). A list
/// matches any of its values; a context without the value asked about does not match.
package struct TargetingCondition: Sendable, Equatable {
    package var stores: Set<String>?
    package var countries: Set<String>?
    package var platforms: Set<String>?
    package var environments: Set<String>?
    package var states: Set<CustomerLifecycle>?
    /// The app's version is at least this one / below this one (numeric parts, `2.10` > `2.9`).
    package var appVersionAtLeast: String?
    package var appVersionBelow: String?
    package var daysSinceFirstSeenAtLeast: Int64?
    package var daysSinceFirstSeenBelow: Int64?
    /// Each attribute named has one of the values listed.
    package var attributes: [String: Set<String>] = [:]

    package init() {}

    package func matches(_ context: TargetingContext) -> Bool {
        func within(_ allowed: Set<String>?, _ value: String?) -> Bool {
            guard let allowed else { return true }
            return value.map(allowed.contains) ?? false
        }
        guard within(stores, context.store), within(countries, context.country), within(platforms, context.platform),
            within(environments, context.environment), states.map({ $0.contains(context.state) }) ?? true
        else { return false }
        if let floor = appVersionAtLeast {
            guard let version = context.appVersion, AppVersion.compare(version, floor) != .orderedAscending else { return false }
        }
        if let ceiling = appVersionBelow {
            guard let version = context.appVersion, AppVersion.compare(version, ceiling) == .orderedAscending else { return false }
        }
        if let floor = daysSinceFirstSeenAtLeast, context.daysSinceFirstSeen < floor { return false }
        if let ceiling = daysSinceFirstSeenBelow, context.daysSinceFirstSeen >= ceiling { return false }
        return attributes.allSatisfy { name, values in context.attributes[name].map(values.contains) ?? false }
    }
}

/// App versions compared as Apple and Google number them: dot-separated parts, each compared as a
/// number when both are digits (`2.10` after `2.9`), missing parts as zero (`2` = `2.0`).
package enum AppVersion {
    package enum Order: Sendable { case orderedAscending, orderedSame, orderedDescending }

    package static func compare(_ left: String, _ right: String) -> Order {
        let a = left.split(separator: ".", omittingEmptySubsequences: false)
        let b = right.split(separator: ".", omittingEmptySubsequences: false)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : "0"
            let y = index < b.count ? b[index] : "0"
            if let m = UInt64(x), let n = UInt64(y) {
                if m != n { return m < n ? .orderedAscending : .orderedDescending }
            } else if x != y {
                return x < y ? .orderedAscending : .orderedDescending
            }
        }
        return .orderedSame
    }
}
