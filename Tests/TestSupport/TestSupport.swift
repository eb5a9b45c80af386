package import Foundation
import XCTest

/// The package root (the folder holding Package.swift), found from this file's path.
package let packageRoot: URL = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
    }
    fatalError("Package.swift not found above \(#filePath)")
}()

/// `../shared/conformance` (or `$ENTITLE_CONFORMANCE_DIR`). When absent (a user's clone) the
/// test is skipped with `XCTSkip`, so it is reported as skipped, never as passed.
package func conformanceDirectory() throws -> URL {
    let environment = ProcessInfo.processInfo.environment["ENTITLE_CONFORMANCE_DIR"]
    let url =
        environment.map { URL(fileURLWithPath: $0) }
        ?? packageRoot.deletingLastPathComponent().appendingPathComponent("shared/conformance")
    guard FileManager.default.fileExists(atPath: url.appendingPathComponent("README.md").path) else {
        throw XCTSkip("the conformance folder (Apple's real signed data) is not at \(url.path)")
    }
    return url
}

/// The built `entitle` executable beside the test bundle.
package var entitleExecutable: URL {
    let products = Bundle.main.bundleURL.deletingLastPathComponent()
    for candidate in [products, Bundle.main.bundleURL, products.deletingLastPathComponent()] {
        let url = candidate.appendingPathComponent("entitle")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return packageRoot.appendingPathComponent(".build/debug/entitle")
}

package struct ProcessResult: Sendable {
    package let status: Int32
    package let stdout: String
    package let stderr: String
    package var stdoutBytes: [UInt8] { Array(stdout.utf8) }
}

/// The test process's environment, read once: a child is given this copy, so Process.run() never
/// copies the live `environ` (it crashed in that copy twice while other threads of the test
/// process were at work).
package let inheritedEnvironment = ProcessInfo.processInfo.environment

/// Runs a program to completion. `executable` is a path or a name looked up in PATH.
@discardableResult
package func runProcess(
    _ executable: String, _ arguments: [String], input: [UInt8]? = nil,
    environment: [String: String]? = nil, currentDirectory: URL? = nil
) throws -> ProcessResult {
    let process = Process()
    if executable.contains("/") {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
    }
    process.environment = environment ?? inheritedEnvironment
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input)) }
    try stdin.fileHandleForWriting.close()
    // Read both pipes concurrently so a chatty child cannot fill one and block.
    let errorData = LockedData()
    let reader = Thread { errorData.set(stderr.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errorData.isSet { usleep(1000) }
    return ProcessResult(
        status: process.terminationStatus,
        stdout: String(decoding: outputData, as: UTF8.self),
        stderr: String(decoding: errorData.value, as: UTF8.self))
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var done = false
    func set(_ value: Data) {
        lock.lock()
        data = value
        done = true
        lock.unlock()
    }
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return done
    }
    var value: Data {
        lock.lock()
        defer { lock.unlock() }
        return data
    }
}

/// A fresh empty folder under the system temporary directory.
package func makeTemporaryDirectory(_ prefix: String = "entitle-test") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

package func writeFile(_ url: URL, _ text: String) throws {
    try Data(text.utf8).write(to: url)
}

package func writeFile(_ url: URL, bytes: [UInt8]) throws {
    try Data(bytes).write(to: url)
}

/// Debian's Python with Debian's `python3-cryptography`: an independent ECDSA/JWS implementation.
package let systemPython = "/usr/bin/python3"

/// The project's test virtualenv (`Scripts/install-dependencies.sh --tests` puts Selenium,
/// schemathesis and openapi-spec-validator there, and it sees Debian's packages too), else
/// Debian's Python.
package var testPython: String {
    let local = packageRoot.appendingPathComponent(".build/test-python/bin/python3").path
    return FileManager.default.isExecutableFile(atPath: local) ? local : systemPython
}

/// `testPython`, when it can import `module`; otherwise the test is skipped, saying how to get it.
package func requireTestPython(_ module: String, for test: String) throws -> String {
    guard (try? runProcess(testPython, ["-c", "import \(module)"]))?.status == 0 else {
        let notice = "\(test) skipped: \(module) is not installed for \(testPython) (Scripts/install-dependencies.sh --tests)"
        print(notice)
        throw XCTSkip(notice)
    }
    return testPython
}

/// Keys.example's files copied into `folder` (the signing key and the example chain its
/// configuration trusts); returns that configuration's text, on port 0.
package func copyExampleConfiguration(to folder: URL) throws -> String {
    let example = packageRoot.appendingPathComponent("Keys.example")
    for name in ["SubscriptionKey_EXAMPLEKEY.p8", "example-chain"] {
        try FileManager.default.copyItem(at: example.appendingPathComponent(name), to: folder.appendingPathComponent(name))
    }
    return try String(contentsOf: example.appendingPathComponent("entitle.json"), encoding: .utf8)
        .replacingOccurrences(of: #""port": 8080"#, with: #""port": 0"#)
}
