import Application
import Dispatch
import Foundation
import HTTPClient
import Instants
import JSON
import Synchronization

/// The test store of a test deployment, wired: it moves the server's clock (a `MovableClock`,
/// running at real speed until told otherwise), delivers its notifications to this server's own
/// routes over HTTP (notifications, and the cancel sheet's Retention Messaging request), and takes
/// what falls due as the clock runs, every second.
final class TestStoreComposition: Sendable {
    let service: TestStoreService
    private let address = ListeningAddress()
    /// Set up once in `init`, then only resumed and cancelled: never shared mutable state.
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    init(configuration: EntitleConfiguration, chain: TestStoreChain, clock: MovableClock, logger: Logger) {
        let http = HTTPClient()
        let address = self.address
        service = TestStoreService(
            apps: configuration.apps, chain: chain, clock: clock, newId: IdSource.random,
            deliver: { post in
                guard let url = address.url else { throw TestStoreNotListening() }
                var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
                if let authorization = post.authorization { headers.append(("Authorization", authorization)) }
                let response = try await http.send(
                    HTTPClientRequest(method: "POST", url: url + post.route.rawValue, headers: headers, body: post.body))
                return (response.status, response.body)
            })
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 1, repeating: 1)
        let service = self.service
        // One catch-up at a time: a tick while one runs (a fast clock, many steps) is skipped.
        let catchingUp = CatchingUp()
        timer.setEventHandler {
            guard !catchingUp.flag.exchange(true, ordering: .acquiringAndReleasing) else { return }
            Task {
                defer { catchingUp.flag.store(false, ordering: .releasing) }
                do { _ = try await service.catchUp() } catch {
                    logger.log("error", "the test store could not take what fell due", ["error": .string("\(error)")])
                }
            }
        }
    }

    deinit { timer.cancel() }

    /// Where the test store serves the App Store Server API, under the server's own address.
    static let appleAPIPath = "/v1/test-store/apple/api"

    /// The App Store Server API's base URL (known once the server listens; an unreachable one
    /// before, so an early call fails as a transport error and is retried).
    var appleAPIURL: String { (address.url ?? "http://127.0.0.1:0") + Self.appleAPIPath }

    /// Where the test store serves the Play Developer API and Google's OAuth token endpoint.
    static let googleAPIPath = "/v1/test-store/google/api"
    static let googleTokenPath = "/v1/test-store/google/token"

    var googleURLs: (api: String, token: String) {
        let base = address.url ?? "http://127.0.0.1:0"
        return (base + Self.googleAPIPath, base + Self.googleTokenPath)
    }

    /// Once the server listens: where its notification route is, and the clock's catching up.
    func start(host: String, port: Int) {
        address.set(host: host, port: port)
        timer.resume()
    }
}

/// Whether a catch-up runs.
private final class CatchingUp: Sendable {
    let flag = Atomic(false)
}

/// Where this server listens, once it does.
private final class ListeningAddress: Sendable {
    private let value = Mutex<String?>(nil)

    var url: String? { value.withLock { $0 } }

    func set(host: String, port: Int) {
        let reachable = ["0.0.0.0", "::", ""].contains(host) ? "127.0.0.1" : host
        value.withLock { $0 = "http://\(reachable.contains(":") ? "[\(reachable)]" : reachable):\(port)" }
    }
}

/// The test store tried to notify before the server listened.
struct TestStoreNotListening: Error, CustomStringConvertible {
    var description: String { "the server is not listening yet" }
}
