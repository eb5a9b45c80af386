internal import CCurl
internal import CCurlShims
import Foundation
import Synchronization

/// A request for `HTTPClient`.
package struct HTTPClientRequest: Sendable {
    package var method: String
    package var url: String
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]?

    package init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

package struct HTTPClientResponse: Sendable {
    package let status: Int
    /// Header fields of the final response, names as sent.
    package let headers: [(name: String, value: String)]
    package let body: [UInt8]

    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Why a request got no HTTP answer: the network-level failures a caller may retry.
package struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable { case timeout, connection, tls, responseTooLarge, other }
    package let kind: Kind
    package let message: String
    package var description: String { message }
}

/// HTTP over libcurl, blocking: callers run it off the event loops (or use `send(_:) async`).
///
/// Easy handles are pooled so connections (and TLS sessions) are reused; HTTP/2 is used where
/// the server offers it; TLS verification is always on, with an optional extra CA file for
/// private test CAs. Every transfer has a connect timeout, a total timeout and a response cap.
package final class HTTPClient: Sendable {
    package struct Configuration: Sendable {
        package var connectTimeout: Double = 10
        package var totalTimeout: Double = 30
        package var maxResponseBytes = 1 << 20
        /// When true, a response larger than `maxResponseBytes` is answered with its status and
        /// the first `maxResponseBytes` of its body (the transfer stops there) instead of failing:
        /// for callers to whom only the status matters (webhook deliveries).
        package var truncatesLargeResponses = false
        /// A PEM bundle to trust instead of the system's (local stand-ins in tests).
        package var caFile: String?
        package init() {}
    }

    package let configuration: Configuration
    private let idle = Mutex<[EasyHandle]>([])

    package init(configuration: Configuration = Configuration()) {
        HTTPClient.globalInit
        self.configuration = configuration
    }

    /// libcurl's process-wide initialisation, done once before the first handle.
    private static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    package func send(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        let handle = idle.withLock { $0.popLast() } ?? EasyHandle()
        defer { idle.withLock { if $0.count < 8 { $0.append(handle) } } }
        return try handle.perform(request, configuration: configuration)
    }

    /// The same, on a thread of Dispatch's pool so Swift's cooperative threads never block.
    package func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do { continuation.resume(returning: try self.send(request)) } catch { continuation.resume(throwing: error) }
            }
        }
    }
}

/// One `CURL *`, used by one transfer at a time.
private final class EasyHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer

    init() { raw = curl_easy_init() }

    deinit { curl_easy_cleanup(raw) }

    func perform(_ request: HTTPClientRequest, configuration: HTTPClient.Configuration) throws(HTTPClientError) -> HTTPClientResponse {
        curl_easy_reset(raw)
        let sink = ResponseSink(limit: configuration.maxResponseBytes)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for (name, value) in request.headers { headerList = curl_slist_append(headerList, "\(name): \(value)") }
        // Without this libcurl sends "Expect: 100-continue" for larger bodies and waits.
        headerList = curl_slist_append(headerList, "Expect:")

        set(CURLOPT_URL, request.url)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout * 1000))
        set(CURLOPT_TIMEOUT_MS, Int(configuration.totalTimeout * 1000))
        set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        if !configuration.truncatesLargeResponses { set(CURLOPT_MAXFILESIZE, configuration.maxResponseBytes) }
        if let caFile = configuration.caFile { set(CURLOPT_CAINFO, caFile) }
        _ = entitle_curl_set_pointer(raw, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList))
        _ = entitle_curl_set_write_callback(raw) { data, size, count, context in
            let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
            return sink.append(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
        _ = entitle_curl_set_header_callback(raw) { data, size, count, context in
            let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
            sink.header(UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        let unmanaged = Unmanaged.passRetained(sink)
        defer { unmanaged.release() }
        _ = entitle_curl_set_pointer(raw, CURLOPT_WRITEDATA, unmanaged.toOpaque())
        _ = entitle_curl_set_pointer(raw, CURLOPT_HEADERDATA, unmanaged.toOpaque())

        let code: CURLcode = (request.body ?? []).withUnsafeBytes { body in
            if request.method == "POST" || request.body != nil {
                set(CURLOPT_POST, 1)
                _ = entitle_curl_set_pointer(
                    raw, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: body.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
                _ = entitle_curl_set_size(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            }
            if request.method != "GET" && request.method != "POST" { set(CURLOPT_CUSTOMREQUEST, request.method) }
            return curl_easy_perform(raw)
        }
        let truncated = code == CURLE_WRITE_ERROR && sink.overflowed && configuration.truncatesLargeResponses
        guard code == CURLE_OK || truncated else { throw Self.error(code, sink: sink, url: request.url) }
        return HTTPClientResponse(status: entitle_curl_response_code(raw), headers: sink.headers, body: sink.bytes)
    }

    private func set(_ option: CURLoption, _ value: Int) { _ = entitle_curl_set_long(raw, option, value) }
    private func set(_ option: CURLoption, _ value: String) { _ = entitle_curl_set_string(raw, option, value) }

    private static func error(_ code: CURLcode, sink: ResponseSink, url: String) -> HTTPClientError {
        let message = String(cString: curl_easy_strerror(code))
        let host = URL(string: url)?.host ?? url
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return HTTPClientError(kind: .timeout, message: "\(host): timed out")
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING:
            return HTTPClientError(kind: .connection, message: "\(host): \(message)")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE:
            return HTTPClientError(kind: .tls, message: "\(host): TLS: \(message)")
        case CURLE_WRITE_ERROR where sink.overflowed, CURLE_FILESIZE_EXCEEDED:
            return HTTPClientError(kind: .responseTooLarge, message: "\(host): response larger than the limit")
        default: return HTTPClientError(kind: .other, message: "\(host): \(message)")
        }
    }
}

/// Collects the response body up to a limit.
private final class ResponseSink: @unchecked Sendable {
    private(set) var bytes: [UInt8] = []
    private(set) var headers: [(name: String, value: String)] = []
    private(set) var overflowed = false

    /// One header line; a status line starts a new response (after a 100 Continue, say). Parsed
    /// as bytes: a line costs a few comparisons, not a trip through Foundation's character sets.
    func header(_ line: UnsafeRawBufferPointer) {
        let bytes = line.bindMemory(to: UInt8.self)
        if bytes.starts(with: Self.statusPrefix) {
            headers.removeAll()
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var start = colon + 1
        var end = bytes.count
        while start < end && isSpace(bytes[start]) { start += 1 }
        while end > start && isSpace(bytes[end - 1]) { end -= 1 }
        var nameEnd = colon
        while nameEnd > 0 && isSpace(bytes[nameEnd - 1]) { nameEnd -= 1 }
        headers.append(
            (
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<nameEnd]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            ))
    }

    private static let statusPrefix = Array("HTTP/".utf8)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count + chunk.count <= limit else {
            overflowed = true
            return false
        }
        bytes.append(contentsOf: chunk)
        return true
    }
}
