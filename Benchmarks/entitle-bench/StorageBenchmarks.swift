import Crypto
import Entitlements
import Foundation
import JSON
import Storage

/// `entitle-bench fill-db` and `entitle-bench ingest`: the storage benchmarks of the
/// subscribers milestone (see Benchmarks/storage.sh, which runs them against a live server).
enum StorageBenchmarks {
    static func run(_ mode: String, _ arguments: [String]) throws -> Int32 {
        var options: [String: String] = [:]
        var index = 0
        while index + 1 < arguments.count {
            options[String(arguments[index].drop { $0 == "-" })] = arguments[index + 1]
            index += 2
        }
        switch mode {
        case "fill-db": return try fill(options)
        default: return try ingest(options)
        }
    }

    static func token(_ subscriber: Int) -> String {
        String(format: "00000000-0000-4000-8000-%012d", subscriber)
    }

    /// Fills a database with `--transactions` transactions over `--subscribers` subscribers (app
    /// `bench`, Sandbox), in batches of 1,000 per commit. The stored JWS column holds a placeholder:
    /// the read path under test never reads it.
    static func fill(_ options: [String: String]) throws -> Int32 {
        let path = options["db"] ?? "bench.sqlite3"
        let total = Int(options["transactions"] ?? "") ?? 1_000_000
        let subscribers = Int(options["subscribers"] ?? "") ?? 100_000
        let store = try SQLiteFactStore(path: path)
        let start = Date()
        var written = 0
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        while written < total {
            var batch = FactBatch(appId: "bench", environment: "Sandbox")
            for _ in 0..<min(1000, total - written) {
                let subscriber = written % subscribers
                let period = Int64(written / subscribers)
                let record = TransactionRecord(
                    transactionId: "t\(written)", originalTransactionId: "o\(subscriber)", productId: "pro.monthly",
                    subscriptionGroupIdentifier: "G1", purchaseDate: now - 30 * 86_400_000 * (10 - period),
                    expiresDate: now - 30 * 86_400_000 * (9 - period), environment: "Sandbox",
                    signedDate: now - 30 * 86_400_000 * (10 - period), appAccountToken: token(subscriber))
                batch.transactions.append((record, "bench"))
                written += 1
            }
            _ = try store.apply(batch)
        }
        print(JSONValue.object(["name": "fill-db.transactions", "value": .double(Double(total) / Date().timeIntervalSince(start)),
                                "unit": "transactions/s", "threads": 1, "sampleToken": .string(token(subscribers / 2))]).serializedString)
        return 0
    }

    /// Posts `--count` distinct notifications, signed by the chain in `--chain` (made by
    /// Tests/TestSupport/make-chain.sh), over `--connections` keep-alive connections to `--url`.
    static func ingest(_ options: [String: String]) throws -> Int32 {
        guard let url = options["url"].flatMap(URL.init(string:)), let port = url.port, let chainFolder = options["chain"] else {
            FileHandle.standardError.write(Data("usage: entitle-bench ingest --url http://127.0.0.1:PORT --chain DIR [--count N] [--connections C]\n".utf8))
            return 2
        }
        let count = Int(options["count"] ?? "") ?? 20_000
        let connections = Int(options["connections"] ?? "") ?? 32
        let bodiesFile = options["write-bodies"]
        let folder = URL(fileURLWithPath: chainFolder)
        let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: folder.appendingPathComponent("leaf.key"), encoding: .utf8))
        let x5c = try ["leaf.pem", "intermediate.pem", "root.pem"].map {
            JSONValue.string(Base64.encode(try Certificate.load(contentsOf: folder.appendingPathComponent($0).path)[0].derRepresentation))
        }
        let header: JSONObject = ["alg": "ES256", "x5c": .array(x5c)]
        // Signed now: the chain was minted moments ago and is valid from then on.
        let base = Int64(Date().timeIntervalSince1970 * 1000)
        let run = UInt32.random(in: 0...UInt32.max)
        FileHandle.standardError.write(Data("signing \(count) notifications…\n".utf8))
        var bodies: [[UInt8]] = []
        let requests: [[UInt8]] = try (0..<count).map { index in
            let transaction = try JWSSigner.sign(header: header, payload: [
                "transactionId": .string("i\(run)-\(index)"), "originalTransactionId": .string("io\(run)-\(index % 5000)"),
                "bundleId": "com.example.app", "productId": "pro.monthly", "type": "Auto-Renewable Subscription",
                "environment": "Sandbox", "purchaseDate": .int(base), "expiresDate": .int(base + 86_400_000),
                "signedDate": .int(base + Int64(index % 1000)),
            ], with: key)
            let notification = try JWSSigner.sign(header: header, payload: [
                "notificationType": "DID_RENEW", "notificationUUID": .string(String(format: "%08x-0000-4000-8000-%012d", run, index)),
                "signedDate": .int(base + Int64(index % 1000)),
                "data": .object(["bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(transaction)]),
            ], with: key)
            let body = JSONValue.object(["signedPayload": .string(notification)]).serializedBytes
            if bodiesFile != nil { bodies.append(body) }
            return Array("POST /v1/notifications/apple HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        }
        // With --write-bodies FILE the signed bodies go to FILE (one per line) for wrk
        // (Benchmarks/wrk/ingest.lua), an epoll load generator lighter than these threads.
        if let bodiesFile {
            var output: [UInt8] = []
            for body in bodies { output += body; output.append(0x0A) }
            try Data(output).write(to: URL(fileURLWithPath: bodiesFile))
            return 0
        }
        let latencies = LatencyLog()
        let start = Date()
        DispatchQueue.concurrentPerform(iterations: connections) { worker in
            guard let client = try? BlockingClient(port: port) else { return }
            for index in stride(from: worker, to: requests.count, by: connections) {
                let sent = Date()
                guard let status = try? client.exchange(requests[index]) else { return }
                latencies.add(Date().timeIntervalSince(sent), ok: status == 200)
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        let (sorted, failures) = latencies.snapshot
        let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1000
        print(JSONValue.object(["name": "ingest.notifications", "value": .double((Double(sorted.count - failures) / elapsed * 10).rounded() / 10),
                                "unit": "notifications/s", "threads": .int(Int64(connections)),
                                "p99_ms": .double((p99 * 100).rounded() / 100), "non200": .int(Int64(failures))]).serializedString)
        return failures == 0 ? 0 : 1
    }
}

private final class LatencyLog: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []
    private var failures = 0
    func add(_ seconds: Double, ok: Bool) { lock.lock(); values.append(seconds); if !ok { failures += 1 }; lock.unlock() }
    var snapshot: ([Double], Int) { lock.lock(); defer { lock.unlock() }; return (values.sorted(), failures) }
}

/// One keep-alive HTTP/1.1 connection to 127.0.0.1 (loopback only), request in, status out.
private final class BlockingClient {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    func exchange(_ request: [UInt8]) throws -> Int {
        var offset = 0
        while offset < request.count {
            let sent = request.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw POSIXError(.EPIPE) }
            offset += sent
        }
        var scratch = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let end = headEnd(), let length = contentLength(end) , buffer.count >= end + 4 + length {
                let statusLine = String(decoding: buffer[0..<min(end, 12)], as: UTF8.self)
                buffer.removeFirst(end + 4 + length)
                return Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
            }
            let count = recv(fd, &scratch, scratch.count, 0)
            guard count > 0 else { throw POSIXError(.ECONNRESET) }
            buffer += scratch[0..<count]
        }
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func contentLength(_ end: Int) -> Int? {
        let head = String(decoding: buffer[0..<end], as: UTF8.self).lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }) else { return 0 }
        return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
    }
}
