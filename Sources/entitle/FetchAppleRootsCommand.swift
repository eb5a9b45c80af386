import AppStore
import Crypto
import Foundation
import HTTPClient

/// `entitle fetch-apple-roots`: downloads Apple's root certificates over HTTPS and keeps only
/// files whose SHA-256 is the one the source knows for that root.
enum FetchAppleRootsCommand {
    static let usage = "entitle fetch-apple-roots [--out DIR] [--base-url URL] [--ca-file PEM]"

    /// Apple's certificate authority site: (file name, URL, the name the fingerprint table gives).
    static let roots: [(file: String, url: String, name: String)] = [
        ("AppleRootCA-G3.cer", "https://www.apple.com/certificateauthority/AppleRootCA-G3.cer", "Apple Root CA - G3"),
        ("AppleRootCA-G2.cer", "https://www.apple.com/certificateauthority/AppleRootCA-G2.cer", "Apple Root CA - G2"),
        ("AppleIncRootCertificate.cer", "https://www.apple.com/appleca/AppleIncRootCertificate.cer", "Apple Root CA"),
    ]

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["out", "base-url", "ca-file"])
        let folder = URL(fileURLWithPath: arguments["out"] ?? "apple-roots")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = HTTPClient.Configuration()
        configuration.caFile = arguments["ca-file"]
        configuration.maxResponseBytes = 64 * 1024
        let client = HTTPClient(configuration: configuration)
        var kept = 0
        for root in roots {
            // --base-url replaces Apple's site (a mirror, or a local stand-in in tests).
            let url = arguments["base-url"].map { $0.hasSuffix("/") ? $0 + root.file : $0 + "/" + root.file } ?? root.url
            do {
                let response = try client.send(HTTPClientRequest(url: url))
                guard response.status == 200 else {
                    Output.error("\(root.file): \(url) answered HTTP \(response.status)")
                    continue
                }
                let certificate = try Certificate(derEncoded: response.body)
                guard AppleRootCertificates.appleRootName(of: certificate) == root.name else {
                    Output.error("\(root.file): SHA-256 \(certificate.sha256Fingerprint) is not \(root.name)'s; not saved")
                    continue
                }
                try Data(response.body).write(to: folder.appendingPathComponent(root.file), options: .atomic)
                Output.line("\(root.file): \(root.name), SHA-256 \(certificate.sha256Fingerprint), saved")
                kept += 1
            } catch {
                Output.error("\(root.file): \(error)")
            }
        }
        Output.line("\(kept) of \(roots.count) Apple roots in \(folder.path)")
        return kept == roots.count ? 0 : 1
    }
}
