#if canImport(Glibc)
import Glibc
#endif

/// A failed system call, with `errno` captured at once.
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32
    public var description: String { "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// Runs a system call, retrying on EINTR, throwing with errno on any other failure.
@discardableResult
func retryingEINTR<T: FixedWidthInteger>(_ name: String, _ call: () -> T) throws(SystemCallError) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemCallError(call: name, errno: code)
    }
}

/// Monotonic clock in seconds (timeouts must not jump with the wall clock).
func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
