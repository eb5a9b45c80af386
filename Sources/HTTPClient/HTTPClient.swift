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

/// Runs one blocking transfer of `HTTPClient.send(_:) async` on some thread; false when it cannot
/// take another now (the caller is answered at once instead of queueing without end).
package typealias TransferRunner = @Sendable (@escaping @Sendable () -> Void) -> Bool

/// Why a request got no HTTP answer: the network-level failures a caller may retry.
package struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// `cancelled`: the caller gave up (its task was cancelled: the client that asked went away,
    /// or the server is stopping); the transfer was aborted.
    /// `overloaded`: the threads for transfers were all taken and their queue full; nothing was sent.
    package enum Kind: Sendable { case timeout, connection, tls, responseTooLarge, cancelled, overloaded, other }
    package let kind: Kind
    package let message: String
    package var description: String { message }
}

/// HTTP over libcurl, blocking: callers run it off the event loops (or use `send(_:) async`,
/// which a task's cancellation aborts).
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
        /// Where `send(_:) async` runs its transfers: Dispatch's pool unless given (the server
        /// gives its outbound pool, so calls to Apple and Google hold at most its threads).
        package var runTransfer: TransferRunner = { transfer in
            DispatchQueue.global().async(execute: transfer)
            return true
        }
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

    /// Sends on the caller's thread; `cancellation`, once set, aborts the transfer within
    /// libcurl's progress interval (about a second at most, at once when data moves).
    package func send(
        _ request: HTTPClientRequest, cancellation: Cancellation? = nil
    ) throws(HTTPClientError) -> HTTPClientResponse {
        let handle = idle.withLock { $0.popLast() } ?? EasyHandle()
        defer { idle.withLock { if $0.count < 8 { $0.append(handle) } } }
        return try handle.perform(request, configuration: configuration, cancellation: cancellation)
    }

    /// The same, on a thread of `configuration.runTransfer` so Swift's cooperative threads never
    /// block; the task's cancellation aborts the transfer (`HTTPClientError.Kind.cancelled`).
    package func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        let cancellation = Cancellation()
        let result: Result<HTTPClientResponse, HTTPClientError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let taken = configuration.runTransfer {
                    continuation.resume(
                        returning: Result { () throws(HTTPClientError) in try self.send(request, cancellation: cancellation) })
                }
                if !taken {
                    let host = URL(string: request.url)?.host ?? request.url
                    continuation.resume(
                        returning: .failure(HTTPClientError(kind: .overloaded, message: "\(host): too many calls waiting already")))
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Set once by whoever gave up on a transfer; read by libcurl's progress callback.
    package final class Cancellation: Sendable {
        private let flag = Atomic<Bool>(false)
        package init() {}
        package func cancel() { flag.store(true, ordering: .releasing) }
        package var isCancelled: Bool { flag.load(ordering: .acquiring) }
    }
}

/// One `CURL *`, used by one transfer at a time.
private final class EasyHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer

    init() { raw = curl_easy_init() }

    deinit { curl_easy_cleanup(raw) }

    func perform(
        _ request: HTTPClientRequest, configuration: HTTPClient.Configuration, cancellation: HTTPClient.Cancellation?
    ) throws(HTTPClientError) -> HTTPClientResponse {
        curl_easy_reset(raw)
        if cancellation?.isCancelled == true { throw HTTPClientError(kind: .cancelled, message: "cancelled before it was sent") }
        let sink = ResponseSink(limit: configuration.maxResponseBytes, cancellation: cancellation)
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
        if cancellation != nil {
            // A non-zero answer from the progress callback aborts the transfer.
            set(CURLOPT_NOPROGRESS, 0)
            _ = entitle_curl_set_progress_callback(raw) { context, _, _, _, _ in
                Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue().cancellation?.isCancelled == true ? 1 : 0
            }
            _ = entitle_curl_set_pointer(raw, CURLOPT_XFERINFODATA, unmanaged.toOpaque())
        }

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
        case CURLE_ABORTED_BY_CALLBACK: return HTTPClientError(kind: .cancelled, message: "\(host): cancelled")
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
    let cancellation: HTTPClient.Cancellation?

    init(limit: Int, cancellation: HTTPClient.Cancellation?) {
        self.limit = limit
        self.cancellation = cancellation
    }

    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count + chunk.count <= limit else {
            overflowed = true
            return false
        }
        bytes.append(contentsOf: chunk)
        return true
    }
}
