import Foundation

/// Pieces of the statements that read several tables at once as one result: every column as
/// text (the tables' types differ) and each part padded with NULLs to the widest part's width.
enum PostgreSQLText {
    /// The widest part: a transaction's columns.
    static let width = 21

    /// `a, b` → `a::text, b::text`.
    static func columns(_ list: String) -> String {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) + "::text" }.joined(separator: ", ")
    }

    /// The NULLs after a part of `used` columns.
    static func padding(_ used: Int) -> String { Array(repeating: "NULL", count: width - used).joined(separator: ", ") }
}
