import Foundation
import XCTest

@testable import Application

/// docs/CONFIGURATION.md against the declared sections (`ConfigurationSection`): every member is
/// in the document's example, and every environment variable that overrides one is listed.
final class ConfigurationDocumentTests: XCTestCase {
    private static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/CONFIGURATION.md")

    /// The declared sections' keys and variables, as the document must show them.
    private static let sections: [(path: String, members: [(key: String, environment: String?)])] = [
        (ServerSettings.section.path, ServerSettings.section.members.map { ($0.key, $0.environment) }),
        (StorageMembers.section.path, StorageMembers.section.members.map { ($0.key, $0.environment) }),
        (DeliverySettings.section.path, DeliverySettings.section.members.map { ($0.key, $0.environment) }),
        (ConsoleSettings.section.path, ConsoleSettings.section.members.map { ($0.key, $0.environment) }),
        (MetricsSettings.section.path, MetricsSettings.section.members.map { ($0.key, $0.environment) }),
        (ResponseSigningSettings.section.path, ResponseSigningSettings.section.members.map { ($0.key, $0.environment) }),
        (
            RateLimitSettings.section.path,
            RateLimitSettings.section.members.map { ($0.key, $0.environment) }
                + RateLimit.section.members.map { ($0.key, $0.environment) }
        ),
    ]

    func testTheDocumentListsEveryDeclaredMemberAndVariable() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let example = try XCTUnwrap(text.range(of: "```json").map { text[$0.upperBound...] }?.components(separatedBy: "```").first)
        for section in Self.sections {
            // The section's object up to its closing brace (nested objects included).
            let start = try XCTUnwrap(
                example.components(separatedBy: "\"\(section.path)\":").dropFirst().first,
                "docs/CONFIGURATION.md's example has no \(section.path)")
            var depth = 0
            let object = String(
                start.prefix { character in
                    if character == "{" { depth += 1 }
                    if character == "}" { depth -= 1 }
                    return depth > 0 || character != "}"
                })
            for member in section.members {
                // In the example, or (an optional file or URL the example leaves out) named in the text.
                XCTAssert(
                    object.contains("\"\(member.key)\"") || text.contains("`\(member.key)`"),
                    "docs/CONFIGURATION.md names neither in its example nor in its text \(section.path).\(member.key)")
                if let variable = member.environment {
                    XCTAssert(text.contains("`\(variable)`"), "docs/CONFIGURATION.md does not list \(variable)")
                }
            }
            let shown = Set(object.matches(of: /"([A-Za-z]+)":/).map { String($0.output.1) })
            XCTAssertEqual(
                shown.subtracting(section.members.map(\.key)), [], "the example's \(section.path) has members nobody declared")
        }
    }
}
