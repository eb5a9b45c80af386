public import Foundation

/// Offerings (docs/OFFERINGS.md): what Entitle says a paywall sells this customer, and the
/// attributes the app sets on the customer for Entitle's targeting rules.
extension EntitleClient {
    /// The device as the targeting rules see it.
    public struct Device: Sendable, Equatable {
        /// `appStore` or `googlePlay`.
        public var store: String?
        /// The storefront's country (StoreKit's `Storefront.current?.countryCode`).
        public var country: String?
        public var platform: String?
        /// `CFBundleShortVersionString`.
        public var appVersion: String?

        public init(store: String? = "appStore", country: String? = nil, platform: String? = nil, appVersion: String? = nil) {
            self.store = store
            self.country = country
            self.platform = platform
            self.appVersion = appVersion
        }
    }

    /// The offering `placement` shows this customer, and why; nil offering: show no paywall. The
    /// answer is verified like every other. An offer listed in a package is one Entitle will sign
    /// for this customer: buy it with `purchase(_:offer:using:)`.
    public func offerings(placement: String, device: Device = Device()) async throws -> PlacementOffering {
        var query = [("placement", placement)]
        for (name, value) in [
            ("store", device.store), ("country", device.country), ("platform", device.platform), ("appVersion", device.appVersion),
        ] {
            if let value { query.append((name, value)) }
        }
        let body = try await call("GET", "/v1/subscribers/\(configuration.appAccountToken.uuidString.lowercased())/offerings", query: query)
        var answer = try JSONDecoder().decode(PlacementOffering.self, from: body)
        // The metadata is the app's own JSON: handed over as it came, for the app to decode.
        let tree = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        if let metadata = (tree?["offering"] as? [String: Any])?["metadata"] {
            answer.offering?.metadata = try JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys])
        }
        return answer
    }

    /// What the app did with a paywall (`POST …/paywall-events`).
    public enum PaywallEvent: String, Sendable {
        case shown
        case closed
        case purchaseStarted
    }

    /// Tells Entitle the paywall of `placement` was shown (or closed, or a purchase started from
    /// it) with `offering`: the first showing of the customer's variant enrolls them in its
    /// experiment (reading offerings enrolls nobody). Answers the experiment and variant the
    /// report counted for, when it did.
    @discardableResult
    public func paywallShown(
        placement: String, offering: String, event: PaywallEvent = .shown, device: Device = Device()
    ) async throws -> (experiment: String, variant: String)? {
        var body = ["placement": placement, "offering": offering, "type": event.rawValue]
        for (name, value) in [
            ("store", device.store), ("country", device.country), ("platform", device.platform), ("appVersion", device.appVersion),
        ] {
            if let value { body[name] = value }
        }
        let answer = try await call("POST", "/v1/subscribers/\(configuration.appAccountToken.uuidString.lowercased())/paywall-events", body)
        struct Report: Decodable {
            struct Counted: Decodable {
                var id: String
                var variant: String
            }
            var experiment: Counted?
        }
        return try JSONDecoder().decode(Report.self, from: answer).experiment.map { ($0.id, $0.variant) }
    }

    /// Sets attributes on the customer (nil removes one): what the targeting rules' `attributes`
    /// read. Answers the customer's attributes after.
    @discardableResult
    public func setAttributes(_ attributes: [String: String?]) async throws -> [String: String] {
        let body = try await call(
            "POST", "/v1/subscribers/\(configuration.appAccountToken.uuidString.lowercased())/attributes", ["attributes": attributes])
        struct Answer: Decodable { var attributes: [String: String] }
        return try JSONDecoder().decode(Answer.self, from: body).attributes
    }
}

/// What a placement shows the customer (`GET /v1/subscribers/{token}/offerings`).
public struct PlacementOffering: Sendable, Equatable, Decodable {
    public struct Reason: Sendable, Equatable, Decodable {
        /// `experiment`, `rule`, `shipped`, `default` or `none`.
        public var kind: String
        public var rule: String?
        public var experiment: String?
        public var variant: String?
    }

    public var placement: String
    /// Nil: the placement shows no paywall to this customer.
    public var offering: Offering?
    public var reason: Reason
}

/// An offering: its packages in the paywall's order, and the paywall's metadata (JSON text).
public struct Offering: Sendable, Equatable, Decodable {
    public struct Package: Sendable, Equatable, Decodable {
        public struct AppStore: Sendable, Equatable, Decodable {
            public var productId: String
            /// The catalog offer to buy with (`purchase(productId, offer: offerId)`), when the customer may have it.
            public var offerId: String?
            public var offerIdentifier: String?
        }

        public struct GooglePlay: Sendable, Equatable, Decodable {
            public var productId: String
            public var basePlanId: String
            public var offerId: String?
        }

        public var id: String
        public var appStore: AppStore?
        public var googlePlay: GooglePlay?
    }

    public var id: String
    public var packages: [Package]
    /// The offering's `metadata`, as JSON (sorted keys), for the app to decode as its paywall expects.
    public var metadata = Data("{}".utf8)

    enum CodingKeys: String, CodingKey { case id, packages }
}
