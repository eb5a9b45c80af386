import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Counters the server keeps for `/metrics`.
package final class HTTPServerStatistics: Sendable {
    let openConnections = Atomic<Int>(0)
    let acceptedConnections = Atomic<Int>(0)
    let refusedConnections = Atomic<Int>(0)
    let timedOutConnections = Atomic<Int>(0)

    package var open: Int { openConnections.load(ordering: .relaxed) }
    package var accepted: Int { acceptedConnections.load(ordering: .relaxed) }
    /// Connections turned away because `maxConnections` were open.
    package var refused: Int { refusedConnections.load(ordering: .relaxed) }
    /// Connections closed because a header, body or idle timeout expired.
    package var timedOut: Int { timedOutConnections.load(ordering: .relaxed) }
}

/// An event-driven HTTP/1.1 server: one epoll event loop per thread, each with its own listening
/// socket on the same port (`SO_REUSEPORT`, so the kernel spreads connections), no thread per
/// connection. Handlers run on the loop; work that waits must answer from elsewhere.
package final class HTTPServer: Sendable {
    package let configuration: HTTPServerConfiguration
    package let statistics = HTTPServerStatistics()
    /// The bound port (the chosen one when the configuration said 0).
    package let port: Int
    /// What start-up adjusted and the operator should know (e.g. `maxConnections` clamped to the
    /// descriptor limit); the composition layer logs them.
    package let warnings: [String]
    private let loops: [EventLoop]
    private let stopped = Mutex<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds the listening sockets; `start()` begins serving.
    package init(
        configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler,
        observer: (any HTTPServerObserver)? = nil
    ) throws {
        // A peer that resets a connection must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        var configuration = configuration
        var warnings: [String] = []
        let descriptors = DescriptorLimit.raisedToHardLimit()
        if configuration.maxConnections > descriptors.forConnections {
            warnings.append(
                "maxConnections \(configuration.maxConnections) exceeds what the descriptor limit "
                    + "(RLIMIT_NOFILE \(descriptors.limit)) leaves; using \(descriptors.forConnections)")
            configuration.maxConnections = max(1, descriptors.forConnections)
        }
        self.configuration = configuration
        self.warnings = warnings
        let count = configuration.eventLoops > 0 ? configuration.eventLoops : max(1, ProcessInfo.processInfo.activeProcessorCount)
        var loops: [EventLoop] = []
        // The loops share the port through SO_REUSEPORT, which would also let a second process
        // (another `entitle serve`, a stale copy) join it silently. Binding once without the
        // option first fails with "address in use" when anyone already serves the port.
        var port = try Listener.claim(host: configuration.host, port: configuration.port)
        for index in 0..<count {
            let listener = try Listener.bind(host: configuration.host, port: port)
            port = listener.port
            loops.append(
                try EventLoop(
                    index: index, listenFD: listener.fd, configuration: configuration,
                    handler: handler, observer: observer, statistics: statistics))
        }
        self.port = port
        self.loops = loops
    }

    /// Starts every event-loop thread and returns.
    package func start() {
        let group = DispatchGroup()
        for loop in loops {
            group.enter()
            let thread = Thread {
                loop.run()
                group.leave()
            }
            thread.name = "entitle-loop-\(loop.index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.notify(queue: .global()) { [finished] in finished.signal() }
    }

    /// Graceful shutdown: stop accepting, let in-flight requests finish within the grace period,
    /// close everything. Returns at once; `waitUntilStopped()` blocks until done.
    package func shutdown() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        let deadline = monotonicSeconds() + configuration.shutdownGrace
        for loop in loops { loop.beginShutdown(deadline: deadline) }
    }

    package func waitUntilStopped() {
        finished.wait()
        finished.signal()
    }
}

/// How many descriptors the process may open, and how many of those connections may use.
struct DescriptorLimit {
    let limit: Int
    /// The limit less what the rest of the process needs: listeners, epoll and wake descriptors,
    /// the database and its WAL, logs, outbound HTTP, files read at start-up.
    var forConnections: Int { limit - 64 }

    /// Raises the soft limit to the hard one (as Go and nginx do), then reports it.
    static func raisedToHardLimit() -> DescriptorLimit {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return DescriptorLimit(limit: 1024) }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limits = raised }
        }
        return DescriptorLimit(limit: Int(min(limits.rlim_cur, rlim_t(Int32.max))))
    }
}

/// A listening TCP socket.
struct Listener {
    let fd: Int32
    let port: Int

    /// Binds without `SO_REUSEPORT` to learn whether the port is free (and which port
    /// 0 picks), then releases it for the loops' shared sockets.
    static func claim(host: String, port: Int) throws -> Int {
        let probe = try bind(host: host, port: port, reusePort: false, listening: false)
        close(probe.fd)
        return probe.port
    }

    static func bind(host: String, port: Int, reusePort: Bool = true, listening: Bool = true) throws -> Listener {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &info)
        guard status == 0, let first = info else {
            throw SystemCallError(call: "getaddrinfo(\(host))", errno: status == EAI_SYSTEM ? errno : EINVAL)
        }
        defer { freeaddrinfo(info) }
        let fd = try retryingEINTR("socket") {
            socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if reusePort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        do {
            try retryingEINTR("bind(\(host):\(port))") { Glibc.bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) }
            if listening { try retryingEINTR("listen") { listen(fd, 1024) } }
        } catch {
            close(fd)
            throw error
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let family = address.ss_family
        let boundPort: UInt16 = withUnsafePointer(to: &address) { pointer in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        return Listener(fd: fd, port: Int(boundPort))
    }
}
