import AppStore
import Crypto
import Foundation
import JSON

/// `verification`: online checks and the trust anchors. Roots come from `rootCertificates`
/// (files) or, without it, from every `.cer`/`.pem` in `apple-roots/` beside the configuration.
/// Each must be one of Apple's roots unless `allowPrivateRoots` is true.
enum VerificationSettingsParser {
    static func parse(
        _ object: JSONObject?, path: String, folder: String,
        reader: inout ConfigurationReader
    ) -> VerificationSettings {
        var settings = VerificationSettings()
        var files: [String]
        if let object {
            reader.checkMembers(object, allowed: ["onlineChecks", "rootCertificates", "allowPrivateRoots"], path: path)
            settings.onlineChecks = reader.bool(object, "onlineChecks", path: path) ?? false
            settings.allowPrivateRoots = reader.bool(object, "allowPrivateRoots", path: path) ?? false
            files = (reader.stringArray(object, "rootCertificates", path: path) ?? defaultRootFiles(folder))
                .map { ConfigurationLoader.resolve($0, in: folder) }
        } else {
            files = defaultRootFiles(folder)
        }
        for file in files {
            let certificates: [Certificate]
            do { certificates = try Certificate.load(contentsOf: file) } catch {
                reader.problem("\(path).rootCertificates", "\(file) is not a readable DER or PEM certificate")
                continue
            }
            for certificate in certificates {
                if AppleRootCertificates.appleRootName(of: certificate) == nil && !settings.allowPrivateRoots {
                    reader.problem(
                        "\(path).rootCertificates",
                        "\(file) is not an Apple root certificate (SHA-256 "
                            + "\(certificate.sha256Fingerprint)); set verification.allowPrivateRoots for private test chains")
                    continue
                }
                settings.rootCertificates.append(certificate)
            }
            settings.rootFiles.append(file)
        }
        return settings
    }

    /// Every `.cer`, `.der` and `.pem` in `apple-roots/` beside the configuration file, sorted.
    static func defaultRootFiles(_ folder: String) -> [String] {
        let directory = URL(fileURLWithPath: folder).appendingPathComponent("apple-roots")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { [".cer", ".der", ".pem"].contains(where: $0.hasSuffix) }.sorted()
            .map { directory.appendingPathComponent($0).path }
    }
}
