import Dispatch
import Foundation
import XCTest

/// Waits on the test's thread for a use case's completion (at most `timeout` seconds).
func waitForCompletion<T: Sendable>(timeout: Double = 30, _ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) throws -> T
{
    let box = CompletionBox<T>()
    start { box.set($0) }
    guard let result = box.wait(timeout: timeout) else {
        XCTFail("no completion within \(timeout) s")
        throw CompletionBox<T>.TimedOut()
    }
    return try result.get()
}

/// Polls `condition` every 50 ms until it holds; fails the test after `timeout` seconds.
func waitUntil(timeout: Double = 10, _ what: String, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else {
            XCTFail("not within \(timeout) s: \(what)")
            return
        }
        Thread.sleep(forTimeInterval: 0.05)
    }
}

private final class CompletionBox<T: Sendable>: @unchecked Sendable {
    struct TimedOut: Error {}
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        result = value
        done.signal()
    }

    /// The semaphore orders the write before this read.
    func wait(timeout: Double) -> Result<T, any Error>? {
        done.wait(timeout: .now() + timeout) == .success ? result : nil
    }
}
