import Dispatch
import XCTest

/// `XCTAssertThrowsError` for an async expression: fails when `expression` returns, else hands
/// the error to `check`.
package func assertThrowsAsync<T>(
    _ expression: () async throws -> T, file: StaticString = #filePath, line: UInt = #line, _ check: (any Error) -> Void = { _ in }
) async {
    do {
        _ = try await expression()
        XCTFail("expected an error", file: file, line: line)
    } catch {
        check(error)
    }
}

/// Runs an async call to its end from a synchronous test (the test's thread waits; the call runs
/// on Swift's pool).
package func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let result = LockedList<Result<T, any Error>>()
    Task {
        do { result.append(.success(try await body())) } catch { result.append(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try result.all[0].get()
}
