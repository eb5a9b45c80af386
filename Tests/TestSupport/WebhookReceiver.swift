package import Foundation
package import JSON

/// The HTTPS webhook receiver of `webhook-receiver.py` on loopback, with its own private CA:
/// it verifies each delivery's Standard Webhooks signature independently of Entitle's code and
/// logs what it got. Entitle trusts the CA through `delivery.caFile`.
package final class WebhookReceiver: @unchecked Sendable {
    package let folder: URL
    /// A `whsec_` secret made for this receiver.
    package let secret: String
    package var caFile: String { folder.appendingPathComponent("ca.pem").path }
    /// `/gate` answers 503 until this file exists.
    package var gate: URL { folder.appendingPathComponent("gate") }
    package private(set) var port = 0
    private var process: Process?

    package struct Delivery: Sendable {
        package let path: String
        package let id: String?
        package let timestamp: Int64?
        package let signatureValid: Bool
        package let body: String
        package let bodyBytes: [UInt8]
        package var json: JSONValue { (try? JSONParser.parse(bodyBytes)) ?? .null }
    }

    package init() throws {
        folder = try makeTemporaryDirectory("entitle-receiver")
        var key = [UInt8](repeating: 0, count: 32)
        for index in key.indices { key[index] = UInt8.random(in: 0...255) }
        secret = "whsec_" + Data(key).base64EncodedString()
        try makeCertificates()
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    package func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    /// A CA and a leaf for 127.0.0.1 signed by it (OpenSSL's command line).
    private func makeCertificates() throws {
        func openssl(_ arguments: [String]) throws {
            let result = try runProcess("openssl", arguments, currentDirectory: folder)
            guard result.status == 0 else { throw ReceiverError(description: "openssl \(arguments[0]): \(result.stderr)") }
        }
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=Entitle test receiver CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr",
            "-subj", "/CN=127.0.0.1",
        ])
        try writeFile(folder.appendingPathComponent("leaf.ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        try openssl([
            "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "2",
            "-extfile", "leaf.ext",
        ])
    }

    /// Starts (or restarts) the receiver process; the log is kept across restarts.
    package func start() throws {
        let portFile = folder.appendingPathComponent("port")
        try? FileManager.default.removeItem(at: portFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: systemPython)
        process.arguments = [
            packageRoot.appendingPathComponent("Tests/TestSupport/webhook-receiver.py").path,
            "--cert", folder.appendingPathComponent("leaf.pem").path, "--key", folder.appendingPathComponent("leaf.key").path,
            "--secret", secret, "--log", folder.appendingPathComponent("log.jsonl").path, "--port-file", portFile.path,
            "--gate", gate.path,
        ]
        try process.run()
        self.process = process
        for _ in 0..<200 {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let number = Int(text) {
                port = number
                return
            }
            usleep(50_000)
        }
        throw ReceiverError(description: "the webhook receiver did not start")
    }

    package func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// Everything received so far, in arrival order.
    package func deliveries(_ path: String? = nil) -> [Delivery] {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("log.jsonl"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line -> Delivery? in
            guard let entry = try? JSONParser.parse(Array(line.utf8)) else { return nil }
            let bytes = Data(base64Encoded: entry["bodyBase64"]?.stringValue ?? "").map { [UInt8]($0) } ?? []
            return Delivery(
                path: entry["path"]?.stringValue ?? "", id: entry["id"]?.stringValue,
                timestamp: entry["timestamp"]?.stringValue.flatMap { Int64($0) },
                signatureValid: entry["signatureValid"]?.boolValue ?? false, body: entry["body"]?.stringValue ?? "",
                bodyBytes: bytes)
        }.filter { path == nil || $0.path == path }
    }

    /// Waits (up to `timeout` seconds) until `condition` holds for what `path` received.
    @discardableResult
    package func wait(
        for path: String? = nil, timeout: Double = 20, until condition: ([Delivery]) -> Bool
    ) -> [Delivery] {
        let deadline = Date().addingTimeInterval(timeout)
        var received = deliveries(path)
        while !condition(received) && Date() < deadline {
            usleep(50_000)
            received = deliveries(path)
        }
        return received
    }

    struct ReceiverError: Error, CustomStringConvertible { let description: String }
}
