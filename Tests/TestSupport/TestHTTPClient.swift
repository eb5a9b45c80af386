import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 client over a real loopback socket, for end-to-end tests. It sends raw
/// bytes (so tests control framing exactly) and reads answers by their Content-Length.
package final class TestHTTPClient {
    package struct Response {
        package let status: Int
        package let headers: [String: String]
        package let body: [UInt8]
        package var text: String { String(decoding: body, as: UTF8.self) }
        package func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    package struct ClientError: Error, CustomStringConvertible {
        package let description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// `receiveBufferSize` shrinks the socket's receive buffer (a client that reads slowly).
    package convenience init(port: Int, timeout: Double = 10, receiveBufferSize: Int32? = nil) throws {
        try self.init(
            socket: socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0), port: port, timeout: timeout,
            receiveBufferSize: receiveBufferSize)
    }

    /// Connects a socket made earlier (tests that run out of descriptors make theirs first).
    package init(socket: Int32, port: Int, timeout: Double = 10, receiveBufferSize: Int32? = nil) throws {
        fd = socket
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw ClientError(description: "connect failed: errno \(errno)")
        }
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - floor(timeout)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    package func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends until done or the socket's send timeout; returns how many bytes the kernel took.
    package func sendAsMuchAsPossible(_ bytes: [UInt8], timeout: Double) -> Int {
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - floor(timeout)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { break }
            offset += sent
        }
        return offset
    }

    /// Whether an answer (or the end of the stream) can be read within `timeout` seconds.
    package func waitReadable(timeout: Double) -> Bool {
        if !buffer.isEmpty { return true }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, Int32(timeout * 1000)) > 0
    }

    /// Reads up to `count` bytes (one `recv`); nil at the end of the stream or on an error.
    package func readSome(_ count: Int) -> [UInt8]? {
        var scratch = [UInt8](repeating: 0, count: count)
        let received = recv(fd, &scratch, count, 0)
        return received > 0 ? Array(scratch[0..<received]) : nil
    }

    package func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw ClientError(description: "send failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Half-closes the sending side.
    package func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads until the peer closes; true if it did (0 bytes), false on timeout.
    package func waitForClose() -> Bool {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &scratch, scratch.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Reads one full response (the answer to a HEAD has no body: pass `head: true`).
    package func readResponse(head: Bool = false) throws -> Response {
        while true {
            if let response = try parseBuffered(head: head) { return response }
            var scratch = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &scratch, scratch.count, 0)
            if count == 0 { throw ClientError(description: "connection closed before a full response") }
            if count < 0 { throw ClientError(description: "recv failed or timed out: errno \(errno)") }
            buffer += scratch[0..<count]
        }
    }

    private func parseBuffered(head: Bool) throws -> Response? {
        let marker: [UInt8] = [13, 10, 13, 10]
        guard buffer.count >= 4, let end = (0...(buffer.count - 4)).first(where: { Array(buffer[$0..<$0 + 4]) == marker })
        else { return nil }
        let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw ClientError(description: "bad status line \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = head || status == 100 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        guard buffer.count >= end + 4 + length else { return nil }
        let body = Array(buffer[(end + 4)..<(end + 4 + length)])
        buffer.removeFirst(end + 4 + length)
        return Response(status: status, headers: headers, body: body)
    }
}

/// One request in raw HTTP/1.1 form.
package func rawRequest(_ method: String, _ path: String, headers: [String] = [], body: String? = nil) -> String {
    var lines = ["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1"] + headers
    if let body { lines.append("Content-Length: \(body.utf8.count)") }
    return lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? "")
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed).
package func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
            _ = bind(fd, pointer, length)
            return getsockname(fd, pointer, &length)
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
