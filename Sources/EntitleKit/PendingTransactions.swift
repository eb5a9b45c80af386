import Foundation

/// Transactions bought while Entitle could not be reached, kept until Entitle has stored them: on
/// disk in the client's `cacheDirectory` (so an app restart loses none), else in memory. Written
/// atomically after every change.
struct PendingTransactions: Sendable {
    private let file: URL?
    private(set) var all: [StoreTransaction]

    init(directory: URL?, appAccountToken: UUID) {
        file = directory?.appendingPathComponent("pending-transactions-\(appAccountToken.uuidString.lowercased()).json")
        // An absent file is an empty queue; an unreadable one too (nothing in it can be read back).
        all = file.flatMap { try? Data(contentsOf: $0) }.flatMap { try? JSONDecoder().decode([StoreTransaction].self, from: $0) } ?? []
    }

    mutating func add(_ transaction: StoreTransaction) throws {
        guard !all.contains(where: { $0.transactionId == transaction.transactionId }) else { return }
        all.append(transaction)
        try write()
    }

    mutating func remove(_ transactionId: String) throws {
        guard all.contains(where: { $0.transactionId == transactionId }) else { return }
        all.removeAll { $0.transactionId == transactionId }
        try write()
    }

    private func write() throws {
        guard let file else { return }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONEncoder().encode(all).write(to: file, options: .atomic)
    }
}
