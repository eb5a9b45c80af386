import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// One client connection, owned by its event loop and touched only on that loop's thread.
///
/// Requests are answered one at a time in arrival order: the next pipelined request is parsed
/// only after the current one's answer is queued, which keeps answers in order by construction.
final class Connection: @unchecked Sendable {
    private let fd: Int32
    private unowned let loop: EventLoop
    private var parser: HTTPParser
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var inFlight: HTTPRequestContext?
    private var closeAfterWrite = false
    private var peerFinishedSending = false
    private var isClosed = false
    private var registeredEvents: UInt32 = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
    private var draining = false
    // Timers (monotonic seconds).
    private var lastActivity: Double
    private var requestStartedAt: Double
    private var lastWriteProgress: Double

    /// Unanswered bytes queued beyond this stop the parsing of further pipelined requests.
    private static let outputHighWater = 256 * 1024

    init(fd: Int32, loop: EventLoop, now: Double) {
        self.fd = fd
        self.loop = loop
        parser = HTTPParser(limits: loop.configuration.limits)
        lastActivity = now
        requestStartedAt = now
        lastWriteProgress = now
    }

    // MARK: - Events

    func handle(events: UInt32) {
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 && events & EPOLLIN.rawValue == 0 {
            close()
            return
        }
        if events & EPOLLOUT.rawValue != 0 { flush() }
        if !isClosed && events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 { readAvailable() }
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        let count = recv(fd, buffer.baseAddress, buffer.count, 0)
        if count > 0 {
            let now = monotonicSeconds()
            if !parser.isInsideRequest { requestStartedAt = now }
            lastActivity = now
            parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            processInput()
        } else if count == 0 {
            // The client finished sending (or left). Answer what is complete, then close.
            peerFinishedSending = true
            if inFlight == nil && outputOffset == output.count { close(); return }
            closeAfterWrite = true
            updateInterest()
            processInput()
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            close()
        }
    }

    /// Parses and dispatches buffered requests until one is in flight or the bytes run out.
    private func processInput() {
        while inFlight == nil && !isClosed && !(closeAfterWrite && !peerFinishedSending) {
            if output.count - outputOffset > Self.outputHighWater { break }
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
                return
            case .expectContinue:
                output.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
            case .request(let request):
                dispatch(request)
            }
        }
        flushOrClose()
        updateInterest()
    }

    private func dispatch(_ request: HTTPRequest) {
        let requestID = request.header("x-request-id").flatMap(Self.acceptableRequestID) ?? loop.nextRequestID()
        let context = HTTPRequestContext(request: request, requestID: requestID, startedAt: requestStartedAt) {
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
        let before = output.count
        loop.serializer.serialize(response, requestID: context.requestID, version: request.version,
                                  keepAlive: keepAlive, omitBody: request.method == "HEAD", into: &output)
        let now = monotonicSeconds()
        lastActivity = now
        requestStartedAt = now
        loop.observer?.requestCompleted(HTTPRequestRecord(method: request.method, route: context.route,
                                                          status: response.status,
                                                          durationSeconds: now - context.startedAt,
                                                          bytesSent: output.count - before,
                                                          requestID: context.requestID), loop: loop.index)
        // Answered synchronously from inside dispatch: the parsing loop continues by itself.
        if loop.runningContext === context { return }
        processInput()
    }

    private func answerParseError(_ error: HTTPParseError) {
        closeAfterWrite = true
        let response = HTTPResponse.error(error.status, code: error.code, message: error.message)
        let before = output.count
        loop.serializer.serialize(response, requestID: loop.nextRequestID(), version: .http1_1, keepAlive: false,
                                  omitBody: false, into: &output)
        loop.observer?.requestCompleted(HTTPRequestRecord(method: "-", route: "unparsed", status: error.status,
                                                          durationSeconds: monotonicSeconds() - requestStartedAt,
                                                          bytesSent: output.count - before, requestID: "-"),
                                        loop: loop.index)
    }

    // MARK: - Writing

    private func flushOrClose() {
        flush()
        if !isClosed && closeAfterWrite && inFlight == nil && outputOffset == output.count { close() }
    }

    private func flush() {
        while outputOffset < output.count {
            let sent = output.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + outputOffset, bytes.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                outputOffset += sent
                lastWriteProgress = monotonicSeconds()
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                close()
                return
            }
        }
        if outputOffset == output.count && outputOffset > 0 {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputOffset = 0
            if closeAfterWrite && inFlight == nil { close(); return }
        }
        updateInterest()
    }

    /// Reads while there is room; writes while output waits. A request in flight with much
    /// pipelined input already buffered stops reading (bounded memory per connection).
    private func updateInterest() {
        guard !isClosed else { return }
        var wanted: UInt32 = 0
        let readPaused = peerFinishedSending
            || (inFlight != nil && parser.bufferedByteCount > loop.configuration.limits.maxBodyBytes + 64 * 1024)
        if !readPaused { wanted |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if outputOffset < output.count { wanted |= EPOLLOUT.rawValue }
        if wanted != registeredEvents {
            registeredEvents = wanted
            loop.modify(fd, events: wanted)
        }
    }

    // MARK: - Lifecycle

    /// Graceful shutdown: idle connections close now; busy ones after their current answer.
    func startDraining() {
        draining = true
        if inFlight == nil && !parser.isInsideRequest && outputOffset == output.count { close() }
    }

    func checkTimeouts(now: Double) {
        let configuration = loop.configuration
        if inFlight != nil { return }
        if outputOffset < output.count {
            if now - lastWriteProgress > configuration.idleTimeout { timeOut() }
        } else if parser.isInsideRequest {
            let since = parser.isReadingBody ? lastActivity : requestStartedAt
            if now - since > configuration.headerTimeout {
                // Best effort 408, then close: a slow client cannot hold the connection.
                let response = HTTPResponse.error(408, code: "REQUEST_TIMEOUT", message: "the request took too long to arrive")
                loop.serializer.serialize(response, requestID: loop.nextRequestID(), version: .http1_1,
                                          keepAlive: false, omitBody: false, into: &output)
                _ = output.withUnsafeBytes { send(fd, $0.baseAddress! + outputOffset, $0.count - outputOffset, Int32(MSG_NOSIGNAL)) }
                timeOut()
            }
        } else if now - lastActivity > configuration.idleTimeout {
            timeOut()
        }
    }

    private func timeOut() {
        loop.statistics.timedOutConnections.add(1, ordering: .relaxed)
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
        loop.connectionClosed(fd)
    }

    /// An incoming `X-Request-Id` is reused when short and plain, so logs line up with a proxy's.
    private static func acceptableRequestID(_ value: String) -> String? {
        guard !value.isEmpty, value.utf8.count <= 64,
              value.utf8.allSatisfy({ HTTPHeadParser.isTokenCharacter($0) }) else { return nil }
        return value
    }
}
