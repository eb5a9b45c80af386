package import AppStore
package import AppStoreAPI
package import HTTPClient

/// The App Store Server API of one app, one port per environment it serves.
package typealias AppStoreClients = [AppStoreEnvironment: any AppStoreServerAPI]

/// How the composition root gets each app's outbound clients: the real ones (`.live`), or what a
/// test or the test store gives instead. No use case builds a client itself. Each is given where
/// its blocking transfers run (the server's outbound pool).
package struct OutboundClients: Sendable {
    /// The app's App Store Server API clients; nil when the app cannot call the API.
    package var appStore: @Sendable (AppConfiguration, _ runTransfer: @escaping TransferRunner) throws -> AppStoreClients?
    /// The app's Google Play connection (the Developer API port and the push check's client).
    package var googlePlay: @Sendable (GooglePlaySettings, _ runTransfer: @escaping TransferRunner) -> GooglePlayService.Connection

    package init(
        appStore: @escaping @Sendable (AppConfiguration, _ runTransfer: @escaping TransferRunner) throws -> AppStoreClients?,
        googlePlay: @escaping @Sendable (GooglePlaySettings, _ runTransfer: @escaping TransferRunner) -> GooglePlayService.Connection =
            GooglePlayService.Connection.live
    ) {
        self.appStore = appStore
        self.googlePlay = googlePlay
    }

    /// Apple's API over HTTPS: one client per enabled environment it serves (Production,
    /// Sandbox), with the app's key and issuer ID; none when the app has no issuer ID (the API
    /// needs one).
    package static let live = OutboundClients(appStore: { app, runTransfer in try liveAppStore(app, runTransfer: runTransfer) })

    /// The same, but an app that names no `sandboxURL` calls the test store's App Store Server
    /// API (`testStoreAPI`, read once the server listens), and an app whose `googlePlay` names
    /// no `apiURL` calls the test store's Play Developer API and token endpoint (`testStoreGoogle`:
    /// their two URLs): in a test deployment Apple's Sandbox and Google know nothing of what the
    /// test store sold.
    package static func sandboxCallingTheTestStore(
        at testStoreAPI: @escaping @Sendable () -> String,
        google testStoreGoogle: @escaping @Sendable () -> (api: String, token: String)
    ) -> OutboundClients {
        OutboundClients(
            appStore: { app, runTransfer in try liveAppStore(app, runTransfer: runTransfer, testStoreAPI: testStoreAPI) },
            googlePlay: { settings, runTransfer in
                guard settings.apiURL == nil, settings.tokenURL == nil else { return .live(settings, runTransfer: runTransfer) }
                return .calling(settings, at: testStoreGoogle, runTransfer: runTransfer)
            })
    }

    private static func liveAppStore(
        _ app: AppConfiguration, runTransfer: @escaping TransferRunner, testStoreAPI: (@Sendable () -> String)? = nil
    ) throws -> AppStoreClients? {
        guard let issuerId = app.signingKey.issuerId else { return nil }
        let tokens = BearerTokenFactory(
            privateKey: app.signingKey.privateKey, keyId: app.signingKey.keyId, issuerId: issuerId, bundleId: app.bundleId)
        var clients: AppStoreClients = [:]
        for environment in app.environments where environment.hasServerAPI {
            let url = environment == .production ? app.serverAPI.productionURL : app.serverAPI.sandboxURL
            if url == nil, environment == .sandbox, let testStoreAPI {
                clients[environment] = try AppStoreServerAPIClient(
                    environment: environment.rawValue, tokens: tokens, locatedBy: testStoreAPI, runTransfer: runTransfer)
                continue
            }
            clients[environment] = try AppStoreServerAPIClient(
                environment: environment.rawValue, tokens: tokens, baseURL: url, caFile: app.serverAPI.caFile,
                runTransfer: runTransfer)
        }
        return clients
    }
}
