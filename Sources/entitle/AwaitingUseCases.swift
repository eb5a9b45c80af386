import Dispatch

/// Runs an async use case to its end from a command: the main thread waits (it belongs to no
/// pool), the use case's own work runs where it belongs.
func awaitUseCase<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// Carries the result from the task to the waiting thread (the semaphore orders the accesses).
private final class ResultBox<T>: @unchecked Sendable { var result: Result<T, any Error>? }
