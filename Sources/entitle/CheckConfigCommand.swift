import AppStore
import Application
import Crypto
import Entitlements
import GooglePlay
import Server

/// `entitle check-config`: validates the file and prints what it configures.
enum CheckConfigCommand {
    static let usage = "entitle check-config --config PATH"

    static func run(_ raw: [String]) throws -> Int32 {
        let configuration = try loadConfiguration(try Arguments(raw, valueOptions: ["config"]))
        // What `serve` would hit first: a database it cannot reach is an error here, not a
        // restart loop after ExecStartPre said OK.
        try configuration.storage.checkReachable()
        Output.line("configuration OK: \(configuration.path)")
        for warning in configuration.warnings { Output.line("warning: \(warning)") }
        for app in configuration.apps {
            let unapproved = RetentionMessageListing.unapproved(app, configuration: configuration.path)
            if !unapproved.isEmpty {
                Output.line(
                    "warning: app \(app.id): retention rules answer with messages Apple has not approved "
                        + "(as last listed by entitle retention messages list): \(unapproved.joined(separator: ", "))")
            }
        }
        Output.line("server: \(configuration.server.host):\(configuration.server.port)")
        Output.line("storage: \(configuration.storage.summary)")
        let console = configuration.console
        Output.line(
            !console.enabled
                ? "console: off"
                : "console: /console, sessions of \(console.sessionHours) h signed with "
                    + (console.sessionSecret == nil
                        ? "a key drawn at start-up (set console.sessionSecretFile when several instances serve it)"
                        : "console.sessionSecretFile"))
        for app in configuration.apps {
            let key = app.signingKey
            Output.line("app \(app.id): bundle \(app.bundleId), environments \(app.environments.map(\.rawValue).joined(separator: ", "))")
            Output.line("  signing key \(key.keyId) (\(key.issuerId == nil ? "v1 signatures only, no issuerId" : "v1 and JWS"))")
            let counts = APIKeyRole.allCases.map { role in "\(app.apiKeys.filter { $0.role == role }.count) \(role.rawValue)" }
            Output.line("  API keys: \(counts.joined(separator: ", "))")
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
            if let play = app.googlePlay {
                let mapped = app.products.filter { $0.value.googlePlay != nil }.count
                Output.line(
                    "  google play: \(play.packageName), service account \(play.serviceAccount.clientEmail), "
                        + "push audience \(play.pushAudience), \(mapped) products mapped")
            }
            for (offerId, offer) in app.offers.sorted(by: { $0.key < $1.key }) {
                Output.line("  offer \(offerId): \(offer.offerIdentifier) of \(offer.productId), eligibility \(offer.eligibility.rawValue)")
            }
            // Endpoints by label only: a URL's query or user info may carry credentials, and the
            // secret is never shown.
            for endpoint in app.webhooks {
                let environments = endpoint.environments.map { $0.map(\.rawValue).sorted().joined(separator: ", ") } ?? "all environments"
                let events = endpoint.events.map { $0.sorted().joined(separator: ", ") } ?? "all events"
                Output.line("  webhook \(endpoint.label): \(environments); \(events); secret set")
            }
            for (environment, url) in app.forwardNotifications.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                Output.line("  forwards \(environment.rawValue) notifications to \(WebhookEndpoint.label(of: url))")
            }
        }
        if configuration.apps.contains(where: { !$0.webhooks.isEmpty || !$0.forwardNotifications.isEmpty }) {
            let delivery = configuration.delivery
            Output.line(
                "delivery: timeout \(delivery.timeoutSeconds) s, retries from \(delivery.firstRetrySeconds) s up to "
                    + "\(delivery.maxRetrySeconds) s for \(delivery.retryWindowSeconds) s, \(delivery.concurrencyPerEndpoint) per endpoint"
                    + (delivery.caFile.map { ", CA \($0)" } ?? ""))
        }
        return 0
    }
}
