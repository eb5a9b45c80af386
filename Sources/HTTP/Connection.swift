internal import CLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One client connection, owned by its event loop and touched only on that loop's thread.
///
/// Requests are answered one at a time in arrival order: the next pipelined request is parsed
/// only after the current one's answer is queued, which keeps answers in order by construction.
///
/// Memory per connection is bounded: reading stops while more than one whole request is buffered
/// or more than `maxQueuedOutputBytes` of answers wait for a client that does not read, and
/// resumes as they drain. Every phase has a deadline that a trickle cannot stretch (see
/// `checkTimeouts`).
final class Connection: @unchecked Sendable {
    private let fd: Int32
    private unowned let loop: EventLoop
    private var parser: HTTPParser
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var inFlight: HTTPRequestContext?
    private var closeAfterWrite = false
    private var peerFinishedSending = false
    /// An unparseable request was answered: what follows has unknown framing and is never parsed.
    private var parseFailed = false
    private var isClosed = false
    private var registeredEvents: UInt32 = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
    private var draining = false
    /// Set once the last answer is sent and the write side shut: input is read and discarded.
    private var lingerDeadline: Double?
    // Timers (monotonic seconds) and what the deadlines scale with.
    private var lastActivity: Double
    private var requestStartedAt: Double
    private var requestBytesReceived = 0
    private var outputPendingSince: Double
    private var outputQueuedSincePending = 0

    /// The client's address, read once per connection (the console rate-limits sign-ins by it).
    private lazy var peer = peerAddress(of: fd)

    init(fd: Int32, loop: EventLoop, now: Double) {
        self.fd = fd
        self.loop = loop
        parser = HTTPParser(limits: loop.configuration.limits)
        lastActivity = now
        requestStartedAt = now
        outputPendingSince = now
    }

    private var hasPendingOutput: Bool { outputOffset < output.count }
    private var queuedOutputBytes: Int { output.count - outputOffset }

    /// Inside a request that is still arriving, and since when (for eviction at the connection cap).
    var incompleteRequestStartedAt: Double? {
        inFlight == nil && lingerDeadline == nil && parser.isInsideRequest ? requestStartedAt : nil
    }

    // MARK: - Events

    func handle(events: UInt32) {
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 && events & EPOLLIN.rawValue == 0 {
            close()
            return
        }
        if events & EPOLLOUT.rawValue != 0 {
            flush()
            // Room again in the output queue: answer the pipelined requests already buffered.
            if !isClosed && lingerDeadline == nil { processInput() }
        }
        if !isClosed && events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 { readAvailable() }
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        let count = recv(fd, buffer.baseAddress, buffer.count, 0)
        if count > 0 {
            let now = monotonicSeconds()
            lastActivity = now
            if lingerDeadline != nil { return }  // discarded: the answer is out, the connection closing
            if !parser.isInsideRequest {
                requestStartedAt = now
                requestBytesReceived = 0
            }
            requestBytesReceived += count
            parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            processInput()
        } else if count == 0 {
            // The client finished sending (or left). Answer what is complete, then close; the
            // work of a request in flight is told it was abandoned (a client that gave up).
            peerFinishedSending = true
            inFlight?.abandon()
            if lingerDeadline != nil || (inFlight == nil && !hasPendingOutput) {
                close()
                return
            }
            closeAfterWrite = true
            updateInterest()
            processInput()
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            close()
        }
    }

    /// Parses and dispatches buffered requests until one is in flight, the bytes run out, or the
    /// output queue is full.
    private func processInput() {
        // After the client's EOF, requests already buffered are still answered.
        while inFlight == nil && !isClosed && !parseFailed && !(closeAfterWrite && !peerFinishedSending) {
            if queuedOutputBytes > loop.configuration.maxQueuedOutputBytes {
                // Full: try to send now; if the kernel took it, go on parsing, else EPOLLOUT resumes us.
                flush()
                if isClosed || queuedOutputBytes > loop.configuration.maxQueuedOutputBytes { break }
                continue
            }
            let event: HTTPParserEvent
            do {
                event = try parser.next()
            } catch {
                answerParseError(error)
                break
            }
            switch event {
            case .needMoreData:
                if peerFinishedSending { closeAfterWrite = true }
                flushOrClose()
                updateInterest()
                return
            case .expectContinue:
                queue("HTTP/1.1 100 Continue\r\n\r\n".utf8)
            case .request(let request):
                dispatch(request)
            }
        }
        flushOrClose()
        updateInterest()
    }

    private func dispatch(_ request: HTTPRequest) {
        let requestID = request.header("x-request-id").flatMap(Self.acceptableRequestID) ?? loop.nextRequestID()
        let context = HTTPRequestContext(request: request, requestID: requestID, startedAt: requestStartedAt, peer: peer) {
            [weak self, loop] context, response in
            guard let connection = self else { return }
            if loop.isOnLoopThread {
                connection.complete(context, response)
            } else {
                loop.execute { connection.complete(context, response) }
            }
        }
        inFlight = context
        loop.runningContext = context
        loop.handler(context)
        loop.runningContext = nil
    }

    /// Queues the answer to the request in flight and resumes parsing.
    private func complete(_ context: HTTPRequestContext, _ response: HTTPResponse) {
        guard !isClosed, inFlight === context else { return }
        inFlight = nil
        let request = context.request
        let keepAlive = request.keepAlive && !draining && !closeAfterWrite && !peerFinishedSending
        if !keepAlive { closeAfterWrite = true }
        let bytes = serialize(
            response, requestID: context.requestID, version: request.version, keepAlive: keepAlive,
            omitBody: request.method == "HEAD")
        let now = monotonicSeconds()
        lastActivity = now
        requestStartedAt = now
        requestBytesReceived = parser.bufferedByteCount
        loop.observer?.requestCompleted(
            HTTPRequestRecord(
                method: request.method, route: context.route,
                status: response.status,
                durationSeconds: now - context.startedAt,
                bytesSent: bytes, requestID: context.requestID,
                annotations: response.logAnnotations,
                path: context.route == "unmatched" ? String(request.path) : nil),
            loop: loop.index)
        // Answered synchronously from inside dispatch: the parsing loop continues by itself.
        if loop.runningContext === context { return }
        processInput()
    }

    private func answerParseError(_ error: HTTPParseError) {
        closeAfterWrite = true
        parseFailed = true
        let response = HTTPResponse.error(error.status, code: error.code, message: error.message)
        let bytes = serialize(response, requestID: loop.nextRequestID(), version: .http1_1, keepAlive: false, omitBody: false)
        loop.observer?.requestCompleted(
            HTTPRequestRecord(
                method: "-", route: "unparsed", status: error.status,
                durationSeconds: monotonicSeconds() - requestStartedAt,
                bytesSent: bytes, requestID: "-",
                annotations: [("code", error.code), ("reason", error.message)],
                path: nil),
            loop: loop.index)
    }

    // MARK: - Writing

    /// Serializes into the output queue; returns the bytes added.
    private func serialize(
        _ response: HTTPResponse, requestID: String, version: HTTPVersion, keepAlive: Bool,
        omitBody: Bool
    ) -> Int {
        let before = output.count
        startPendingIfIdle()
        loop.serializer.serialize(
            response, requestID: requestID, version: version, keepAlive: keepAlive,
            omitBody: omitBody, into: &output)
        outputQueuedSincePending += output.count - before
        return output.count - before
    }

    private func queue(_ bytes: String.UTF8View) {
        startPendingIfIdle()
        output.append(contentsOf: bytes)
        outputQueuedSincePending += bytes.count
    }

    private func startPendingIfIdle() {
        guard !hasPendingOutput else { return }
        outputPendingSince = monotonicSeconds()
        outputQueuedSincePending = 0
    }

    private func flushOrClose() {
        flush()
        if !isClosed && closeAfterWrite && inFlight == nil && !hasPendingOutput { finish() }
    }

    private func flush() {
        while hasPendingOutput {
            let sent = output.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + outputOffset, bytes.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                outputOffset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                close()
                return
            }
        }
        if !hasPendingOutput && outputOffset > 0 {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputOffset = 0
            if closeAfterWrite && inFlight == nil {
                finish()
                return
            }
        }
        updateInterest()
    }

    /// Reads while there is room in both directions; writes while output waits.
    private func updateInterest() {
        guard !isClosed else { return }
        let configuration = loop.configuration
        var wanted: UInt32 = 0
        let readPaused =
            peerFinishedSending
            || parser.bufferedByteCount > configuration.maxBufferedInputBytes
            || (lingerDeadline == nil && queuedOutputBytes > configuration.maxQueuedOutputBytes)
        if !readPaused { wanted |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if hasPendingOutput { wanted |= EPOLLOUT.rawValue }
        if wanted != registeredEvents {
            registeredEvents = wanted
            loop.modify(fd, events: wanted)
        }
    }

    // MARK: - Lifecycle

    /// The last answer is out. A client still sending (the body of a refused request, pipelined
    /// requests) would get a reset that can destroy the answer in its receive buffer, so shut the
    /// write side and discard input for a bounded time instead (lingering close).
    private func finish() {
        if lingerDeadline != nil { return }
        if peerFinishedSending {
            close()
            return
        }
        shutdown(fd, Int32(SHUT_WR))
        let now = monotonicSeconds()
        lingerDeadline = now + loop.configuration.lingerTimeout
        lastActivity = now
        parser = HTTPParser(limits: loop.configuration.limits)  // drop what was buffered
        updateInterest()
    }

    /// Graceful shutdown: idle connections close now; busy ones after their current answer.
    func startDraining() {
        draining = true
        if inFlight == nil && !parser.isInsideRequest && !hasPendingOutput { close() }
    }

    /// The deadlines, checked about once a second by the loop:
    /// - lingering: until `lingerDeadline`, or a second without input;
    /// - queued answers: `writeTimeout` plus one second per `minimumSendRate` bytes queued;
    /// - a request arriving: `headerTimeout` plus one second per `minimumReceiveRate` bytes received;
    /// - between requests: `idleTimeout`.
    func checkTimeouts(now: Double) {
        let configuration = loop.configuration
        if let lingerDeadline {
            if now >= lingerDeadline || now - lastActivity >= 1 { close() }
            return
        }
        if hasPendingOutput {
            let allowed = configuration.writeTimeout + Double(outputQueuedSincePending) / configuration.minimumSendRate
            if now - outputPendingSince > allowed { timeOut() }
            return
        }
        if inFlight != nil { return }
        if parser.isInsideRequest {
            let allowed = configuration.headerTimeout + Double(requestBytesReceived) / configuration.minimumReceiveRate
            if now - requestStartedAt > allowed { answerTimeout() }
        } else if now - lastActivity > configuration.idleTimeout {
            timeOut()
        }
    }

    /// Best effort 408, then close: a slow client cannot hold the connection.
    func answerTimeout() {
        let response = HTTPResponse.error(408, code: "REQUEST_TIMEOUT", message: "the request took too long to arrive")
        _ = serialize(response, requestID: loop.nextRequestID(), version: .http1_1, keepAlive: false, omitBody: false)
        _ = output.withUnsafeBytes { send(fd, $0.baseAddress! + outputOffset, $0.count - outputOffset, Int32(MSG_NOSIGNAL)) }
        timeOut()
    }

    private func timeOut() {
        loop.statistics.timedOutConnections.add(1, ordering: .relaxed)
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        inFlight?.abandon()
        Glibc.close(fd)
        loop.connectionClosed(fd)
    }

    /// An incoming `X-Request-Id` is reused when short and plain, so logs line up with a proxy's.
    private static func acceptableRequestID(_ value: String) -> String? {
        guard !value.isEmpty, value.utf8.count <= 64,
            value.utf8.allSatisfy({ HTTPHeadParser.isTokenCharacter($0) })
        else { return nil }
        return value
    }
}
