import AppStore
import Crypto
import Entitlements
import Foundation
import Instants
import JSON

/// Parses and checks one element of `apps`.
enum AppConfigurationParser {
    static let allowedMembers: Set<String> = [
        "id", "bundleId", "appAppleId", "environments", "signingKey", "apiKeys", "products", "offers",
        "verification", "appStoreServerAPI", "billingRetryGrantsAccess", "sandboxAccess", "sandboxTesters", "transferPolicy",
        "webhooks", "forwardNotifications", "googlePlay", "refunds", "retention", "offerings", "placements",
    ]

    static func parse(
        _ object: JSONObject, path: String, folder: String, environment: [String: String],
        reader: inout ConfigurationReader
    ) -> AppConfiguration? {
        reader.checkMembers(object, allowed: allowedMembers, path: path)
        let id = reader.string(object, "id", path: path, required: true)
        let envPrefix = "ENTITLE_APP_" + (id ?? "").uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined() + "_"
        let bundleId = reader.string(object, "bundleId", path: path, required: true)
        if let bundleId, !isValidBundleId(bundleId) {
            reader.problem("\(path).bundleId", "\"\(bundleId)\" is not a bundle ID (letters, digits, '-' and '.' between non-empty parts)")
        }
        var appAppleId: Int64?
        if let value = object["appAppleId"] {
            if case .int(let number) = value, number > 0 {
                appAppleId = number
            } else {
                reader.problem("\(path).appAppleId", "must be a positive integer (the app's Apple ID, not a string)")
            }
        }
        let environments = parseEnvironments(object, path: path, reader: &reader)
        if environments.contains(.production) && appAppleId == nil && object["appAppleId"] == nil {
            reader.problem(path, "\"appAppleId\" is required when Production is enabled")
        }
        let signingKey = parseSigningKey(
            reader.object(object, "signingKey", path: path, required: true),
            path: "\(path).signingKey", folder: folder, envPrefix: envPrefix,
            environment: environment, reader: &reader)
        var apiKeys = APIKeyParser.parse(
            reader.array(object, "apiKeys", path: path) ?? [], path: "\(path).apiKeys",
            reader: &reader)
        if let extra = environment[envPrefix + "API_KEYS"] {
            apiKeys += APIKeyParser.parseEnvironmentList(extra, name: envPrefix + "API_KEYS", reader: &reader)
        }
        let products = parseProducts(
            reader.object(object, "products", path: path), path: "\(path).products",
            reader: &reader)
        let offers = parseOffers(
            reader.object(object, "offers", path: path), products: products,
            path: "\(path).offers", reader: &reader)
        let verification = VerificationSettingsParser.parse(
            reader.object(object, "verification", path: path),
            path: "\(path).verification", folder: folder, reader: &reader)
        var renamed: [(old: String, new: String)] = []
        let serverAPI = parseServerAPI(
            reader.object(object, "appStoreServerAPI", path: path), path: "\(path).appStoreServerAPI",
            folder: folder, renamed: &renamed, reader: &reader)
        let billingRetryGrantsAccess = reader.bool(object, "billingRetryGrantsAccess", path: path) ?? false
        let sandboxAccess = parseSandboxAccess(object, path: path, reader: &reader)
        guard let id, let bundleId, let signingKey else { return nil }
        var app = AppConfiguration(
            id: id, bundleId: bundleId, appAppleId: appAppleId, environments: environments,
            signingKey: signingKey, apiKeys: apiKeys, products: products, offers: offers,
            billingRetryGrantsAccess: billingRetryGrantsAccess, verification: verification,
            serverAPI: serverAPI)
        app.renamedMembers = renamed
        app.sandboxAccess = sandboxAccess
        app.webhooks = WebhookConfigurationParser.parseWebhooks(
            reader.array(object, "webhooks", path: path) ?? [], path: "\(path).webhooks", reader: &reader)
        app.forwardNotifications = WebhookConfigurationParser.parseForwarding(
            reader.object(object, "forwardNotifications", path: path), path: "\(path).forwardNotifications", reader: &reader)
        app.googlePlay = GooglePlayConfigurationParser.parse(
            reader.object(object, "googlePlay", path: path), path: "\(path).googlePlay", folder: folder, reader: &reader)
        app.retention = RetentionPolicyParser.parse(
            reader.object(object, "retention", path: path), products: app.products, offers: app.offers, appAppleId: app.appAppleId,
            path: "\(path).retention", reader: &reader)
        app.offerings = OfferingsParser.parseOfferings(
            reader.object(object, "offerings", path: path), products: app.products, offers: app.offers, path: "\(path).offerings",
            reader: &reader)
        app.placements = OfferingsParser.parsePlacements(
            reader.object(object, "placements", path: path), offerings: app.offerings, path: "\(path).placements", reader: &reader)
        let refunds = RefundPolicyParser.parse(reader.object(object, "refunds", path: path), path: "\(path).refunds", reader: &reader)
        app.refunds = refunds.policy
        if let seconds = refunds.retrySeconds { app.refundRetrySeconds = seconds }
        if let name = reader.string(object, "transferPolicy", path: path) {
            if let policy = TransferPolicy(rawValue: name) {
                app.transferPolicy = policy
            } else {
                reader.problem("\(path).transferPolicy", "unknown policy \"\(name)\" (refuse, transfer)")
            }
        }
        return app
    }

    /// `sandboxAccess`: `all` (default), `listed` (the appAccountTokens in `sandboxTesters`), `none`.
    private static func parseSandboxAccess(_ object: JSONObject, path: String, reader: inout ConfigurationReader) -> SandboxAccess {
        let testers = reader.stringArray(object, "sandboxTesters", path: path)
        for token in testers ?? [] where !UUID.isCanonicalText(token) {
            reader.problem("\(path).sandboxTesters", "\"\(token)\" is not an appAccountToken (a UUID)")
        }
        switch reader.string(object, "sandboxAccess", path: path) ?? "all" {
        case "all", "none":
            if testers != nil { reader.problem("\(path).sandboxTesters", "is used only with \"sandboxAccess\": \"listed\"") }
            return object["sandboxAccess"]?.stringValue == "none" ? .none : .all
        case "listed":
            return .listed(Set((testers ?? []).map { $0.lowercased() }))
        case let other:
            reader.problem("\(path).sandboxAccess", "unknown policy \"\(other)\" (all, listed, none)")
            return .all
        }
    }

    static func isValidBundleId(_ value: String) -> Bool {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty
                && part.unicodeScalars.allSatisfy {
                    $0.isASCII
                        && ($0.properties.isAlphabetic
                            || ("0"..."9").contains($0) || $0 == "-")
                }
        }
    }

    private static func parseEnvironments(
        _ object: JSONObject, path: String,
        reader: inout ConfigurationReader
    ) -> [AppStoreEnvironment] {
        guard let names = reader.stringArray(object, "environments", path: path) else {
            return object["environments"] == nil ? [.production, .sandbox] : []
        }
        if names.isEmpty { reader.problem("\(path).environments", "enable at least one environment") }
        var environments: [AppStoreEnvironment] = []
        for name in names {
            let environment = AppStoreEnvironment(rawValue: name)
            if !AppStoreEnvironment.all.contains(environment) {
                reader.problem("\(path).environments", "unknown environment \"\(name)\" (Production, Sandbox, Xcode, LocalTesting)")
            } else if environments.contains(environment) {
                reader.problem("\(path).environments", "\(name) is listed twice")
            } else {
                environments.append(environment)
            }
        }
        return environments
    }

    private static func parseSigningKey(
        _ object: JSONObject?, path: String, folder: String, envPrefix: String,
        environment: [String: String],
        reader: inout ConfigurationReader
    ) -> SigningKeyConfiguration? {
        guard let object else { return nil }
        reader.checkMembers(object, allowed: ["keyId", "issuerId", "privateKeyFile"], path: path)
        let keyId = reader.string(object, "keyId", path: path, required: true)
        if let keyId, !keyId.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }) {
            reader.problem("\(path).keyId", "must be the key ID shown in App Store Connect (letters and digits)")
        }
        var issuerId = reader.string(object, "issuerId", path: path)
        if let override = environment[envPrefix + "ISSUER_ID"], !override.isEmpty { issuerId = override }
        if let issuerId, UUID(uuidString: issuerId) == nil {
            reader.problem("\(path).issuerId", "must be the issuer ID from App Store Connect (a UUID)")
        }
        let variable = envPrefix + "PRIVATE_KEY_FILE"
        var file = reader.string(object, "privateKeyFile", path: path, required: environment[variable] == nil)
        // A problem with the file is said against where its name came from: the variable, if set.
        var problemPath = "\(path).privateKeyFile"
        if let override = environment[variable], !override.isEmpty {
            file = override
            problemPath = variable
        }
        guard let keyId, let file else { return nil }
        let keyPath = ConfigurationLoader.resolve(file, in: folder)
        guard let key = loadPrivateKey(keyPath, problemPath: problemPath, reader: &reader) else { return nil }
        return SigningKeyConfiguration(keyId: keyId, issuerId: issuerId, privateKeyFile: keyPath, privateKey: key)
    }

    /// Loads the `.p8`. Messages name the file and the kind of problem, never the key's bytes.
    static func loadPrivateKey(
        _ keyPath: String, problemPath: String,
        reader: inout ConfigurationReader
    ) -> P256.Signing.PrivateKey? {
        guard let data = FileManager.default.contents(atPath: keyPath) else {
            let reason = FileManager.default.fileExists(atPath: keyPath) ? "cannot be read" : "no such file"
            reader.problem(problemPath, "\(keyPath): \(reason)")
            return nil
        }
        guard let pem = String(validating: [UInt8](data), as: UTF8.self) else {
            reader.problem(problemPath, "\(keyPath) is not a PEM file (expected a PKCS#8 .p8 key)")
            return nil
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch let error {
            switch error {
            case .unsupportedKey(let what):
                reader.problem(problemPath, "\(keyPath) holds an \(what), expected an EC P-256 key (App Store Connect In-App Purchase key)")
            default:
                reader.problem(problemPath, "\(keyPath) is not a readable PEM private key (expected PKCS#8 .p8)")
            }
            return nil
        }
    }

    private static func parseProducts(
        _ object: JSONObject?, path: String,
        reader: inout ConfigurationReader
    ) -> [String: CatalogProduct] {
        guard let object else { return [:] }
        for key in object.duplicateKeys { reader.problem(path, "duplicate product ID \"\(key)\"") }
        var products: [String: CatalogProduct] = [:]
        for (productId, value) in object.members where products[productId] == nil {
            let productPath = "\(path).\(productId)"
            guard let product = value.objectValue else {
                reader.problem(productPath, "expected an object, found \(value.typeName)")
                continue
            }
            reader.checkMembers(
                product, allowed: ["subscriptionGroup", "entitlements", "duration", "googlePlay", "sampleContentProvided", "period"],
                path: productPath)
            let group = reader.string(product, "subscriptionGroup", path: productPath)
            let entitlements = reader.stringArray(product, "entitlements", path: productPath) ?? []
            var duration: ISO8601Duration?
            if let text = reader.string(product, "duration", path: productPath) {
                duration = ISO8601Duration(text)
                if duration == nil { reader.problem("\(productPath).duration", "\"\(text)\" is not an ISO 8601 duration such as P1M") }
            }
            var catalogProduct = CatalogProduct(subscriptionGroup: group, entitlements: entitlements, duration: duration)
            catalogProduct.sampleContentProvided = reader.bool(product, "sampleContentProvided", path: productPath) ?? false
            if let period = reader.string(product, "period", path: productPath) {
                if MetricPeriod.scale(of: period) == nil {
                    reader.problem("\(productPath).period", "\"\(period)\" is not one of P1W, P1M, P2M, P3M, P6M, P1Y")
                } else {
                    catalogProduct.period = period
                }
            }
            catalogProduct.googlePlay = GooglePlayConfigurationParser.parseProduct(
                reader.object(product, "googlePlay", path: productPath), path: "\(productPath).googlePlay", reader: &reader)
            products[productId] = catalogProduct
        }
        return products
    }

    private static func parseOffers(
        _ object: JSONObject?, products: [String: CatalogProduct], path: String,
        reader: inout ConfigurationReader
    ) -> [String: OfferConfiguration] {
        guard let object else { return [:] }
        for key in object.duplicateKeys { reader.problem(path, "duplicate offer ID \"\(key)\"") }
        var offers: [String: OfferConfiguration] = [:]
        var identifiers = Set<String>()
        for (offerId, value) in object.members where offers[offerId] == nil {
            let offerPath = "\(path).\(offerId)"
            guard let offer = value.objectValue else {
                reader.problem(offerPath, "expected an object, found \(value.typeName)")
                continue
            }
            reader.checkMembers(offer, allowed: ["productId", "offerIdentifier", "eligibility", "googlePlay"], path: offerPath)
            let productId = reader.string(offer, "productId", path: offerPath, required: true)
            let identifier = reader.string(offer, "offerIdentifier", path: offerPath, required: true)
            var rule = OfferEligibility.PromotionalRule.any
            if let name = reader.string(offer, "eligibility", path: offerPath) {
                if let parsed = OfferEligibility.PromotionalRule(rawValue: name) {
                    rule = parsed
                } else {
                    reader.problem(
                        "\(offerPath).eligibility",
                        "unknown rule \"\(name)\" (\(OfferEligibility.PromotionalRule.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
            }
            if let productId, products[productId] == nil {
                reader.problem("\(offerPath).productId", "product \"\(productId)\" is not configured in \"products\"")
            }
            guard let productId, let identifier else { continue }
            if !identifiers.insert("\(productId)/\(identifier)").inserted {
                reader.problem(offerPath, "duplicate offer: \"\(identifier)\" of \"\(productId)\" is already in the catalog")
            }
            var configured = OfferConfiguration(productId: productId, offerIdentifier: identifier, eligibility: rule)
            configured.googlePlay = GooglePlayConfigurationParser.parseOffer(
                reader.object(offer, "googlePlay", path: offerPath), path: "\(offerPath).googlePlay", reader: &reader)
            offers[offerId] = configured
        }
        return offers
    }

    private static func parseServerAPI(
        _ object: JSONObject?, path: String, folder: String, renamed: inout [(old: String, new: String)],
        reader: inout ConfigurationReader
    ) -> ServerAPISettings {
        var settings = ServerAPISettings()
        guard let object else { return settings }
        reader.checkMembers(
            object,
            allowed: [
                "productionURL", "sandboxURL", "caFile", "setAppAccountToken", "finishTransactions", "callRetrySeconds",
                "tokenRetrySeconds",
            ],
            path: path)
        settings.setAppAccountToken = reader.bool(object, "setAppAccountToken", path: path) ?? false
        settings.finishTransactions = reader.bool(object, "finishTransactions", path: path) ?? false
        // `tokenRetrySeconds` timed Set App Account Token alone; it times every call to Apple now,
        // so it is `callRetrySeconds`. The old name is still read, and warned about.
        if object["tokenRetrySeconds"] != nil {
            if object["callRetrySeconds"] != nil {
                reader.problem("\(path).tokenRetrySeconds", "give callRetrySeconds alone (tokenRetrySeconds is its old name)")
            } else {
                renamed.append(("\(path).tokenRetrySeconds", "\(path).callRetrySeconds"))
            }
        }
        for key in ["callRetrySeconds", "tokenRetrySeconds"] {
            if let seconds = reader.seconds(object, key, path: path, maximum: 86_400) { settings.callRetrySeconds = seconds }
        }
        for (key, keyPath) in [("productionURL", \ServerAPISettings.productionURL), ("sandboxURL", \.sandboxURL)] {
            guard let url = reader.string(object, key, path: path) else { continue }
            if URL(string: url)?.scheme == nil { reader.problem("\(path).\(key)", "\"\(url)\" is not a URL") }
            settings[keyPath: keyPath] = url
        }
        settings.caFile = reader.string(object, "caFile", path: path).map { ConfigurationLoader.resolve($0, in: folder) }
        return settings
    }
}
