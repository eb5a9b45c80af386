import Entitlements
import Foundation
package import GooglePlay
import JSON

/// `apps[].googlePlay`: the app's Android side.
package struct GooglePlaySettings: Sendable {
    package var packageName: String
    /// The service account Entitle calls the Google Play Developer API as (read at start-up).
    package var serviceAccount: ServiceAccountKey
    /// What a Pub/Sub push's OIDC token must say: its `aud`, and the push subscription's service
    /// account (`email`).
    package var pushAudience: String
    package var pushServiceAccountEmail: String
    /// Google's signing keys for those tokens: a JWK set file, or its URL.
    package var jwks: GoogleJWKS.Source
    package var apiURL: String?
    package var tokenURL: String?
    /// A private CA to trust (local stand-ins); Google's hosts use the system's.
    package var caFile: String?
    /// How long a failed acknowledgement waits before its first retry (doubling up to an hour);
    /// also how often the queue is looked at.
    package var acknowledgementRetrySeconds: Double = 60
}

/// A catalog offer on Google Play: the base plan and offer it is there.
package struct GooglePlayOffer: Sendable, Equatable {
    package var basePlanId: String
    package var offerId: String
}

enum GooglePlayConfigurationParser {
    static func parse(_ object: JSONObject?, path: String, folder: String, reader: inout ConfigurationReader) -> GooglePlaySettings? {
        guard let object else { return nil }
        reader.checkMembers(
            object,
            allowed: [
                "packageName", "serviceAccountKeyFile", "pubsub", "jwks", "apiURL", "tokenURL", "caFile", "acknowledgementRetrySeconds",
            ], path: path)
        let packageName = reader.string(object, "packageName", path: path, required: true)
        if let packageName, !isPackageName(packageName) {
            reader.problem("\(path).packageName", "\"\(packageName)\" is not an Android package name (e.g. com.example.app)")
        }
        var account: ServiceAccountKey?
        if let file = reader.string(object, "serviceAccountKeyFile", path: path, required: true) {
            let resolved = ConfigurationLoader.resolve(file, in: folder)
            do { account = try ServiceAccountKey(contentsOf: resolved) } catch {
                reader.problem("\(path).serviceAccountKeyFile", "\(resolved): \(error)")
            }
        }
        let pubsub = reader.object(object, "pubsub", path: path, required: true)
        if let pubsub { reader.checkMembers(pubsub, allowed: ["audience", "serviceAccountEmail"], path: "\(path).pubsub") }
        let audience = pubsub.flatMap { reader.string($0, "audience", path: "\(path).pubsub", required: true) }
        let email = pubsub.flatMap { reader.string($0, "serviceAccountEmail", path: "\(path).pubsub", required: true) }
        var jwks: GoogleJWKS.Source?
        if let source = reader.string(object, "jwks", path: path, required: true) {
            if source.hasPrefix("https://") || source.hasPrefix("http://127.0.0.1") || source.hasPrefix("http://localhost") {
                jwks = .url(source)
            } else {
                let resolved = ConfigurationLoader.resolve(source, in: folder)
                if (try? GoogleJWKS(source: .file(resolved), http: nil).read())?.isEmpty ?? true {
                    reader.problem("\(path).jwks", "\(resolved) is not a readable JWK set with RSA keys (or give an https URL)")
                }
                jwks = .file(resolved)
            }
        }
        var urls: [String: String] = [:]
        for key in ["apiURL", "tokenURL"] {
            guard let url = reader.string(object, key, path: path) else { continue }
            if URL(string: url)?.scheme == nil { reader.problem("\(path).\(key)", "\"\(url)\" is not a URL") }
            urls[key] = url
        }
        let caFile = reader.string(object, "caFile", path: path).map { ConfigurationLoader.resolve($0, in: folder) }
        let retrySeconds = reader.seconds(object, "acknowledgementRetrySeconds", path: path, maximum: 3600)
        guard let packageName, let account, let audience, let email, let jwks else { return nil }
        var settings = GooglePlaySettings(
            packageName: packageName, serviceAccount: account, pushAudience: audience, pushServiceAccountEmail: email, jwks: jwks,
            apiURL: urls["apiURL"], tokenURL: urls["tokenURL"], caFile: caFile)
        if let retrySeconds { settings.acknowledgementRetrySeconds = retrySeconds }
        return settings
    }

    /// `"googlePlay": {"productId", "basePlanId"?}` of a product.
    static func parseProduct(_ object: JSONObject?, path: String, reader: inout ConfigurationReader) -> GooglePlayProduct? {
        guard let object else { return nil }
        reader.checkMembers(object, allowed: ["productId", "basePlanId"], path: path)
        guard let productId = reader.string(object, "productId", path: path, required: true) else { return nil }
        return GooglePlayProduct(productId: productId, basePlanId: reader.string(object, "basePlanId", path: path))
    }

    /// `"googlePlay": {"basePlanId", "offerId"}` of an offer.
    static func parseOffer(_ object: JSONObject?, path: String, reader: inout ConfigurationReader) -> GooglePlayOffer? {
        guard let object else { return nil }
        reader.checkMembers(object, allowed: ["basePlanId", "offerId"], path: path)
        guard let plan = reader.string(object, "basePlanId", path: path, required: true),
            let offer = reader.string(object, "offerId", path: path, required: true)
        else { return nil }
        return GooglePlayOffer(basePlanId: plan, offerId: offer)
    }

    /// Java-style: two or more parts of letters, digits and `_`, each starting with a letter.
    static func isPackageName(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2
            && parts.allSatisfy { part in
                guard let first = part.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
                return part.unicodeScalars.allSatisfy {
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
                }
            }
    }
}
