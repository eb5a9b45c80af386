import Application
import Dispatch
import Foundation
import Instants
import Server
import Storage

/// `--config PATH`, else `ENTITLE_CONFIG`: the configuration every command but keygen needs.
func loadConfiguration(_ arguments: Arguments) throws -> EntitleConfiguration {
    guard let path = arguments["config"] ?? ProcessInfo.processInfo.environment["ENTITLE_CONFIG"] else {
        throw UsageError("missing --config (or ENTITLE_CONFIG)")
    }
    return try ConfigurationLoader.load(path: path)
}

/// The application over the configuration's database, as the server builds it, and the app
/// named by `--app`: commands call the same use cases the HTTP endpoints call.
func loadServices(_ arguments: Arguments) throws -> (EntitleApplication, AppServices) {
    let configuration = try loadConfiguration(arguments)
    let application = try EntitleApplication(
        configuration: configuration,
        store: try configuration.storage.openStore(),
        pool: BlockingPool(threads: 2), clock: SystemClock(), machineClock: SystemClock(), newId: IdSource.random)
    return (application, try application.services(appId: try arguments.required("app")))
}

/// Waits on the command's main thread (never a Dispatch worker) for a use case's completion.
func awaitResult<T: Sendable>(_ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) throws -> T {
    let box = ResultBox<T>()
    start { box.set($0) }
    return try box.wait().get()
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        result = value
        done.signal()
    }

    /// The semaphore orders the write before this read.
    func wait() -> Result<T, any Error> {
        done.wait()
        return result!
    }
}
