#if canImport(Glibc)
import Glibc
#endif

/// A failed system call, with `errno` captured at once.
package struct SystemCallError: Error, CustomStringConvertible, Sendable {
    package let call: String
    package let errno: Int32
    package var description: String { "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
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

/// The address of a connected socket's peer as text (`127.0.0.1`, `::1`), "" when unknown.
func peerAddress(of fd: Int32) -> String {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let found = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
    }
    guard found == 0 else { return "" }
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    switch Int32(storage.ss_family) {
    case AF_INET:
        var address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr } }
        guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return "" }
    case AF_INET6:
        var address = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr } }
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return "" }
    default: return ""
    }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
