import Foundation

/// Throw-away PostgreSQL for the tests (`Scripts/postgresql-test-cluster.sh`): a fresh database
/// on the shared test server (`ENTITLE_TEST_POSTGRESQL`, which `.ci/run` starts, else a cluster
/// this test process starts once and stops at exit), or a private cluster a test may restart.
/// Throws `XCTSkip`-worthy `Unavailable` when no PostgreSQL server is installed.
package enum PostgreSQLTestCluster {
    package struct Unavailable: Error, CustomStringConvertible { package let description: String }

    /// Runs the cluster script with `posix_spawn` and `waitpid`, its output in a file: the
    /// PostgreSQL server it starts outlives it, and Foundation's `Process` did not notice the
    /// script's exit while that daemon lived on.
    static func cluster(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("entitle-pg-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let command =
            (["bash", script] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            .joined(separator: " ") + " > '\(output)' 2>&1 < /dev/null"
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { throw Unavailable(description: "cannot run the script") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return ((status >> 8) & 0xFF, text)
    }

    private static let script = packageRoot.appendingPathComponent("Scripts/postgresql-test-cluster.sh").path
    nonisolated(unsafe) private static var sharedFolder: String?
    private static let lock = NSLock()
    nonisolated(unsafe) private static var sharedURL: Result<String, any Error>?

    /// A new empty database; its URL.
    package static func freshDatabase() throws -> String {
        let server = try sharedServer()
        let name = "entitle_test_\(UUID().uuidString.prefix(8).lowercased())"
        let result = try runProcess("psql", [server, "-q", "-c", "CREATE DATABASE \(name)"])
        guard result.status == 0 else { throw Unavailable(description: "CREATE DATABASE failed: \(result.stderr)") }
        return server.replacingOccurrences(of: "/postgres", with: "/\(name)")
    }

    private static func sharedServer() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let sharedURL { return try sharedURL.get() }
        let result = Result { () throws -> String in
            if let url = ProcessInfo.processInfo.environment["ENTITLE_TEST_POSTGRESQL"], !url.isEmpty { return url }
            let cluster = try Private()
            sharedFolder = cluster.folder
            atexit {
                if let folder = PostgreSQLTestCluster.sharedFolder {
                    _ = try? PostgreSQLTestCluster.cluster(["stop", folder + "/cluster"])
                    try? FileManager.default.removeItem(atPath: folder)
                }
            }
            cluster.keep = true
            return cluster.url
        }
        sharedURL = result
        return try result.get()
    }

    /// A cluster of one test's own, on a free port; stopped and removed when released.
    package final class Private: @unchecked Sendable {
        package let folder: String
        package let url: String
        package let port: Int
        var keep = false

        package init() throws {
            folder = try makeTemporaryDirectory("entitle-pg").path
            port = try Self.freePort()
            let result = try PostgreSQLTestCluster.cluster(["start", folder + "/cluster", String(port)])
            if result.status == 3 { throw Unavailable(description: result.output.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard result.status == 0 else { throw Unavailable(description: "the test cluster did not start: \(result.output)") }
            url = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        deinit {
            guard !keep else { return }
            _ = try? PostgreSQLTestCluster.cluster(["stop", folder + "/cluster"])
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// An immediate stop and a start on the same data (a database restart under load).
        package func restart() throws {
            let result = try PostgreSQLTestCluster.cluster(["restart", folder + "/cluster"])
            guard result.status == 0 else { throw Unavailable(description: "restart failed: \(result.output)") }
        }

        package func stop() throws {
            _ = try PostgreSQLTestCluster.cluster(["stop", folder + "/cluster"])
        }

        package func createDatabase() throws -> String {
            let name = "entitle_test_\(UUID().uuidString.prefix(8).lowercased())"
            let result = try runProcess("psql", [url, "-q", "-c", "CREATE DATABASE \(name)"])
            guard result.status == 0 else { throw Unavailable(description: "CREATE DATABASE failed: \(result.stderr)") }
            return url.replacingOccurrences(of: "/postgres", with: "/\(name)")
        }

        private static func freePort() throws -> Int {
            let result = try runProcess(
                systemPython, ["-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
            guard let port = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw Unavailable(description: "no free port")
            }
            return port
        }
    }
}
