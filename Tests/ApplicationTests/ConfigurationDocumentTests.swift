import Foundation
import XCTest

@testable import Application

/// docs/CONFIGURATION.md against the declared sections (`ConfigurationSection`): every member is
/// in the document's example, and every environment variable that overrides one is listed.
final class ConfigurationDocumentTests: XCTestCase {
    private static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/CONFIGURATION.md")

    func testTheDocumentListsEveryDeclaredMemberAndVariable() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let example = try XCTUnwrap(text.range(of: "```json").map { text[$0.upperBound...] }?.components(separatedBy: "```").first)
        let section = ServerSettings.section
        let line = try XCTUnwrap(
            example.components(separatedBy: "\"\(section.path)\":").dropFirst().first?.components(separatedBy: "}").first)
        for member in section.members {
            XCTAssert(line.contains("\"\(member.key)\""), "docs/CONFIGURATION.md's example lacks \(section.path).\(member.key)")
            if let variable = member.environment {
                XCTAssert(text.contains("`\(variable)`"), "docs/CONFIGURATION.md does not list \(variable)")
            }
        }
        let documented = Set(line.matches(of: /"([A-Za-z]+)":/).map { String($0.output.1) })
        XCTAssertEqual(documented, Set(section.members.map(\.key)), "the example's \(section.path) members are the declared ones")
    }
}
