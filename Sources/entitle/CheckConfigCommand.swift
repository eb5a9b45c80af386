import AppStore
import Application

/// `entitle check-config`: validates the file and prints what it configures.
enum CheckConfigCommand {
    static let usage = "entitle check-config --config PATH"

    static func run(_ raw: [String]) throws -> Int32 {
        let configuration = try loadConfiguration(try Arguments(raw, valueOptions: ["config"]))
        Output.line("configuration OK: \(configuration.path)")
        Output.line("server: \(configuration.server.host):\(configuration.server.port)")
        Output.line("storage: SQLite \(configuration.storage.sqlitePath)")
        for app in configuration.apps {
            let key = app.signingKey
            Output.line("app \(app.id): bundle \(app.bundleId), environments \(app.environments.map(\.rawValue).joined(separator: ", "))")
            Output.line("  signing key \(key.keyId) (\(key.issuerId == nil ? "v1 signatures only, no issuerId" : "v1 and JWS"))")
            let clients = app.apiKeys.filter { $0.role == .client }.count
            Output.line("  API keys: \(clients) client, \(app.apiKeys.count - clients) server")
            Output.line("  products: \(app.products.keys.sorted().joined(separator: ", "))")
            let roots = app.verification.rootCertificates.map {
                AppleRootCertificates.appleRootName(of: $0) ?? "private root \($0.subject)"
            }
            if roots.isEmpty && app.environments.contains(where: \.isSigned) {
                Output.line(
                    "  verification: NO Apple root certificate configured: verification answers 503 "
                        + "(run entitle fetch-apple-roots, or set verification.rootCertificates)")
            } else {
                Output.line(
                    "  verification: roots \(roots.joined(separator: ", ")); online checks \(app.verification.onlineChecks ? "on" : "off")")
            }
            for (offerId, offer) in app.offers.sorted(by: { $0.key < $1.key }) {
                Output.line("  offer \(offerId): \(offer.offerIdentifier) of \(offer.productId), eligibility \(offer.eligibility.rawValue)")
            }
        }
        return 0
    }
}
