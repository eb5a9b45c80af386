import Foundation

/// Pieces of the statements that read several tables at once as one result: every column as
/// text (the tables' types differ) and each part padded with NULLs to the widest part's width.
enum PostgreSQLText {
    /// The widest part: a transaction's columns.
    static let width = count(PostgreSQLFactStore.transactionColumns)

    /// The columns of a list `a, b, c`.
    static func count(_ list: String) -> Int { list.split(separator: ",").count }

    /// `a, b` → `a::text, b::text`.
    static func columns(_ list: String) -> String {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) + "::text" }.joined(separator: ", ")
    }

    /// The NULLs after a part of `used` columns.
    static func padding(_ used: Int) -> String { Array(repeating: "NULL", count: width - used).joined(separator: ", ") }

    /// The NULLs after a part made of the columns of `list`.
    static func padding(after list: String) -> String { padding(count(list)) }
}
