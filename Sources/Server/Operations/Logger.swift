import Foundation
package import HTTP
package import JSON
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// JSON-lines logging: one line per request (never a body, key or signature), plus start-up,
/// warning and shutdown lines.
///
/// Event loops never write: each loop appends its request lines to its own buffer, hands the
/// buffer over once per loop iteration, and a dedicated thread does the `write(2)`s, at least
/// every 50 ms (request lines) or at once (start-up, warning and shutdown lines). If the output
/// stalls (a full pipe), lines beyond `maxPendingBytes` are dropped and counted, never waited for.
package final class Logger: HTTPServerObserver, Sendable {
    /// What one event loop has buffered. Invariant for `@unchecked Sendable`: shard i is touched
    /// only by event loop i (the observer calls carry the loop index).
    private final class Shard: @unchecked Sendable {
        var buffer: [UInt8] = []
        var clock = LogTimestamp()
    }

    private struct Pending: ~Copyable {
        var chunks: [[UInt8]] = []
        var bytes = 0
        var dropped = 0
        var stopping = false
    }

    private let shards: [Shard]
    /// Where lines go; nil discards them (in-process tests).
    private let output: Int32?
    private let metrics: Metrics?
    private let pending = Mutex(Pending())
    private let wakeUp = NSCondition()
    private let finished = DispatchSemaphore(value: 0)
    static let maxPendingBytes = 8 << 20

    package init(loops: Int, metrics: Metrics?, output: Int32? = 1) {
        shards = (0..<max(loops, 1)).map { _ in Shard() }
        self.output = output
        self.metrics = metrics
        if output != nil {
            let thread = Thread { [self] in writeLoop() }
            thread.name = "entitle-log"
            thread.start()
        }
    }

    /// A non-request line: `{"time","level","msg", …fields}`.
    package func log(_ level: String, _ message: String, _ fields: JSONObject = [:]) {
        var clock = LogTimestamp()
        var line: JSONObject = ["time": .string(clock.now()), "level": .string(level), "msg": .string(message)]
        for member in fields.members { line[member.key] = member.value }
        var bytes = JSONValue.object(line).serializedBytes
        bytes.append(0x0A)
        enqueue(bytes, urgent: true)
    }

    package func requestCompleted(_ record: HTTPRequestRecord, loop: Int) {
        metrics?.recordRequest(record, loop: loop)
        let shard = shards[loop % shards.count]
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: #"{"time":""#.utf8)
        line.append(contentsOf: shard.clock.now().utf8)
        line.append(contentsOf: #"","level":""#.utf8)
        line += Self.level(record).utf8
        line.append(contentsOf: #"","msg":"request","method":"#.utf8)
        JSONValue.writeString(record.method, into: &line)
        line.append(contentsOf: #","route":"#.utf8)
        JSONValue.writeString(record.route, into: &line)
        if let path = record.path {
            line.append(contentsOf: #","path":"#.utf8)
            JSONValue.writeString(path, into: &line)
        }
        line.append(contentsOf: #","status":"#.utf8)
        line += String(record.status).utf8
        for (key, value) in record.annotations where (record.status >= 400 || key == "app") && key != Self.levelAnnotation {
            line.append(UInt8(ascii: ","))
            JSONValue.writeString(key, into: &line)
            line.append(UInt8(ascii: ":"))
            JSONValue.writeString(value, into: &line)
        }
        line.append(contentsOf: #","durationMs":"#.utf8)
        // Milliseconds with three decimals, formatted as integers (Double's description is slow).
        let microseconds = max(0, Int(record.durationSeconds * 1_000_000))
        line += String(microseconds / 1000).utf8
        let fraction = microseconds % 1000
        line += (fraction < 10 ? ".00" : fraction < 100 ? ".0" : ".").utf8
        line += String(fraction).utf8
        line.append(contentsOf: #","bytes":"#.utf8)
        line += String(record.bytesSent).utf8
        line.append(contentsOf: #","requestId":"#.utf8)
        JSONValue.writeString(record.requestID, into: &line)
        line.append(contentsOf: "}\n".utf8)
        shard.buffer += line
    }

    /// The annotation by which a handler that knows better sets its line's level (it is not
    /// written as a field).
    static let levelAnnotation = "logLevel"

    /// The handler's own level when it set one; else `error` for 5xx, `warn` for 4xx worth a look
    /// (authentication, refused signed data), `info` otherwise.
    static func level(_ record: HTTPRequestRecord) -> String {
        if let chosen = record.annotations.first(where: { $0.key == levelAnnotation })?.value { return chosen }
        if record.status >= 500 { return "error" }
        let code = record.annotations.first { $0.key == "code" }?.value
        if record.status == 401 || record.status == 403 || code == "VERIFICATION_FAILED" { return "warn" }
        return "info"
    }

    package func loopIterationEnded(loop: Int) {
        let shard = shards[loop % shards.count]
        guard !shard.buffer.isEmpty else { return }
        enqueue(shard.buffer)
        shard.buffer.removeAll(keepingCapacity: true)
    }

    /// Lines dropped because the output did not keep up.
    package var droppedLines: Int { pending.withLock { $0.dropped } }

    /// Writes what is queued, then stops the writer thread (at shutdown).
    package func close() {
        guard output != nil else { return }
        pending.withLock { $0.stopping = true }
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
        finished.wait()
    }

    /// Queues bytes for the writer thread. The writer wakes by itself every `flushInterval`;
    /// it is signalled only when much is pending, so a busy loop does not pay a wake-up (a futex
    /// call and a context switch) per iteration.
    private func enqueue(_ bytes: [UInt8], urgent: Bool = false) {
        guard output != nil else { return }
        let pendingBytes = pending.withLock { pending -> Int? in
            guard !pending.stopping, pending.bytes + bytes.count <= Self.maxPendingBytes else {
                pending.dropped += 1
                return nil
            }
            pending.chunks.append(bytes)
            pending.bytes += bytes.count
            return pending.bytes
        }
        guard let pendingBytes, urgent || pendingBytes >= Self.signalThresholdBytes else { return }
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
    }

    static let signalThresholdBytes = 256 << 10
    static let flushInterval = 0.05

    private func writeLoop() {
        guard let output else { return }
        while true {
            wakeUp.lock()
            var (chunks, stopping) = take()
            while chunks.isEmpty && !stopping {
                _ = wakeUp.wait(until: Date(timeIntervalSinceNow: Self.flushInterval))
                (chunks, stopping) = take()
            }
            wakeUp.unlock()
            // One write for everything taken (each loop iteration's lines are one chunk).
            if chunks.count == 1 {
                Self.writeAll(chunks[0], to: output)
            } else if !chunks.isEmpty {
                Self.writeAll(Array(chunks.joined()), to: output)
            }
            if stopping && chunks.isEmpty {
                finished.signal()
                return
            }
        }
    }

    private func take() -> ([[UInt8]], Bool) {
        pending.withLock { pending in
            defer {
                pending.chunks.removeAll()
                pending.bytes = 0
            }
            return (pending.chunks, pending.stopping)
        }
    }

    private static func writeAll(_ bytes: [UInt8], to output: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(output, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// A log line's time: ISO 8601 UTC with milliseconds, the date part formatted at most once a
/// second. Always the machine's time, never the server's moved clock: a log says when it was written.
struct LogTimestamp {
    private var second = -1
    private var prefix = ""

    mutating func now() -> String {
        var value = timeval()
        gettimeofday(&value, nil)
        if value.tv_sec != second {
            second = value.tv_sec
            var seconds = value.tv_sec
            var parts = tm()
            gmtime_r(&seconds, &parts)
            var buffer = [CChar](repeating: 0, count: 32)
            let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
            prefix = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let milliseconds = Int(value.tv_usec) / 1000
        return prefix + (milliseconds < 10 ? ".00" : milliseconds < 100 ? ".0" : ".") + String(milliseconds) + "Z"
    }
}
