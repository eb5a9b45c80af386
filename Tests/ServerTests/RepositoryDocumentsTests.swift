import Foundation
import TestSupport
import XCTest

/// The documentation lives in the repository: every document a source, test, script or benchmark
/// names exists, every link between the documents reaches a file and a heading that exist, and the
/// README stays a short entry point.
final class RepositoryDocumentsTests: XCTestCase {
    private let folders = ["Sources", "Tests", "Benchmarks", "Scripts", "Fuzz", "Deploy", ".ci"]

    private func files(under folder: String) -> [URL] {
        let root = packageRoot.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true }
    }

    private func text(_ url: URL) -> String? { try? String(contentsOf: url, encoding: .utf8) }

    func testEveryDocumentTheCodeNamesExists() throws {
        // A name ending in .md: a path from the package root (docs/APP_STORE.md), or a bare name
        // found beside the file that names it, at the root or in docs/.
        let reference = try NSRegularExpression(pattern: #"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)\b"#)
        var missing: [String] = []
        var checked = 0
        for folder in folders {
            for file in files(under: folder) {
                guard let text = text(file) else { continue }
                for match in reference.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    let name = String(text[Range(match.range(at: 1), in: text)!])
                    let candidates = [
                        packageRoot.appendingPathComponent(name), file.deletingLastPathComponent().appendingPathComponent(name),
                        packageRoot.appendingPathComponent("docs").appendingPathComponent(name),
                    ]
                    checked += 1
                    if !candidates.contains(where: { FileManager.default.fileExists(atPath: $0.path) }) {
                        missing.append("\(file.path.dropFirst(packageRoot.path.count + 1)) names \(name)")
                    }
                }
            }
        }
        XCTAssertEqual(missing, [], "documents named but not in the repository")
        XCTAssertGreaterThan(checked, 40, "the sources cite the docs")
    }

    /// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
    private func anchor(_ heading: String) -> String {
        let kept = heading.lowercased().unicodeScalars.filter {
            CharacterSet.alphanumerics.contains($0) || $0 == " " || $0 == "-" || $0 == "_"
        }
        return String(String.UnicodeScalarView(kept)).replacingOccurrences(of: " ", with: "-")
    }

    private func anchors(of text: String) -> Set<String> {
        var inFence = false
        var found: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, line.hasPrefix("#") else { continue }
            found.insert(anchor(String(line.drop { $0 == "#" }.drop { $0 == " " })))
        }
        return found
    }

    func testEveryLinkBetweenTheDocumentsArrives() throws {
        let documents =
            [packageRoot.appendingPathComponent("README.md"), packageRoot.appendingPathComponent("CHANGELOG.md")]
            + files(under: "docs").filter { $0.pathExtension == "md" }
        let link = try NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        var broken: [String] = []
        var checked = 0
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? document : document.deletingLastPathComponent().appendingPathComponent(parts[0])
                checked += 1
                guard FileManager.default.fileExists(atPath: file.path) else {
                    broken.append("\(document.lastPathComponent) → \(target): no such file")
                    continue
                }
                if parts.count == 2, file.pathExtension == "md", let linked = self.text(file), !anchors(of: linked).contains(parts[1]) {
                    broken.append("\(document.lastPathComponent) → \(target): no such heading")
                }
            }
        }
        XCTAssertEqual(broken, [])
        XCTAssertGreaterThan(checked, 20)
    }

    func testTheReadmeIsAShortEntryPointToEveryDocument() throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertLessThanOrEqual(readme.split(separator: "\n", omittingEmptySubsequences: false).count, 300)
        for document in files(under: "docs").map(\.lastPathComponent) where document.hasSuffix(".md") || document.hasSuffix(".json") {
            XCTAssert(readme.contains("docs/\(document)"), "the README's map names docs/\(document)")
        }
        XCTAssert(readme.contains("CHANGELOG.md"))
    }
}
