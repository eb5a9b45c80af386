/// Why bytes are not an acceptable HTTP/1.x request: the status to answer with and a stable code.
/// After one, the connection answers and closes: the framing of what follows is unknown.
package struct HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    package let status: Int
    package let code: String
    package let message: String

    package var description: String { "\(status) \(code): \(message)" }

    static func badRequest(_ message: String) -> HTTPParseError {
        HTTPParseError(status: 400, code: "BAD_REQUEST", message: message)
    }
}

/// Limits that bound what one request may cost the server.
package struct HTTPParserLimits: Sendable {
    /// Request line plus headers (and a chunked body's trailers).
    package var maxHeaderBytes = 16 * 1024
    package var maxHeaderCount = 100
    package var maxBodyBytes = 1 << 20

    package init(maxHeaderBytes: Int = 16 * 1024, maxHeaderCount: Int = 100, maxBodyBytes: Int = 1 << 20) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }
}

package enum HTTPParserEvent: Sendable {
    /// A complete request.
    case request(HTTPRequest)
    /// The client sent `Expect: 100-continue` and waits for `100 Continue` before the body.
    case expectContinue
    /// Nothing complete yet.
    case needMoreData
}

/// An incremental HTTP/1.x request parser: bytes in (`append`), requests or a precise error out
/// (`next`). Pure: no sockets, no clocks. Pipelined requests come out one by one, in order.
package struct HTTPParser: Sendable {
    package let limits: HTTPParserLimits
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Where the search for the end of the head resumes, so byte-at-a-time input stays linear.
    private var scanIndex = 0
    /// Where the search for a bare LF in the unparsed head resumes (linear too).
    private var bareScanIndex = 0
    private var state = State.head

    private enum State: Sendable {
        case head
        case fixedBody(HTTPRequest, remaining: Int)
        case chunkedBody(HTTPRequest, ChunkedDecoder)
        case failed(HTTPParseError)
    }

    package init(limits: HTTPParserLimits = HTTPParserLimits()) { self.limits = limits }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }
    package mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    /// Bytes received and not yet consumed by a complete request.
    package var bufferedByteCount: Int { buffer.count - readIndex }

    /// True between the first byte of a request and its last.
    package var isInsideRequest: Bool {
        if case .head = state { return bufferedByteCount > 0 }
        return true
    }

    /// True once the head is parsed and the body is still arriving.
    package var isReadingBody: Bool {
        switch state {
        case .fixedBody, .chunkedBody: true
        default: false
        }
    }

    package mutating func next() throws(HTTPParseError) -> HTTPParserEvent {
        do {
            let event = try step()
            compact()
            return event
        } catch {
            state = .failed(error)
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> HTTPParserEvent {
        switch state {
        case .failed(let error):
            throw error
        case .head:
            guard let (request, framing) = try parseHead() else { return .needMoreData }
            switch framing {
            case .none:
                return .request(request)
            case .fixed(let length):
                state = .fixedBody(request, remaining: length)
                if bufferedByteCount < length && expectsContinue(request) { return .expectContinue }
                return try step()
            case .chunked:
                state = .chunkedBody(request, ChunkedDecoder())
                if bufferedByteCount == 0 && expectsContinue(request) { return .expectContinue }
                return try step()
            }
        case .fixedBody(var request, let remaining):
            guard bufferedByteCount >= remaining else { return .needMoreData }
            request.body = Array(buffer[readIndex..<readIndex + remaining])
            readIndex += remaining
            state = .head
            return .request(request)
        case .chunkedBody(var request, var decoder):
            let done = try decoder.consume(buffer, from: &readIndex, limits: limits)
            guard done else {
                state = .chunkedBody(request, decoder)
                return .needMoreData
            }
            request.body = decoder.body
            state = .head
            return .request(request)
        }
    }

    private func expectsContinue(_ request: HTTPRequest) -> Bool {
        request.version == .http1_1 && request.header("expect")?.lowercased() == "100-continue"
    }

    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            readIndex = 0
            scanIndex = 0
            bareScanIndex = 0
        } else if readIndex > 64 * 1024 {
            buffer.removeFirst(readIndex)
            scanIndex -= readIndex
            bareScanIndex = max(0, bareScanIndex - readIndex)
            readIndex = 0
        }
    }

    // MARK: - Head

    private enum Framing { case none, fixed(Int), chunked }

    private mutating func parseHead() throws(HTTPParseError) -> (HTTPRequest, Framing)? {
        // Tolerate empty lines before a request (RFC 9112 §2.2), e.g. a stray CRLF after a body.
        while bufferedByteCount >= 2 && buffer[readIndex] == 0x0D && buffer[readIndex + 1] == 0x0A {
            readIndex += 2
        }
        scanIndex = max(scanIndex, readIndex)
        let end = findHeadEnd()
        try refuseBareLineFeed(before: end)
        guard let end else {
            // The limit is on the head itself, not on what happens to be buffered: a head of
            // exactly the limit may still be waiting for its final CRLFCRLF (4 bytes).
            if bufferedByteCount >= limits.maxHeaderBytes + 4 { throw headTooLarge() }
            scanIndex = max(readIndex, buffer.count - 3)
            return nil
        }
        guard end - readIndex <= limits.maxHeaderBytes else { throw headTooLarge() }
        let head = buffer[readIndex..<end]
        readIndex = end + 4
        scanIndex = readIndex
        bareScanIndex = readIndex
        let request = try HTTPHeadParser.parse(head, limits: limits)
        return (request, try framing(of: request))
    }

    /// A head whose lines end in bare LF never reaches CRLFCRLF: it is refused as soon as the
    /// bare LF arrives rather than after the header timeout (RFC 9112 §2.2 allows refusing it).
    /// The answer is the one the complete head would get, however the bytes were split: the
    /// lines before the bare LF are parsed first (a bad request line is still a 505 or 400 of
    /// its own), and a bare LF counts only within the head's size limit, as the complete head's
    /// 431 would otherwise come first.
    private mutating func refuseBareLineFeed(before end: Int?) throws(HTTPParseError) {
        let limit = min(end ?? buffer.count, readIndex + limits.maxHeaderBytes + 4)
        var index = max(bareScanIndex, readIndex)
        while index < limit {
            if buffer[index] == 0x0A && (index == readIndex || buffer[index - 1] != 0x0D) {
                _ = try HTTPHeadParser.parse(buffer[readIndex...index], limits: limits)
                throw .badRequest("bare LF in the head")  // not reached: the parse above throws at the LF
            }
            index += 1
        }
        bareScanIndex = max(bareScanIndex, limit)
    }

    private func headTooLarge() -> HTTPParseError {
        HTTPParseError(
            status: 431, code: "HEADERS_TOO_LARGE",
            message: "request line and headers exceed \(limits.maxHeaderBytes) bytes")
    }

    /// Index of the CR of the first CRLFCRLF at or after `scanIndex`.
    private func findHeadEnd() -> Int? {
        buffer.withUnsafeBufferPointer { bytes -> Int? in
            var index = scanIndex
            while index + 3 < bytes.count {
                if bytes[index + 3] != 0x0A {
                    index += bytes[index + 3] == 0x0D ? 1 : 4
                    continue
                }
                if bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D { return index }
                index += 1
            }
            return nil
        }
    }

    private func framing(of request: HTTPRequest) throws(HTTPParseError) -> Framing {
        let encodings = request.headers.filter { $0.name == "transfer-encoding" }
        let lengths = request.headers.filter { $0.name == "content-length" }
        if !encodings.isEmpty {
            guard lengths.isEmpty else {
                throw .badRequest("both Transfer-Encoding and Content-Length are present")
            }
            let coding = encodings.map { $0.value.lowercased() }.joined(separator: ",")
            guard coding == "chunked" else {
                throw HTTPParseError(
                    status: 501, code: "NOT_IMPLEMENTED",
                    message: "transfer encoding \"\(coding)\" is not supported (only chunked)")
            }
            guard request.version == .http1_1 else { throw .badRequest("chunked encoding needs HTTP/1.1") }
            return .chunked
        }
        guard let first = lengths.first else { return .none }
        guard lengths.allSatisfy({ $0.value == first.value }), !first.value.isEmpty,
            first.value.utf8.count <= 18, first.value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let length = Int(first.value)
        else { throw .badRequest("invalid Content-Length") }
        guard length <= limits.maxBodyBytes else {
            throw HTTPParseError(
                status: 413, code: "BODY_TOO_LARGE",
                message: "the body exceeds \(limits.maxBodyBytes) bytes")
        }
        return length == 0 ? .none : .fixed(length)
    }
}
