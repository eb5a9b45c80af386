#if canImport(Glibc)
import Glibc
#endif
import HTTP
import JSON
import Synchronization

/// JSON-lines logging to standard output: one line per request (never a body, key or signature)
/// plus start-up and shutdown lines.
///
/// Request lines are buffered per event loop and written once per loop iteration, so logging
/// costs one `write` per batch of requests instead of one per request.
public final class Logger: HTTPServerObserver, Sendable {
    /// What one event loop has buffered. Invariant for `@unchecked Sendable`: shard i is touched
    /// only by event loop i (the observer calls carry the loop index).
    private final class Shard: @unchecked Sendable {
        var buffer: [UInt8] = []
        var clock = WallClock()
    }

    private let shards: [Shard]
    /// Where lines go; nil discards them (in-process tests).
    private let output: Int32?
    private let writeLock = Mutex<Void>(())
    private let metrics: Metrics?

    public init(loops: Int, metrics: Metrics?, output: Int32? = 1) {
        shards = (0..<max(loops, 1)).map { _ in Shard() }
        self.output = output
        self.metrics = metrics
    }

    /// A non-request line: `{"time","level","msg", …fields}`.
    public func log(_ level: String, _ message: String, _ fields: JSONObject = [:]) {
        var clock = WallClock()
        var line: JSONObject = ["time": .string(clock.now()), "level": .string(level), "msg": .string(message)]
        for member in fields.members { line[member.key] = member.value }
        var bytes = JSONValue.object(line).serializedBytes
        bytes.append(0x0A)
        write(bytes)
    }

    public func requestCompleted(_ record: HTTPRequestRecord, loop: Int) {
        metrics?.recordRequest(record, loop: loop)
        let shard = shards[loop % shards.count]
        var line = Array(#"{"time":""#.utf8)
        line += shard.clock.now().utf8
        line += Array(#"","level":"info","msg":"request","method":"#.utf8)
        JSONValue.writeString(record.method, into: &line)
        line += Array(#","route":"#.utf8)
        JSONValue.writeString(record.route, into: &line)
        line += Array(#","status":"#.utf8)
        line += String(record.status).utf8
        line += Array(#","durationMs":"#.utf8)
        line += String(Double(Int(record.durationSeconds * 1_000_000)) / 1000).utf8
        line += Array(#","bytes":"#.utf8)
        line += String(record.bytesSent).utf8
        line += Array(#","requestId":"#.utf8)
        JSONValue.writeString(record.requestID, into: &line)
        line += Array("}\n".utf8)
        shard.buffer += line
    }

    public func loopIterationEnded(loop: Int) {
        let shard = shards[loop % shards.count]
        guard !shard.buffer.isEmpty else { return }
        write(shard.buffer)
        shard.buffer.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8]) {
        guard let output else { return }
        writeLock.withLock { _ in
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
}

/// ISO 8601 UTC with milliseconds, the date part formatted at most once a second.
struct WallClock {
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
