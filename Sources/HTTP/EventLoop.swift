internal import CLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One thread's epoll loop: its listening socket, its connections, its timers and a mailbox
/// through which other threads hand it work (answers computed elsewhere, shutdown).
///
/// Invariant that makes it `Sendable`: everything except `mailbox` and `wakeFD` is touched only
/// on the loop's own thread, inside `run()`.
final class EventLoop: @unchecked Sendable {
    let index: Int
    let configuration: HTTPServerConfiguration
    let handler: HTTPHandler
    let observer: (any HTTPServerObserver)?
    let statistics: HTTPServerStatistics
    private let epollFD: Int32
    private let wakeFD: Int32
    private var listenFD: Int32
    /// A descriptor held in reserve: when `accept` fails for want of descriptors (EMFILE), it is
    /// closed to accept one client, answer it 503 and close it, then taken again. Without that the
    /// pending connection stays in the backlog and the level-triggered listener spins.
    private var reserveFD: Int32 = -1
    /// Set while the listener is out of the epoll set (no descriptor to spare even in reserve).
    private var listenerPausedUntil: Double?
    private var connections: [Int32: Connection] = [:]
    private let mailbox = Mutex<[@Sendable () -> Void]>([])
    private var draining = false
    private var drainDeadline = 0.0
    private var lastSweep = 0.0
    private var requestCounter: UInt64 = 0
    private let requestIDPrefix: String
    var serializer: ResponseSerializer
    /// The context whose handler is running right now on this thread (to spot synchronous answers).
    var runningContext: HTTPRequestContext?
    /// The loop thread's `pthread_t` (0 until `run` starts); read from any thread.
    private let threadID = Atomic<UInt>(0)

    var isOnLoopThread: Bool {
        let owner = threadID.load(ordering: .acquiring)
        return owner != 0 && pthread_equal(owner, pthread_self()) != 0
    }
    /// One read buffer per loop: connections copy out only what arrived.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private static let listenToken: UInt64 = .max
    private static let wakeToken: UInt64 = .max - 1

    init(
        index: Int, listenFD: Int32, configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler,
        observer: (any HTTPServerObserver)?, statistics: HTTPServerStatistics
    ) throws {
        self.index = index
        self.listenFD = listenFD
        self.configuration = configuration
        self.handler = handler
        self.observer = observer
        self.statistics = statistics
        serializer = ResponseSerializer(defaultHeaders: configuration.defaultHeaders)
        epollFD = try retryingEINTR("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        wakeFD = try retryingEINTR("eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
        requestIDPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16) + "-\(index)-"
        try register(listenFD, events: EPOLLIN.rawValue, token: Self.listenToken)
        try register(wakeFD, events: EPOLLIN.rawValue, token: Self.wakeToken)
        reserveFD = Self.openReserve()
    }

    private static func openReserve() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    deinit {
        readBuffer.deallocate()
        if listenFD >= 0 { close(listenFD) }  // a server that was never started
        if reserveFD >= 0 { close(reserveFD) }
        close(epollFD)
        close(wakeFD)
    }

    // MARK: - Cross-thread entry points

    /// Runs `task` on this loop's thread soon.
    func execute(_ task: @escaping @Sendable () -> Void) {
        mailbox.withLock { $0.append(task) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    func beginShutdown(deadline: Double) {
        execute { [self] in
            draining = true
            drainDeadline = deadline
            if listenFD >= 0 {
                close(listenFD)
                listenFD = -1
            }
            for connection in Array(connections.values) { connection.startDraining() }
        }
    }

    // MARK: - The loop

    func run() {
        threadID.store(pthread_self(), ordering: .releasing)
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while !(draining && (connections.isEmpty || monotonicSeconds() >= drainDeadline)) {
            let count = epoll_wait(epollFD, &events, Int32(events.count), 1000)
            if count < 0 && errno != EINTR { break }
            for event in events.prefix(Int(max(count, 0))) {
                switch event.data.u64 {
                case Self.listenToken: acceptConnections()
                case Self.wakeToken: drainMailbox()
                default: connections[Int32(truncatingIfNeeded: event.data.u64)]?.handle(events: event.events)
                }
            }
            let now = monotonicSeconds()
            if let until = listenerPausedUntil, now >= until { resumeListener() }
            if now - lastSweep >= 1 {
                lastSweep = now
                sweepTimeouts(now: now)
            }
            observer?.loopIterationEnded(loop: index)
        }
        for connection in Array(connections.values) { connection.close() }
        if listenFD >= 0 { close(listenFD) }
        observer?.loopIterationEnded(loop: index)
    }

    private func drainMailbox() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, 8)
        let tasks = mailbox.withLock { tasks -> [@Sendable () -> Void] in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in tasks { task() }
    }

    private func acceptConnections() {
        for _ in 0..<64 {
            let fd = entitle_accept_nonblocking(listenFD)
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE:
                    if refuseWithReserveDescriptor() {
                        continue
                    } else {
                        pauseListener()
                        return
                    }
                default: return  // EAGAIN: nothing more
                }
            }
            let open = statistics.openConnections.add(1, ordering: .relaxed).newValue
            if open > configuration.maxConnections && !evictSlowestIncompleteRequest() {
                statistics.openConnections.subtract(1, ordering: .relaxed)
                statistics.refusedConnections.add(1, ordering: .relaxed)
                refuse(fd)
                continue
            }
            statistics.acceptedConnections.add(1, ordering: .relaxed)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let connection = Connection(fd: fd, loop: self, now: monotonicSeconds())
            connections[fd] = connection
            do {
                try register(fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, token: UInt64(fd))
            } catch {
                connection.close()
            }
            if draining { connection.startDraining() }
        }
    }

    /// Out of descriptors: frees the reserve to take the waiting client off the backlog with a 503.
    private func refuseWithReserveDescriptor() -> Bool {
        guard reserveFD >= 0 else { return false }
        close(reserveFD)
        let fd = entitle_accept_nonblocking(listenFD)
        let acceptError = fd < 0 ? errno : 0
        if fd >= 0 {
            statistics.refusedConnections.add(1, ordering: .relaxed)
            refuse(fd)
        }
        reserveFD = Self.openReserve()
        // Handled: a client refused, or nobody was waiting after all. Anything else (the freed
        // descriptor taken by another thread, no reserve to be had) pauses the listener.
        return reserveFD >= 0 && (fd >= 0 || acceptError == EAGAIN || acceptError == EWOULDBLOCK)
    }

    private func pauseListener() {
        guard listenerPausedUntil == nil else { return }
        modify(listenFD, events: 0, token: Self.listenToken)
        listenerPausedUntil = monotonicSeconds() + 0.1
    }

    private func resumeListener() {
        listenerPausedUntil = nil
        if reserveFD < 0 { reserveFD = Self.openReserve() }
        if listenFD >= 0 { modify(listenFD, events: EPOLLIN.rawValue, token: Self.listenToken) }
    }

    /// At the connection cap, a client that finishes its request is worth more than one that has
    /// been trickling a request for seconds: the slowest such connection (over a second into an
    /// incomplete request) makes room with a 408. Keeps slow-body floods from locking everyone out.
    private func evictSlowestIncompleteRequest() -> Bool {
        let cutoff = monotonicSeconds() - 1
        var victim: Connection?
        var oldest = cutoff
        for connection in connections.values {
            if let started = connection.incompleteRequestStartedAt, started < oldest {
                oldest = started
                victim = connection
            }
        }
        guard let victim else { return false }
        victim.answerTimeout()
        return true
    }

    /// Over the connection limit: a short 503 (best effort, never blocking) and close.
    private func refuse(_ fd: Int32) {
        let body = #"{"error":{"code":"TOO_MANY_CONNECTIONS","message":"the server is at its connection limit"}}"#
        let response =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" + body
        _ = response.utf8.withContiguousStorageIfAvailable { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(fd)
    }

    private func sweepTimeouts(now: Double) {
        for connection in Array(connections.values) { connection.checkTimeouts(now: now) }
    }

    // MARK: - Helpers for connections

    func register(_ fd: Int32, events: UInt32, token: UInt64) throws {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        try retryingEINTR("epoll_ctl(ADD)") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
    }

    func modify(_ fd: Int32, events: UInt32, token: UInt64? = nil) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token ?? UInt64(fd)
        epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    func connectionClosed(_ fd: Int32) {
        connections[fd] = nil
        statistics.openConnections.subtract(1, ordering: .relaxed)
    }

    func nextRequestID() -> String {
        requestCounter &+= 1
        return requestIDPrefix + String(requestCounter, radix: 16)
    }

    var isDraining: Bool { draining }
}
